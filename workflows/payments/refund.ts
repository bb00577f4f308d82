import { ActivityFailure, condition, defineQuery, defineSignal, proxyActivities, setHandler, sleep } from '@temporalio/workflow';
import { resultInbox, type ResultsSeen } from './results.js';
import type { PaymentActivities, PaymentMoveInput, PaymentMoved } from '../../activities/payments/payment.js';
import type { RefundActivities, ReversalOutcome } from '../../activities/payments/refund.js';

// One refund's life at the provider (issue 26 point 4; docs/payments.md, The refund workflow). A
// refund is a payment of its own whose amount was taken from its parent's refundable headroom when
// it was requested; this workflow moves it draft → pending, asks the provider to reverse that much
// of the parent's receipt, and waits for the reversal's result (a signal from the callback ingress,
// deduplicated like the payment's): refunded → paid (recordMove then moves the parent to
// partly_refunded or refunded and writes the ledger), failed → failed (the headroom goes back).
//
// Daraja keeps no idempotency key, so a reversal is sent at most once unless the provider answered
// that it took nothing (an error envelope: sent again on a backoff). One whose answer was lost may
// have been made: it is never sent again, and the workflow waits for its result, which names the
// refund by the ?ref= of our result URL. A result that never comes is bounded by a durable timer: the
// refund then expires (headroom back) with last_error saying the operator must check at the provider.

/** The payment states, as the workflow sees them (the bundle imports no services). */
type PaymentState = PaymentMoveInput['to'];

export interface RefundInput {
  accountId: number;
  refundId: string;
  reference: string;
  /** The payment it refunds. */
  refundOf: string;
  amountMinor: number;
  currency: string;
  reason: string | null;
  /** The provider key the refund stores (its parent's); null: the configured one. */
  provider: string | null;
  /** The refund's state when its request committed (draft). */
  state: PaymentState;
}

/** A verified reversal result, in our words, as the ingress forwards it. */
export interface RefundResultSignal {
  /** The provider's event id (Daraja has none: the reversal's id and outcome), the dedupe key. */
  eventId: string;
  providerRef: string;
  outcome: 'refunded' | 'failed';
  providerCode: string | null;
  message: string;
  /** The provider's transaction id of the reversal; null when it failed. */
  receipt: string | null;
  /** What the provider says it reversed, minor units; null when it said nothing. */
  amountMinor: number | null;
}

export interface RefundWorkflowState extends ResultsSeen {
  refundId: string;
  reference: string;
  /** The refund's state as the last recorded move left it. */
  state: PaymentState;
  providerRef: string | null;
  /** sending: to the provider; waiting: for its result; settled: lingering for late results; done. */
  phase: 'sending' | 'waiting' | 'settled' | 'done';
  /** Reversal requests made (more than one only after the provider answered it took nothing). */
  sends: number;
  /** The last request's answer: acknowledged, refused, unavailable, or unknown (lost: the reversal may have been made). */
  sent: ReversalOutcome['kind'] | null;
  /** Moves recordMove refused (recorded on the timeline there). */
  refusals: string[];
  /** The reversal's own receipt at the provider, once it is refunded. */
  receipt: string | null;
}

export const refundResultSignal = defineSignal<[RefundResultSignal]>('refundResult');
export const refundStateQuery = defineQuery<RefundWorkflowState>('state');

/** Reversal requests the provider answered with "not taken" (503, throttled) are sent again on this backoff, this many times in all. */
export const SEND_RETRY_FIRST_MS = 10_000;
export const SEND_RETRY_MAX_MS = 10 * 60_000;
export const MAX_SENDS = 8;
/**
 * How long a sent reversal's result is awaited. Daraja answers every reversal it queued, by its
 * result or by its QueueTimeOutURL (a failed result), within minutes; a day is far past that, so a
 * refund still without a result then is one whose news was lost, and it expires.
 */
export const RESULT_WAIT_MS = 24 * 60 * 60_000;
/** How long a settled refund's workflow still takes results (a late or replayed one is recorded, or dropped as seen). */
export const LINGER_MS = 60 * 60_000;

const OPEN: readonly PaymentState[] = ['draft', 'pending', 'authorised'];

// Database moves and reads: short, retried until they land (recordMove is one transaction; a refusal is an answer).
const db = proxyActivities<Pick<PaymentActivities, 'movePayment'> & Pick<RefundActivities, 'refundReceipt'>>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' },
});
// The reversal: one attempt per try, never retried by Temporal. A try that fails or times out as an
// activity (the worker died mid-call) may have reached the provider, so it counts as unknown.
const provider = proxyActivities<Pick<RefundActivities, 'reverseRefund'>>({
  startToCloseTimeout: '1 minute',
  retry: { maximumAttempts: 1 },
});

