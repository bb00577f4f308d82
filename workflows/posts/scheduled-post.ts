import { condition, defineQuery, defineSignal, proxyActivities, setHandler } from '@temporalio/workflow';
import type { PostActivities, PublishOutcome } from '../../activities/posts/post.js';
import { MAX_PUBLISH_ATTEMPTS, retryDelayMs } from '../../domain/posts/index.js';

export interface ScheduledPostInput {
  accountId: number;
  postUid: string;
  /** ISO 8601: when to publish (a time already past publishes at once). */
  at: string;
}

export type ScheduledPostState =
  | { status: 'scheduled'; at: string; attempts: number }
  | { status: 'publishing'; at: string; attempts: number }
  | { status: 'retrying'; at: string; attempts: number; pending: number }
  | { status: 'cancelled'; attempts: number }
  | { status: 'closed'; post_status: string; attempts: number };

/** Moves the publish time (a time already past publishes now: "share now"). */
export const rescheduleSignal = defineSignal<[at: string]>('reschedule');
/** Stops the scheduled post before it publishes; a later reschedule signal brings it back. */
export const cancelSignal = defineSignal('cancel');
export const scheduledPostStateQuery = defineQuery<ScheduledPostState>('state');

// The database or the worker down at the publish time: the activity is tried again for up to an
// hour. A platform's transient refusal is not an activity failure: it comes back as `pending` and
// the workflow's own retry timer waits before the next attempt.
const acts = proxyActivities<PostActivities>({
  startToCloseTimeout: '3 minutes',
  scheduleToCloseTimeout: '1 hour',
  retry: { initialInterval: '5 seconds', backoffCoefficient: 2, maximumInterval: '5 minutes' },
});

/**
 * One scheduled post (docs/posts.md): a durable timer to its time, moved by `reschedule` and
 * stopped by `cancel`, then one publish attempt to every platform still to take it; a transient
 * refusal waits 1, 2, 4, 8 minutes before the next attempt, and the last attempt turns whatever is
 * still transient into a failure with the platform's reason. The database is the authority: the
 * activity publishes only a post that is still scheduled and due, and says when it is due if a
 * signal was lost.
 */
export async function scheduledPostWorkflow(input: ScheduledPostInput): Promise<ScheduledPostState> {
  let at = input.at;
  let cancelled = false;
  let nudged = false;
  let attempts = 0;
  let state: ScheduledPostState = { status: 'scheduled', at, attempts };
  setHandler(scheduledPostStateQuery, () => state);
  setHandler(rescheduleSignal, (next) => {
    at = next;
    cancelled = false;
    nudged = true;
    state = { status: 'scheduled', at, attempts };
  });
  setHandler(cancelSignal, () => {
    cancelled = true;
    nudged = true;
  });

  for (;;) {
    nudged = false;
    if (cancelled) return (state = { status: 'cancelled', attempts });
    const wait = Date.parse(at) - Date.now();
    if (wait > 0 && (await condition(() => nudged, wait))) continue;
    state = { status: 'publishing', at, attempts };
    attempts++;
    const out: PublishOutcome = await acts.publishDuePost({
      accountId: input.accountId,
      postUid: input.postUid,
      final: attempts >= MAX_PUBLISH_ATTEMPTS,
    });
    if (out.kind === 'not_due') {
      attempts--;
      at = out.at;
      state = { status: 'scheduled', at, attempts };
      continue;
    }
    if (out.kind === 'closed') return (state = { status: 'closed', post_status: out.status, attempts });
    // The final attempt records every transient refusal as a failure; this is only a bound should it not.
    if (attempts >= MAX_PUBLISH_ATTEMPTS) return (state = { status: 'closed', post_status: 'failed', attempts });
    at = new Date(Date.now() + retryDelayMs(attempts)).toISOString();
    state = { status: 'retrying', at, attempts, pending: out.pending };
  }
}
