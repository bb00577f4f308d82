import type { WorkflowStarter } from '../starter.js';
import type { activitySignal, closedSignal } from './cart-abandonment.js';

export interface CartTimerKey {
  accountId: number;
  cartId: number;
}

/** `cart-abandonment/<account>/<cart>`: one quiet-period timer per basket, for its whole life. */
export const cartAbandonmentWorkflowId = (accountId: number, cartId: number) => `cart-abandonment/${accountId}/${cartId}`;

/**
 * Started with the basket (after its commit) and signalled on every change of it with signal-with-
 * start, so a timer that could not be started then is started by the next change. A closed timer
 * (ordered, expired) is never started again.
 */
export const cartAbandonmentStarter: WorkflowStarter<
  'cartAbandonmentWorkflow',
  CartTimerKey,
  'taskQueue',
  Record<never, never>,
  { activity: typeof activitySignal; closed: typeof closedSignal }
> = {
  workflowType: 'cartAbandonmentWorkflow',
  taskQueue: 'taskQueue',
  workflowId: (k) => cartAbandonmentWorkflowId(k.accountId, k.cartId),
  searchAttributes: (k) => ({ AccountId: String(k.accountId), ResourceId: String(k.cartId), ResourceType: 'cart' }),
  workflowIdReusePolicy: 'REJECT_DUPLICATE',
  workflowIdConflictPolicy: 'USE_EXISTING',
  signals: { activity: 'activity', closed: 'closed' },
};
