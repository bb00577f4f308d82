import { defineQuery, setHandler } from '@temporalio/workflow';
import { newSyncProgress, runSyncSteps, type SyncProgress, type SyncStepsInput } from './sync-steps.js';

export type CatalogueSyncInput = SyncStepsInput;

/** The run's progress for operators (the API reads the run row, which the steps keep current). */
export const catalogueSyncStateQuery = defineQuery<SyncProgress>('state');

/**
 * A product batch (POST …/products/batch): the API staged the rows with the run in one transaction
 * and started this workflow inside it; the steps apply, retire, push and end the run.
 */
export async function catalogueSyncWorkflow(input: CatalogueSyncInput): Promise<SyncProgress> {
  const progress = newSyncProgress();
  setHandler(catalogueSyncStateQuery, () => progress);
  return runSyncSteps(input, progress);
}
