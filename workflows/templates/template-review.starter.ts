import type { WorkflowStarter } from '../starter.js';
import type { submissionUpdate, templateStatusSignal } from './template-review.js';

export interface TemplateReviewKey {
  accountId: number;
  templateId: string;
}

/** `template-review/<account>/<template>`. */
export const templateReviewWorkflowId = (accountId: number, templateId: string) => `template-review/${accountId}/${templateId}`;

/**
 * A template's submission and review, started with the submission update (executeUpdateWithStart):
 * a running review of the template is joined, so a retried request never submits it twice.
 */
export const templateReviewStarter: WorkflowStarter<
  'templateReviewWorkflow',
  TemplateReviewKey,
  'taskQueue',
  { submission: typeof submissionUpdate },
  { templateStatus: typeof templateStatusSignal }
> = {
  workflowType: 'templateReviewWorkflow',
  taskQueue: 'taskQueue',
  workflowId: (k) => templateReviewWorkflowId(k.accountId, k.templateId),
  searchAttributes: (k) => ({ AccountId: String(k.accountId), ResourceId: k.templateId, ResourceType: 'message_template' }),
  workflowIdReusePolicy: 'ALLOW_DUPLICATE',
  workflowIdConflictPolicy: 'USE_EXISTING',
  updates: { submission: 'submission' },
  signals: { templateStatus: 'templateStatus' },
};
