import type { WorkflowStarter } from '../starter.js';
import type { refundResultSignal } from './refund.js';

export interface RefundKey {
  accountId: number;
  refundId: string;
}

/** `refund/<account>/<refund uuid>`: a refund is a payment, but its workflow is not the payment's, and its id says so. */
export const refundWorkflowId = (accountId: number, refundId: string) => `refund/${accountId}/${refundId}`;

/**
 * One workflow per refund, started once after its request committed: a second start is refused,
 * whether the first is running or closed, so a refund is never sent to the provider by two workflows.
 * ResourceType is payment, as for the payment workflow (a refund is a payment of the contract), so
 * an operator finds every workflow of a payment's family by it and a refund's by its UUID.
 */
export const refundStarter: WorkflowStarter<
  'refundWorkflow',
  RefundKey,
  'taskQueue',
  Record<never, never>,
  { refundResult: typeof refundResultSignal }
> = {
  workflowType: 'refundWorkflow',
  taskQueue: 'taskQueue',
  workflowId: (k) => refundWorkflowId(k.accountId, k.refundId),
  searchAttributes: (k) => ({ AccountId: String(k.accountId), ResourceId: k.refundId, ResourceType: 'payment' }),
  workflowIdReusePolicy: 'REJECT_DUPLICATE',
  workflowIdConflictPolicy: 'FAIL',
  signals: { refundResult: 'refundResult' },
};
