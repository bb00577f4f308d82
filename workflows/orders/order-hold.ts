import { condition, defineQuery, defineSignal, proxyActivities, setHandler } from '@temporalio/workflow';
import type { OrderHoldActivities, ExpiredHolds } from '../../activities/orders/order-hold.js';

// The TTL of a pending order's stock holds (States > Order: "pending order unanswered for
// reservation_ttl_hours releases the hold on its own"): one durable timer per order, cut short when
// the order moves on. Expiry is a guarded activity (held → expired only), so a confirmation racing
// the timer has exactly one winner and a missed signal only lets the timer fire into a no-op.

export interface OrderHoldInput {
  accountId: number;
  orderId: number;
  /** ISO 8601: when the holds lapse (the order's hold_expires_at). */
  expiresAt: string;
}

export interface OrderHoldState {
  orderId: number;
  expiresAt: string;
  /** waiting: the timer runs; moved_on: a status change resolved the holds first; expired: the timer released what was still held. */
  phase: 'waiting' | 'expiring' | 'moved_on' | 'expired';
  /** The status the order moved to (moved_on). */
  movedTo: string | null;
  /** What the expiry released (expired): holds and units; zero when the order had moved on unseen. */
  released: ExpiredHolds | null;
}

/** The order's status changed away from pending (sent after that change committed). */
export const orderMovedOnSignal = defineSignal<[{ status: string }]>('orderMovedOn');
/** The hold as this workflow sees it. */
export const orderHoldQuery = defineQuery<OrderHoldState>('hold');

// One short transaction; retried until it lands (the guard makes a repeat a no-op).
const acts = proxyActivities<OrderHoldActivities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' },
});

export async function orderHoldWorkflow(input: OrderHoldInput): Promise<OrderHoldState> {
  const state: OrderHoldState = { orderId: input.orderId, expiresAt: input.expiresAt, phase: 'waiting', movedTo: null, released: null };
  setHandler(orderHoldQuery, () => state);
  setHandler(orderMovedOnSignal, ({ status }) => {
    if (state.phase !== 'waiting') return;
    // Back to pending holds nothing again (docs/decisions.md): the timer keeps running for nothing.
    if (status === 'pending') return;
    state.phase = 'moved_on';
    state.movedTo = status;
  });
  const wait = Math.max(0, Date.parse(input.expiresAt) - Date.now());
  const movedOn = await condition(() => state.phase === 'moved_on', wait);
  if (movedOn) return state;
  state.phase = 'expiring';
  state.released = await acts.expireOrderHolds({ accountId: input.accountId, orderId: input.orderId });
  state.phase = 'expired';
  return state;
}
