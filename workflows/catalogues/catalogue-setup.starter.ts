import type { WorkflowStarter } from '../starter.js';

export interface CatalogueSetupKey {
  accountId: number;
  catalogueId: number;
}

/** `catalogue-setup/<account>/<catalogue>`. */
export const catalogueSetupWorkflowId = (accountId: number, catalogueId: number) => `catalogue-setup/${accountId}/${catalogueId}`;

/**
 * The shop's provider catalogue. A setup asked again (a repair of a shop still without its provider
 * id) joins a running one or runs anew; the activity returns a stored id, so it never creates two.
 */
export const catalogueSetupStarter: WorkflowStarter<'catalogueSetupWorkflow', CatalogueSetupKey> = {
  workflowType: 'catalogueSetupWorkflow',
  taskQueue: 'taskQueue',
  workflowId: (k) => catalogueSetupWorkflowId(k.accountId, k.catalogueId),
  searchAttributes: (k) => ({ AccountId: String(k.accountId), ResourceId: String(k.catalogueId), ResourceType: 'catalogue' }),
  workflowIdReusePolicy: 'ALLOW_DUPLICATE',
  workflowIdConflictPolicy: 'USE_EXISTING',
};
