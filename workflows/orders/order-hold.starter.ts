import type { WorkflowStarter } from '../starter.js';
import type { orderMovedOnSignal } from './order-hold.js';

export interface OrderHoldKey {
  accountId: number;
  orderId: number;
}

/** `order-hold/<account>/<order>`. */
export const orderHoldWorkflowId = (accountId: number, orderId: number) => `order-hold/${accountId}/${orderId}`;

/**
 * The TTL of one pending order's holds, started once per order (a repeated start, by the reconciler
 * after a lost acknowledgement, is refused: the timer exists or has run).
 */
export const orderHoldStarter: WorkflowStarter<
  'orderHoldWorkflow',
  OrderHoldKey,
  'taskQueue',
  Record<never, never>,
  { orderMovedOn: typeof orderMovedOnSignal }
> = {
  workflowType: 'orderHoldWorkflow',
  taskQueue: 'taskQueue',
  workflowId: (k) => orderHoldWorkflowId(k.accountId, k.orderId),
  searchAttributes: (k) => ({ AccountId: String(k.accountId), ResourceId: String(k.orderId), ResourceType: 'order_hold' }),
  workflowIdReusePolicy: 'REJECT_DUPLICATE',
  workflowIdConflictPolicy: 'FAIL',
  signals: { orderMovedOn: 'orderMovedOn' },
};