export async function refundWorkflow(input: RefundInput): Promise<RefundWorkflowState> {
  const s: RefundWorkflowState = {
    refundId: input.refundId,
    reference: input.reference,
    state: input.state,
    providerRef: null,
    phase: 'sending',
    sends: 0,
    sent: null,
    seen: [],
    duplicates: 0,
    refusals: [],
    receipt: null,
  };
  setHandler(refundStateQuery, () => s);
  const inbox = resultInbox(s, refundResultSignal);
  const isOpen = () => OPEN.includes(s.state);

  const move = async (to: PaymentState, source: string, message: string | null, extra: Partial<PaymentMoveInput> = {}) => {
    const out: PaymentMoved = await db.movePayment({ accountId: input.accountId, payment: input.refundId, to, source, message, ...extra });
    s.state = out.state;
    if (!out.applied) s.refusals.push(out.refusal);
    return out.applied;
  };

  const apply = async (r: RefundResultSignal) => {
    if (!s.providerRef) s.providerRef = r.providerRef;
    const said = [r.message, r.providerCode].filter(Boolean).join(' · ');
    if (r.outcome === 'refunded') {
      if (r.receipt) s.receipt = r.receipt;
      const differs = r.amountMinor !== null && r.amountMinor !== input.amountMinor;
      const words = differs ? `${said} (the provider reports ${r.amountMinor} minor units reversed)` : said;
      await move('paid', 'provider', words || null, { providerRef: r.providerRef, ...(r.receipt ? { receipt: r.receipt } : {}) });
    } else {
      await move('failed', 'provider', said || null, { providerRef: r.providerRef, lastError: said || r.message });
    }
  };

  // 1. Marked as handed to the provider before anything is sent, so a refund still in draft was
  // surely never sent (an operator may cancel it). A refund no longer in draft (cancelled before its
  // workflow ran) is not sent at all.
  if (s.state === 'draft') await move('pending', 'workflow', 'Reversal requested at the provider.');
  if (s.state !== 'pending') {
    s.phase = 'done';
    return s;
  }

  // 2. The reversal.
  const receipt = await db.refundReceipt({ accountId: input.accountId, refundId: input.refundId });
  let retryIn = SEND_RETRY_FIRST_MS;
  for (;;) {
    s.sends++;
    let out: ReversalOutcome;
    try {
      out = await provider.reverseRefund({
        accountId: input.accountId,
        refundId: input.refundId,
        reference: input.reference,
        amountMinor: input.amountMinor,
        currency: input.currency,
        reason: input.reason ?? `Refund ${input.reference}`,
        provider: input.provider,
        receipt,
      });
    } catch (err) {
      if (!(err instanceof ActivityFailure)) throw err;
      out = { kind: 'unknown', code: 'activity_failed', message: err.cause?.message ?? err.message };
    }
    s.sent = out.kind;
    if (out.kind === 'acknowledged') {
      s.providerRef = out.providerRef;
      break;
    }
    if (out.kind === 'refused') {
      await move('failed', 'provider', out.message, { lastError: `${out.code}: ${out.message}` });
      break;
    }
    if (out.kind === 'unknown') break;
    if (s.sends >= MAX_SENDS) {
      await move('failed', 'provider', out.message, {
        lastError: `${out.code}: ${out.message} (the provider took none of ${s.sends} reversal requests)`,
      });
      break;
    }
    await sleep(retryIn);
    retryIn = Math.min(SEND_RETRY_MAX_MS, retryIn * 2);
  }

  // 3. The result, bounded.
  s.phase = 'waiting';
  const until = Date.now() + RESULT_WAIT_MS;
  while (isOpen()) {
    const next = inbox.shift();
    if (next) {
      await apply(next);
      continue;
    }
    const left = until - Date.now();
    if (left <= 0) {
      const why =
        s.sent === 'unknown'
          ? 'The provider never answered the reversal request, and no result came'
          : 'The provider took the reversal, and no result came';
      const lastError = `no_result: ${why} within ${RESULT_WAIT_MS / 3_600_000} hours; the reversal may have been made: check at the provider before refunding again.`;
      await move('expired', 'expiry', lastError, { lastError });
      break;
    }
    await condition(() => inbox.length > 0, left);
  }

  // 4. Settled: late and replayed results are still taken for a while, so one that contradicts the
  // outcome is recorded on the timeline as a refused move, not lost.
  s.phase = 'settled';
  const lingerUntil = Date.now() + LINGER_MS;
  for (;;) {
    const left = lingerUntil - Date.now();
    if (left <= 0) break;
    if (!(await condition(() => inbox.length > 0, left))) break;
    await apply(inbox.shift()!);
  }
  s.phase = 'done';
  return s;
}
