import type { WorkflowStarter } from '../starter.js';

export interface ContactImportKey {
  accountId: number;
  importId: number;
}

/** `contact-import/<account>/<import id>`. */
export const contactImportWorkflowId = (accountId: number, importId: number) => `contact-import/${accountId}/${importId}`;

/** One workflow per import, never started twice. */
export const contactImportStarter: WorkflowStarter<'contactImportWorkflow', ContactImportKey> = {
  workflowType: 'contactImportWorkflow',
  taskQueue: 'taskQueue',
  workflowId: (k) => contactImportWorkflowId(k.accountId, k.importId),
  searchAttributes: (k) => ({ AccountId: String(k.accountId), ResourceId: String(k.importId), ResourceType: 'contact_import' }),
  workflowIdReusePolicy: 'REJECT_DUPLICATE',
  workflowIdConflictPolicy: 'FAIL',
};
