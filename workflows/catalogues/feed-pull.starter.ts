import type { ScheduledWorkflowStarter, WorkflowStarter } from '../starter.js';

export interface FeedPullKey {
  accountId: number;
  feedId: number;
  /** The sync run the API recorded for this pull (a create or a run-now). */
  syncId: number;
}

/** `feed-pull/<account>/<feed>/<sync>`: one pull of a feed, under the sync run it fills. */
export const feedPullWorkflowId = (accountId: number, feedId: number, syncId: number | string) =>
  `feed-pull/${accountId}/${feedId}/${syncId}`;

/** A pull the API recorded (the first pull of a new feed, or a run-now): started once. */
export const feedPullStarter: WorkflowStarter<'feedPullWorkflow', FeedPullKey> = {
  workflowType: 'feedPullWorkflow',
  taskQueue: 'taskQueue',
  workflowId: (k) => feedPullWorkflowId(k.accountId, k.feedId, k.syncId),
  // The feed is the resource: an operator finds every pull of feed 7 under ResourceId 7.
  searchAttributes: (k) => ({ AccountId: String(k.accountId), ResourceId: String(k.feedId), ResourceType: 'catalogue_feed' }),
  memo: (k) => ({ syncId: k.syncId }),
  workflowIdReusePolicy: 'REJECT_DUPLICATE',
  workflowIdConflictPolicy: 'FAIL',
};

export interface ScheduledFeedPullKey {
  accountId: number;
  feedId: number;
}

/** The Temporal Schedule of a feed (one per feed with a schedule): `catalogue-feed/<account>/<feed>`. */
export const feedScheduleId = (accountId: number, feedId: number) => `catalogue-feed/${accountId}/${feedId}`;

/**
 * The action of a feed's schedule: `feed-pull/<account>/<feed>/scheduled`, to which Temporal appends
 * each action's time. The pull records its own sync run when it starts; the schedule's overlap
 * policy (skip) keeps two scheduled pulls of one feed apart.
 */
export const scheduledFeedPullStarter: ScheduledWorkflowStarter<'feedPullWorkflow', ScheduledFeedPullKey> = {
  workflowType: 'feedPullWorkflow',
  taskQueue: 'taskQueue',
  workflowId: (k) => feedPullWorkflowId(k.accountId, k.feedId, 'scheduled'),
  searchAttributes: (k) => ({ AccountId: String(k.accountId), ResourceId: String(k.feedId), ResourceType: 'catalogue_feed' }),
};
