import { proxyActivities, defineQuery, setHandler, ActivityFailure, ApplicationFailure, TimeoutFailure, log } from '@temporalio/workflow';
import type { FeedActivities } from '../../activities/catalogues/feed-pull.js';
import { shrinkRefusal } from '../../domain/catalogues/feed-mapping.js';
import { newSyncProgress, runSyncSteps, type SyncProgress } from './sync-steps.js';

export interface FeedPullInput {
  accountId: number;
  catalogueId: number;
  feedId: number;
  /** The run the API recorded (a new feed's first pull, a run-now); absent for a scheduled pull, which records its own. */
  syncId?: number;
  /** Staged rows per ingest activity; default 1000 (config CATALOGUE_SYNC_CHUNK_SIZE). */
  chunkSize?: number;
}

export interface FeedPullState {
  phase: 'opening' | 'pulling' | 'applying' | 'completed' | 'failed' | 'skipped' | 'abandoned';
  syncId: number | null;
  format: string | null;
  rows: number;
  usable: number;
  reason: string | null;
  /** The apply steps' progress once they run. */
  sync: SyncProgress | null;
  /** This pull was the tenth failure in a row: the feed is switched off. */
  switchedOff: boolean;
}

export const feedPullStateQuery = defineQuery<FeedPullState>('state');

// The API starts the workflow just before it commits the run, so the first read may come too early.
const begin = proxyActivities<FeedActivities>({
  startToCloseTimeout: '10 seconds',
  retry: { initialInterval: '200 milliseconds', backoffCoefficient: 2, maximumInterval: '10 seconds', maximumAttempts: 10 },
});
// The download: bounded by the feed time limit inside the activity; a stalled worker is noticed by
// the missing heartbeat. A timeout, a 5xx or a dropped connection gets two more tries, then the run fails.
const fetcher = proxyActivities<FeedActivities>({
  startToCloseTimeout: '20 minutes',
  heartbeatTimeout: '90 seconds',
  retry: { initialInterval: '5 seconds', backoffCoefficient: 2, maximumAttempts: 3 },
});
const db = proxyActivities<FeedActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '500 milliseconds', backoffCoefficient: 2, maximumInterval: '30 seconds', maximumAttempts: 20 },
});

/** The reason a failed pull gives the account: the feed's own problem, never an internal error's text. */
function reasonOf(err: ActivityFailure): string {
  const cause = err.cause;
  if (cause instanceof ApplicationFailure && cause.type === 'FeedProblem') return cause.message;
  if (cause instanceof TimeoutFailure) return 'the pull did not finish in time';
  return 'the pull stopped on an internal error; the next pull tries again';
}

/**
 * One pull of a product feed (a new feed's first, a run-now, or a scheduled one): open the run,
 * download and stage the file (activities/catalogues/feed-pull.ts), hold a replace pull that is
 * empty or shrank sharply (nothing applied, nothing retired), then the batch's own steps apply,
 * retire, push and end the run. The outcome is counted on the feed: ten failed pulls in a row
 * switch it off.
 */
export async function feedPullWorkflow(input: FeedPullInput): Promise<FeedPullState> {
  const state: FeedPullState = {
    phase: 'opening',
    syncId: input.syncId ?? null,
    format: null,
    rows: 0,
    usable: 0,
    reason: null,
    sync: null,
    switchedOff: false,
  };
  setHandler(feedPullStateQuery, () => state);
  const ref = { accountId: input.accountId, feedId: input.feedId };

  let opened;
  try {
    opened = await begin.openFeedRun({ ...ref, ...(input.syncId !== undefined ? { syncId: input.syncId } : {}) });
  } catch (err) {
    if (!(err instanceof ActivityFailure)) throw err;
    log.warn('feed run never became visible', { ...ref, syncId: input.syncId });
    state.phase = 'abandoned';
    return state;
  }
  if ('skipped' in opened) {
    state.phase = 'skipped';
    state.reason = opened.skipped;
    return state;
  }
  const syncId = opened.syncId;
  state.syncId = syncId;

  const fail = async (reason: string) => {
    state.phase = 'failed';
    state.reason = reason;
    const tally = await db.failFeedRun({ ...ref, syncId, reason });
    state.switchedOff = tally?.switchedOff ?? false;
    return state;
  };

  state.phase = 'pulling';
  let pulled;
  try {
    pulled = await fetcher.pullFeed({ ...ref, syncId });
  } catch (err) {
    if (!(err instanceof ActivityFailure)) throw err;
    log.warn('feed pull failed', { ...ref, syncId, reason: err.cause?.message ?? err.message });
    return fail(reasonOf(err));
  }
  state.format = pulled.format;
  state.rows = pulled.rows;
  state.usable = pulled.usable;

  const refused = shrinkRefusal(opened.mode, pulled.usable, opened.lastRowCount);
  if (refused) return fail(refused);

  state.phase = 'applying';
  state.sync = newSyncProgress();
  const done = await runSyncSteps(
    { accountId: input.accountId, catalogueId: input.catalogueId, syncId, chunkSize: input.chunkSize ?? 1000 },
    state.sync,
  );
  if (done.phase === 'abandoned') {
    // The shop was deleted while the run was applied: there is no feed left to count on.
    state.phase = 'abandoned';
    return state;
  }
  const finished = await db.finishFeedRun({ ...ref, syncId, usable: pulled.usable });
  state.switchedOff = finished.tally?.switchedOff ?? false;
  state.phase = finished.status === 'completed' ? 'completed' : 'failed';
  state.reason = done.failureReason ?? null;
  return state;
}
