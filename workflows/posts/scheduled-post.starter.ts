import type { WorkflowStarter } from '../starter.js';
import type { cancelSignal, rescheduleSignal } from './scheduled-post.js';

export interface ScheduledPostKey {
  accountId: number;
  postUid: string;
}

/** `post/<account>/<post uid>`. */
export const scheduledPostWorkflowId = (accountId: number, postUid: string) => `post/${accountId}/${postUid}`;

/**
 * A scheduled post's timer and publish attempts. Started with its reschedule signal
 * (signal-with-start): a post scheduled again after a cancel joins the run still closing, whose
 * signal handler takes it back, instead of racing a second run.
 */
export const scheduledPostStarter: WorkflowStarter<
  'scheduledPostWorkflow',
  ScheduledPostKey,
  'taskQueue',
  Record<never, never>,
  { reschedule: typeof rescheduleSignal; cancel: typeof cancelSignal }
> = {
  workflowType: 'scheduledPostWorkflow',
  taskQueue: 'taskQueue',
  workflowId: (k) => scheduledPostWorkflowId(k.accountId, k.postUid),
  searchAttributes: (k) => ({ AccountId: String(k.accountId), ResourceId: k.postUid, ResourceType: 'post' }),
  workflowIdReusePolicy: 'ALLOW_DUPLICATE',
  workflowIdConflictPolicy: 'USE_EXISTING',
  signals: { reschedule: 'reschedule', cancel: 'cancel' },
};
