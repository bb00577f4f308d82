import type { WorkflowStarter } from '../starter.js';

export interface TemplateCallKey {
  accountId: number;
  /** The request's own id: every call is a workflow of its own. */
  requestId: string;
  /** What the call is about (a template id, or `sync`), for the operator's search. */
  resource: string;
}

/** `template-call/<account>/<request>`. */
export const templateCallWorkflowId = (k: TemplateCallKey) => `template-call/${k.accountId}/${k.requestId}`;

/** One provider call of the template management (refresh, sync, delete), awaited by the API call that asked for it. */
export const templateCallStarter: WorkflowStarter<'templateCallWorkflow', TemplateCallKey> = {
  workflowType: 'templateCallWorkflow',
  taskQueue: 'taskQueue',
  workflowId: templateCallWorkflowId,
  searchAttributes: (k) => ({ AccountId: String(k.accountId), ResourceId: k.resource, ResourceType: 'message_template_call' }),
  workflowIdReusePolicy: 'REJECT_DUPLICATE',
  workflowIdConflictPolicy: 'FAIL',
};
