import type { WorkflowStarter } from '../starter.js';

export interface CampaignKey {
  accountId: number;
  campaignId: number;
  uid: string;
}

/** `campaign/<account>/<campaign uid>`. */
export const campaignWorkflowId = (accountId: number, uid: string) => `campaign/${accountId}/${uid}`;

/** A new campaign: its id is never reused. */
export const campaignStarter: WorkflowStarter<'campaignWorkflow', CampaignKey> = {
  workflowType: 'campaignWorkflow',
  taskQueue: 'taskQueue',
  workflowId: (k) => campaignWorkflowId(k.accountId, k.uid),
  searchAttributes: (k) => ({ AccountId: String(k.accountId), ResourceId: k.uid, ResourceType: 'campaign' }),
  memo: (k) => ({ campaignId: k.campaignId }),
  workflowIdReusePolicy: 'REJECT_DUPLICATE',
  workflowIdConflictPolicy: 'FAIL',
};

/**
 * A resumed campaign starts a new run under the same id; the run that paused it may still be
 * closing, so that one is ended.
 */
export const campaignResumeStarter: typeof campaignStarter = {
  ...campaignStarter,
  workflowIdReusePolicy: 'ALLOW_DUPLICATE',
  workflowIdConflictPolicy: 'TERMINATE_EXISTING',
};
