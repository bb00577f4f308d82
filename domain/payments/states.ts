// The payment state machine, exactly as the contract gives it (States and transitions > Payment).
// There is no REST write that moves a payment: the table is what the services and, later, the
// payment workflow obey, and what `next_states` describes to a reader.

export const PAYMENT_STATES = [
  'draft',
  'pending',
  'authorised',
  'paid',
  'partly_refunded',
  'refunded',
  'failed',
  'expired',
  'cancelled',
] as const;
export type PaymentState = (typeof PAYMENT_STATES)[number];

/** The contract's table: the states that can follow each state. */
export const NEXT_STATES: { readonly [S in PaymentState]: readonly PaymentState[] } = {
  draft: ['pending', 'cancelled', 'expired'],
  pending: ['authorised', 'paid', 'failed', 'expired', 'cancelled'],
  authorised: ['paid', 'failed', 'expired', 'cancelled'],
  paid: ['partly_refunded', 'refunded'],
  partly_refunded: ['partly_refunded', 'refunded'],
  failed: ['pending', 'cancelled'],
  expired: [],
  cancelled: [],
  refunded: [],
};

/** Open states: the payment can still be paid (or expire). */
export const OPEN_STATES = ['draft', 'pending', 'authorised'] as const satisfies readonly PaymentState[];
/** Settled states: money was collected (and perhaps partly or wholly given back). */
export const SETTLED_STATES = ['paid', 'partly_refunded', 'refunded'] as const satisfies readonly PaymentState[];

export const isPaymentState = (s: string): s is PaymentState => (PAYMENT_STATES as readonly string[]).includes(s);
export const nextStates = (state: PaymentState): readonly PaymentState[] => NEXT_STATES[state];
export const canMove = (from: PaymentState, to: PaymentState): boolean => NEXT_STATES[from].includes(to);
export const isOpen = (state: PaymentState): boolean => (OPEN_STATES as readonly string[]).includes(state);
export const isSettled = (state: PaymentState): boolean => (SETTLED_STATES as readonly string[]).includes(state);
export const isTerminal = (state: PaymentState): boolean => NEXT_STATES[state].length === 0;

/**
 * The list's `state` filter (Endpoints > Payments): trimmed and lower-cased; `open` is the open
 * states, a state name is that state, `all` and any value the contract does not know leave the
 * list unfiltered (an unrecognised filter is not an error). Answers the states kept, or null for all.
 */
export function stateFilter(raw: string | null | undefined): readonly PaymentState[] | null {
  const s = (raw ?? '').trim().toLowerCase();
  if (s === 'open') return OPEN_STATES;
  return isPaymentState(s) ? [s] : null;
}

/**
 * A refund payment holds its amount against its parent's refundable headroom while it can still
 * settle (open or paid); a refund that failed, expired or was cancelled gives it back, and one that
 * goes from failed to pending again takes it again (guarded, like the first time).
 */
export const refundHolds = (state: PaymentState): boolean => isOpen(state) || state === 'paid';

/**
 * A refund is cancelled only while it is in draft: its workflow moves it to pending before it asks
 * the provider for the reversal, so a draft refund was surely never sent, and one past draft may
 * already be reversed (Stripe, likewise, cancels only a refund it has not processed). The contract's
 * pending → cancelled and failed → cancelled stay a payment's moves.
 */
export const refundCancellable = (state: PaymentState): boolean => state === 'draft';

/** The states that can follow a payment's, as next_states shows them: a refund cannot be refunded, nor cancelled once sent. */
export function nextStatesOf(state: PaymentState, isRefund: boolean): readonly PaymentState[] {
  if (!isRefund) return NEXT_STATES[state];
  if (isSettled(state)) return [];
  return refundCancellable(state) ? NEXT_STATES[state] : NEXT_STATES[state].filter((s) => s !== 'cancelled');
}
