import type { WorkflowStarter } from '../starter.js';

export interface CatalogueSyncKey {
  accountId: number;
  syncId: number;
}

/** `catalogue-sync/<account>/<sync id>`. */
export const catalogueSyncWorkflowId = (accountId: number, syncId: number | string) => `catalogue-sync/${accountId}/${syncId}`;

/** One workflow per batch run, never started twice. */
export const catalogueSyncStarter: WorkflowStarter<'catalogueSyncWorkflow', CatalogueSyncKey> = {
  workflowType: 'catalogueSyncWorkflow',
  taskQueue: 'taskQueue',
  workflowId: (k) => catalogueSyncWorkflowId(k.accountId, k.syncId),
  searchAttributes: (k) => ({ AccountId: String(k.accountId), ResourceId: String(k.syncId), ResourceType: 'catalogue_sync' }),
  workflowIdReusePolicy: 'REJECT_DUPLICATE',
  workflowIdConflictPolicy: 'FAIL',
};
