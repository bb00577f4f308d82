import type { ScheduledWorkflowStarter, WorkflowStarter } from '../starter.js';

export interface OperationRunKey {
  accountId: number;
  runId: string;
}

/** `operation/<account>/<run id>`. */
export const operationRunWorkflowId = (accountId: number, runId: string) => `operation/${accountId}/${runId}`;

/** A run the API recorded (queued): started once; the relay's late start of the same run is a no-op. */
export const operationRunStarter: WorkflowStarter<'operationRunWorkflow', OperationRunKey> = {
  workflowType: 'operationRunWorkflow',
  taskQueue: 'taskQueue',
  workflowId: (k) => operationRunWorkflowId(k.accountId, k.runId),
  searchAttributes: (k) => ({ AccountId: String(k.accountId), ResourceId: k.runId, ResourceType: 'operation_run' }),
  workflowIdReusePolicy: 'REJECT_DUPLICATE',
  workflowIdConflictPolicy: 'FAIL',
};

export interface ScheduledOperationKey {
  accountId: number;
  /** The automation schedule's uuid. */
  scheduleId: string;
}

/**
 * The action of an automation schedule's Temporal Schedule: `operation/<account>/schedule-<uuid>`,
 * to which Temporal appends each action's time. The schedule's overlap policy stands in for the id
 * policies; every run records itself under a new run id.
 */
export const scheduledOperationRunStarter: ScheduledWorkflowStarter<'operationRunWorkflow', ScheduledOperationKey> = {
  workflowType: 'operationRunWorkflow',
  taskQueue: 'taskQueue',
  workflowId: (k) => operationRunWorkflowId(k.accountId, `schedule-${k.scheduleId}`),
  searchAttributes: (k) => ({ AccountId: String(k.accountId), ResourceId: k.scheduleId, ResourceType: 'schedule' }),
};
