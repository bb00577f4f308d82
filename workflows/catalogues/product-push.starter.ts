import type { WorkflowStarter } from '../starter.js';
import type { pushRevisionUpdate } from './product-push.js';

export interface ProductPushKey {
  accountId: number;
  productId: number;
}

/** `product-push/<account>/<product>`: at most one running per product; a later edit runs it anew. */
export const productPushWorkflowId = (accountId: number, productId: number) => `product-push/${accountId}/${productId}`;

/**
 * A product write's push, sent with the pushRevision update (executeUpdateWithStart): a running push
 * of the product is joined, so edits in quick succession are coalesced into one workflow.
 */
export const productPushStarter: WorkflowStarter<
  'productPushWorkflow',
  ProductPushKey,
  'taskQueue',
  { pushRevision: typeof pushRevisionUpdate }
> = {
  workflowType: 'productPushWorkflow',
  taskQueue: 'taskQueue',
  workflowId: (k) => productPushWorkflowId(k.accountId, k.productId),
  searchAttributes: (k) => ({ AccountId: String(k.accountId), ResourceId: String(k.productId), ResourceType: 'product' }),
  workflowIdReusePolicy: 'ALLOW_DUPLICATE',
  workflowIdConflictPolicy: 'USE_EXISTING',
  updates: { pushRevision: 'pushRevision' },
};
