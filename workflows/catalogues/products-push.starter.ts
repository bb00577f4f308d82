import type { WorkflowStarter } from '../starter.js';

export interface ProductsPushKey {
  accountId: number;
  catalogueId: number;
  /** A readable token the caller chooses, unique per push: `inventory-<uuid>`, `delete-<uuid>`, `drift-<run>`. */
  pushId: string;
}

/** `products-push/<account>/<catalogue>/<push id>`. */
export const productsPushWorkflowId = (accountId: number, catalogueId: number, pushId: string) =>
  `products-push/${accountId}/${catalogueId}/${pushId}`;

/** One push of many products, started once per push id (a repeated start is refused: the push exists). */
export const productsPushStarter: WorkflowStarter<'productsPushWorkflow', ProductsPushKey> = {
  workflowType: 'productsPushWorkflow',
  taskQueue: 'taskQueue',
  workflowId: (k) => productsPushWorkflowId(k.accountId, k.catalogueId, k.pushId),
  searchAttributes: (k) => ({ AccountId: String(k.accountId), ResourceId: String(k.catalogueId), ResourceType: 'catalogue_push' }),
  memo: (k) => ({ pushId: k.pushId }),
  workflowIdReusePolicy: 'REJECT_DUPLICATE',
  workflowIdConflictPolicy: 'FAIL',
};
