import type { ScheduledWorkflowStarter, WorkflowStarter } from '../starter.js';

/**
 * The one Temporal Schedule of the drift comparison, for every shop. Global rather than one per
 * shop: nothing to create, pause or delete with each shop (another process's files), and a pass
 * that overruns the hour is skipped by the schedule's overlap policy instead of piling up.
 */
export const CATALOGUE_DRIFT_SCHEDULE_ID = 'catalogue-drift';
/** "The hourly comparison" (States > Product listing). */
export const CATALOGUE_DRIFT_EVERY = '1 hour' as const;

export interface CatalogueDriftKey {
  /** A run-now for one account; absent for the schedule's passes over every shop. */
  accountId?: number;
  /** A run-now's own token (unique per run), e.g. a uuid. */
  runId: string;
}

/** `catalogue-drift/scheduled-<time>` for the schedule's passes; `catalogue-drift/<account>/<run>` for a run-now. */
export const catalogueDriftWorkflowId = (k: CatalogueDriftKey) =>
  k.accountId === undefined ? `catalogue-drift/${k.runId}` : `catalogue-drift/${k.accountId}/${k.runId}`;

const searchAttributes = (k: CatalogueDriftKey) => ({
  AccountId: k.accountId === undefined ? 'system' : String(k.accountId),
  ResourceId: CATALOGUE_DRIFT_SCHEDULE_ID,
  ResourceType: 'catalogue_drift',
});

/**
 * The action of the hourly schedule: `catalogue-drift/scheduled`, to which Temporal appends each
 * action's time. The overlap policy (skip) stands in for the id policies.
 */
export const scheduledCatalogueDriftStarter: ScheduledWorkflowStarter<'catalogueDriftWorkflow', CatalogueDriftKey> = {
  workflowType: 'catalogueDriftWorkflow',
  taskQueue: 'taskQueue',
  workflowId: catalogueDriftWorkflowId,
  searchAttributes,
};

/** A pass started now instead of at the hour (an operator, a test): once per run id. */
export const catalogueDriftRunStarter: WorkflowStarter<'catalogueDriftWorkflow', CatalogueDriftKey> = {
  workflowType: 'catalogueDriftWorkflow',
  taskQueue: 'taskQueue',
  workflowId: catalogueDriftWorkflowId,
  searchAttributes,
  workflowIdReusePolicy: 'REJECT_DUPLICATE',
  workflowIdConflictPolicy: 'FAIL',
};
