import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Config } from '../../config.js';
import type { Logger } from '../../logger.js';
import { startOptions } from '../../temporal/starters.js';
import { cartAbandonmentStarter } from '../../workflows/shop/cart-abandonment.starter.js';
import { emitEvent } from '../webhooks/index.js';
import { cartEventFields, cartView } from './carts.js';
import { abandonCart, cartToJudge, expireCart } from './store.js';

// The basket's quiet-period timer as the service drives it (start, activity, closed), and the
// judgement its workflow asks for when a period runs out.

export interface TimerDeps {
  temporal: Client;
  config: Pick<Config, 'taskQueue' | 'cartQuietSeconds' | 'cartExpireSeconds' | 'publicBaseUrl'>;
  log: Logger;
}

/**
 * Tells the basket's timer about activity (or that it became an order), starting it when it is not
 * running: signal-with-start, so a timer lost at creation is started by the next change. Never fails
 * the caller: the basket is committed, and the database's last_activity_at is what the timer
 * trusts in the end.
 */
export async function nudgeCartTimer(deps: TimerDeps, accountId: number, cartId: number, signal: 'activity' | 'closed'): Promise<void> {
  const key = { accountId, cartId };
  const input = {
    accountId,
    cartId,
    quietSeconds: deps.config.cartQuietSeconds,
    expireSeconds: Math.max(deps.config.cartExpireSeconds, deps.config.cartQuietSeconds + 1),
  };
  try {
    await deps.temporal.workflow.signalWithStart(cartAbandonmentStarter.workflowType, {
      ...startOptions(deps.config, cartAbandonmentStarter, key, [input]),
      signal: cartAbandonmentStarter.signals![signal],
      signalArgs: [],
    });
  } catch (err) {
    // A closed timer (ordered or expired basket) is never started again: nothing left to time.
    if (err instanceof WorkflowExecutionAlreadyStartedError) return;
    deps.log.warn({ err, cartId }, 'cart timer not reached; the next change of the basket starts it');
  }
}

export type QuietVerdict =
  { kind: 'final'; outcome: 'ordered' | 'expired' | 'gone' } | { kind: 'wait'; seconds: number } | { kind: 'checked' };

/**
 * A period of the timer ran out. `quiet`: a basket opened from a chat (conversation_id) that holds
 * items and is still open or sent becomes abandoned and cart.abandoned is emitted with it. `expiry`:
 * a basket that never became an order becomes expired. Activity recorded since (last_activity_at)
 * answers how much longer to wait instead.
 */
export async function judgeQuietCart(
  em: EntityManager,
  baseUrl: string,
  input: { accountId: number; cartId: number; phase: 'quiet' | 'expiry'; quietSeconds: number; expireSeconds: number },
): Promise<QuietVerdict> {
  return em.transactional(async (tx) => {
    const cart = await cartToJudge(tx, input.accountId, input.cartId);
    if (!cart) return { kind: 'final', outcome: 'gone' };
    if (cart.status === 'ordered' || cart.status === 'expired') return { kind: 'final', outcome: cart.status };
    const idle = Number(cart.idle);
    const period = input.phase === 'quiet' ? input.quietSeconds : input.expireSeconds;
    if (idle < period) return { kind: 'wait', seconds: Math.ceil(period - idle) };
    if (input.phase === 'expiry') {
      await expireCart(tx, cart.id);
      return { kind: 'final', outcome: 'expired' };
    }
    if (cart.conversation_id !== null && Number(cart.items) > 0 && (cart.status === 'open' || cart.status === 'sent')) {
      const row = await abandonCart(tx, cart.id);
      await emitEvent(tx, input.accountId, 'cart.abandoned', cartEventFields(await cartView(tx, baseUrl, row)));
    }
    return { kind: 'checked' };
  });
}
