import type { WorkflowIdConflictPolicy, WorkflowIdReusePolicy } from '@temporalio/workflow';
import type * as workflows from './index.js';

// The shape of a typed starter: how one workflow is started, declared beside it as pure data (and
// small pure functions of its business key). Types only: starter files import this with
// `import type`, so no starter ever pulls @temporalio/client or Node modules into the workflow
// bundle. temporal/starters.ts applies a starter (start, update-with-start, schedule action).

/** Every workflow the worker registers (workflows/index.ts), by its workflow type name. */
export type WorkflowName = keyof typeof workflows;
/** The arguments of a workflow, taken from its function. */
export type WorkflowArgs<N extends WorkflowName> = Parameters<(typeof workflows)[N]>;

/** Config settings that hold a task queue (provider queues are derived from `taskQueue`). */
export type TaskQueueSetting = 'taskQueue' | 'webhookTaskQueue';

/** AccountId, ResourceId and ResourceType (temporal/search-attributes.ts), as plain strings. */
export interface StarterSearchAttributes {
  AccountId: string;
  ResourceId: string;
  ResourceType: string;
}

/** An update a caller may send with the start (update-with-start), named by its definition's type. */
export interface UpdateRef {
  type: 'update';
  name: string;
}

/** A signal a caller may send to the running workflow, named by its definition's type. */
export interface SignalRef {
  type: 'signal';
  name: string;
}

/** What a Temporal Schedule needs to start a workflow: the id policies do not apply there. */
export interface ScheduledWorkflowStarter<N extends WorkflowName, K, Q extends TaskQueueSetting = 'taskQueue'> {
  workflowType: N;
  /** The config setting naming the task queue. */
  taskQueue: Q;
  /** The workflow id, built from the business key only. */
  workflowId(key: K): string;
  searchAttributes(key: K): StarterSearchAttributes;
  memo?(key: K): Record<string, unknown>;
}

/**
 * How a workflow is started: N its type (a workflow of workflows/index.ts, so the arguments are its
 * function's), K its business key, Q the task queue setting, U the updates it may be started with.
 */
export interface WorkflowStarter<
  N extends WorkflowName,
  K,
  Q extends TaskQueueSetting = 'taskQueue',
  U extends Record<string, UpdateRef> = Record<never, UpdateRef>,
  S extends Record<string, SignalRef> = Record<never, SignalRef>,
> extends ScheduledWorkflowStarter<N, K, Q> {
  /** What may happen to an id whose earlier run has closed. */
  workflowIdReusePolicy: WorkflowIdReusePolicy;
  /** What happens when the id is running already. */
  workflowIdConflictPolicy: WorkflowIdConflictPolicy;
  /** Updates sent with the start, by name: `{ firstOutcome: 'firstOutcome' }` with U = `{ firstOutcome: typeof firstOutcomeUpdate }`. */
  updates?: { [P in keyof U]: U[P]['name'] };
  /** Signals callers send to the running workflow, by name: `{ receipt: 'receipt' }` with S = `{ receipt: typeof receiptSignal }`. */
  signals?: { [P in keyof S]: S[P]['name'] };
}
