import type { ScheduledWorkflowStarter, WorkflowStarter } from '../starter.js';

/**
 * The one Temporal Schedule of payment reconciliation, for the configured provider and every
 * account: the provider's report covers its whole account (one shortcode for all our accounts), so
 * one pass reads it once. A pass still running at the next tick is skipped by the overlap policy.
 */
export const PAYMENT_RECONCILIATION_SCHEDULE_ID = 'payment-reconciliation';

export interface PaymentReconciliationKey {
  /** An operator's run for one account; absent for every account's. */
  accountId?: number;
  /** `scheduled` for the schedule's passes; a run-now's own token (unique per run), e.g. a uuid. */
  runId: string;
}

/** `payment-reconciliation/scheduled-<time>` for the schedule's passes; `payment-reconciliation[/<account>]/<run>` for a run-now. */
export const paymentReconciliationWorkflowId = (k: PaymentReconciliationKey) =>
  k.accountId === undefined ? `payment-reconciliation/${k.runId}` : `payment-reconciliation/${k.accountId}/${k.runId}`;

const searchAttributes = (k: PaymentReconciliationKey) => ({
  AccountId: k.accountId === undefined ? 'system' : String(k.accountId),
  ResourceId: PAYMENT_RECONCILIATION_SCHEDULE_ID,
  ResourceType: 'payment_reconciliation',
});

/** The action of the schedule: `payment-reconciliation/scheduled`, to which Temporal appends each action's time. */
export const scheduledPaymentReconciliationStarter: ScheduledWorkflowStarter<'paymentReconciliationWorkflow', PaymentReconciliationKey> = {
  workflowType: 'paymentReconciliationWorkflow',
  taskQueue: 'taskQueue',
  workflowId: paymentReconciliationWorkflowId,
  searchAttributes,
};

/** A run started now by an operator (or a test), over the period it names: once per run id. */
export const paymentReconciliationRunStarter: WorkflowStarter<'paymentReconciliationWorkflow', PaymentReconciliationKey> = {
  workflowType: 'paymentReconciliationWorkflow',
  taskQueue: 'taskQueue',
  workflowId: paymentReconciliationWorkflowId,
  searchAttributes,
  workflowIdReusePolicy: 'REJECT_DUPLICATE',
  workflowIdConflictPolicy: 'FAIL',
};
