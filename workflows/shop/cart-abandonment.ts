import { condition, continueAsNew, defineSignal, proxyActivities, setHandler, workflowInfo } from '@temporalio/workflow';
import type { CartTimerActivities } from '../../activities/shop/cart-abandonment.js';

// One basket's quiet-period timer (docs/decisions.md, "Shop links, baskets and the shop page"):
// every change on the basket signals `activity`, which starts the quiet period again. When it runs
// out, the basket is judged against the database (the last activity recorded there wins over the
// timer): a basket opened from a chat and left with items becomes abandoned (cart.abandoned). A
// basket that never became an order expires once it has been quiet for the expiry period; an order
// (signal `closed`) ends the timer.

export interface CartAbandonmentInput {
  accountId: number;
  cartId: number;
  quietSeconds: number;
  expireSeconds: number;
  /** Carried over continue-as-new: the quiet check already ran since the last activity. */
  quietChecked?: boolean;
}

export const activitySignal = defineSignal<[]>('activity');
export const closedSignal = defineSignal<[]>('closed');

export type CartTimerOutcome = 'ordered' | 'expired' | 'gone';

const acts = proxyActivities<CartTimerActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '1 minute', backoffCoefficient: 2 },
});

/** Signals a run takes before it hands over to a fresh run (keeps the history short for a busy basket). */
const SIGNALS_PER_RUN = 500;

export async function cartAbandonmentWorkflow(input: CartAbandonmentInput): Promise<CartTimerOutcome> {
  let bumps = 0;
  let closed = false;
  setHandler(activitySignal, () => void bumps++);
  setHandler(closedSignal, () => void (closed = true));
  let quietChecked = input.quietChecked ?? false;
  let waitSeconds = quietChecked ? Math.max(1, input.expireSeconds - input.quietSeconds) : input.quietSeconds;
  for (;;) {
    const seen = bumps;
    const woken = await condition(() => closed || bumps !== seen, waitSeconds * 1000);
    if (closed) return 'ordered';
    if (woken) {
      quietChecked = false;
      waitSeconds = input.quietSeconds;
      if (bumps >= SIGNALS_PER_RUN || workflowInfo().continueAsNewSuggested)
        await continueAsNew<typeof cartAbandonmentWorkflow>({ ...input, quietChecked: false });
      continue;
    }
    const phase = quietChecked ? 'expiry' : 'quiet';
    const verdict = await acts.judgeQuietCart({
      accountId: input.accountId,
      cartId: input.cartId,
      phase,
      quietSeconds: input.quietSeconds,
      expireSeconds: input.expireSeconds,
    });
    if (verdict.kind === 'final') return verdict.outcome;
    if (verdict.kind === 'wait') {
      // Activity the database saw but no signal brought (a signal lost after a commit): wait out the rest.
      waitSeconds = Math.max(1, verdict.seconds);
      continue;
    }
    quietChecked = true;
    waitSeconds = Math.max(1, input.expireSeconds - input.quietSeconds);
  }
}
