import type { WorkflowStarter } from '../starter.js';
import type { paymentCancelledSignal, paymentResultSignal } from './payment.js';

export interface PaymentKey {
  accountId: number;
  paymentId: string;
}

/** `payment/<account>/<payment uuid>`. */
export const paymentWorkflowId = (accountId: number, paymentId: string) => `payment/${accountId}/${paymentId}`;

/**
 * One workflow per payment, started once after the request committed: a second start (a retried
 * request, a reconciler) is refused, whether the first is running or closed, so a payment is never
 * pushed to its payer by two workflows.
 */
export const paymentStarter: WorkflowStarter<
  'paymentWorkflow',
  PaymentKey,
  'taskQueue',
  Record<never, never>,
  { paymentResult: typeof paymentResultSignal; paymentCancelled: typeof paymentCancelledSignal }
> = {
  workflowType: 'paymentWorkflow',
  taskQueue: 'taskQueue',
  workflowId: (k) => paymentWorkflowId(k.accountId, k.paymentId),
  searchAttributes: (k) => ({ AccountId: String(k.accountId), ResourceId: k.paymentId, ResourceType: 'payment' }),
  workflowIdReusePolicy: 'REJECT_DUPLICATE',
  workflowIdConflictPolicy: 'FAIL',
  signals: { paymentResult: 'paymentResult', paymentCancelled: 'paymentCancelled' },
};
