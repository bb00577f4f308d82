import { proxyLocalActivities, ActivityFailure, log } from '@temporalio/workflow';
import type { CatalogueSyncActivities } from '../../activities/catalogues/catalogue-sync.js';
import type { PlatformCounts, SyncProblem } from '../../domain/catalogues/vocabulary.js';
import { pushProducts } from './push-steps.js';

// The steps of a sync run after its rows are staged, shared by the product batch (catalogue-sync.ts)
// and the feed pull: ingest the staged rows chunk by chunk, retire what a replace payload left out,
// push what changed to the shop's platforms, end the run. The run row holds the progress (each step
// is one transaction on it); the workflow carries counts and product ids only.

export interface SyncStepsInput {
  accountId: number;
  catalogueId: number;
  syncId: number;
  /** Staged rows per ingest activity (config CATALOGUE_SYNC_CHUNK_SIZE). */
  chunkSize: number;
}

export interface SyncProgress {
  phase: 'starting' | 'ingesting' | 'retiring' | 'pushing' | 'finishing' | 'completed' | 'failed' | 'abandoned';
  received: number;
  processed: number;
  created: number;
  updated: number;
  rejected: number;
  retired: number;
  /** Products handed to the platform push (changed or created, and removals). */
  pushed: number;
  failureReason?: string;
}

export interface SyncStepsOptions {
  /**
   * Asked before a replace run retires anything, with the ingest's counts: a reason refuses the
   * retirement and fails the run (the products stored stay). The steps themselves refuse when no
   * row could be stored; a feed adds its own guard (a file that shrank sharply).
   */
  guardRetire?: (progress: SyncProgress) => string | null;
}

export const newSyncProgress = (): SyncProgress => ({
  phase: 'starting',
  received: 0,
  processed: 0,
  created: 0,
  updated: 0,
  rejected: 0,
  retired: 0,
  pushed: 0,
});

// The steps are short database transactions on the worker's own pool, so they run as local
// activities: no task-queue round trip per step (a 5,000-row batch is a handful of steps, and each
// round trip was a visible share of its time). A chunk is one transaction of at most a few thousand
// rows; a worker that dies holding one is noticed after this timeout.
const db = proxyLocalActivities<CatalogueSyncActivities>({
  startToCloseTimeout: '60 seconds',
  retry: { initialInterval: '500 milliseconds', backoffCoefficient: 2, maximumInterval: '30 seconds', maximumAttempts: 10 },
});
// The API starts the workflow just before it commits the run, so the first read may come too early.
const begin = proxyLocalActivities<CatalogueSyncActivities>({
  startToCloseTimeout: '10 seconds',
  retry: { initialInterval: '200 milliseconds', backoffCoefficient: 2, maximumInterval: '10 seconds', maximumAttempts: 10 },
});

const STOPPED = 'The sync stopped before the end; rows not yet applied were not stored.';

/** Runs the steps of run `input.syncId`, keeping `progress` current (the caller's query shows it); resolves with it. */
export async function runSyncSteps(input: SyncStepsInput, progress: SyncProgress, options: SyncStepsOptions = {}): Promise<SyncProgress> {
  let start;
  try {
    start = await begin.beginCatalogueSync({ syncId: input.syncId });
  } catch (err) {
    if (!(err instanceof ActivityFailure)) throw err;
    log.warn('catalogue sync never became visible', { syncId: input.syncId });
    progress.phase = 'abandoned';
    return progress;
  }
  progress.received = start.received;
  if (start.status === 'completed' || start.status === 'failed') {
    progress.phase = start.status;
    return progress;
  }

  const fail = async (reason: string) => {
    progress.phase = 'failed';
    progress.failureReason = reason;
    await db.failCatalogueSync({ syncId: input.syncId, reason });
    return progress;
  };

  try {
    progress.phase = 'ingesting';
    for (;;) {
      const out = await db.ingestCatalogueSyncChunk({ syncId: input.syncId, chunkSize: input.chunkSize });
      Object.assign(progress, {
        received: out.received,
        processed: out.processed,
        created: out.created,
        updated: out.updated,
        rejected: out.rejected,
      });
      if (out.state === 'gone') {
        // The shop (and with it the run) was deleted meanwhile.
        progress.phase = 'abandoned';
        return progress;
      }
      if (out.state === 'done') break;
    }

    if (start.mode === 'replace') {
      progress.phase = 'retiring';
      const refused = options.guardRetire?.(progress);
      if (refused) return await fail(refused);
      const r = await db.retireCatalogueSyncMissing({ syncId: input.syncId });
      if (r.refused) return await fail(r.refused);
      progress.retired = r.retired;
    }

    const platforms: Record<string, PlatformCounts> = Object.fromEntries(start.channels.map((c) => [c, { synced: 0, blocked: 0 }]));
    let problems: SyncProblem[] = [];
    let problemsTruncated = false;
    let failureReason: string | null = null;
    if (start.channels.length > 0) {
      progress.phase = 'pushing';
      const list = await db.catalogueSyncPushList({ syncId: input.syncId });
      progress.pushed = list.productIds.length + list.removals.length;
      if (progress.pushed > 0) {
        // A retired product among the ids is taken off every platform (the push reads retired_at itself).
        const pushed = await pushProducts({
          accountId: input.accountId,
          catalogueId: input.catalogueId,
          productIds: [...list.productIds, ...list.removals],
        });
        for (const [platform, t] of Object.entries(pushed.platforms)) platforms[platform] = { synced: t.synced, blocked: t.blocked };
        problems = pushed.problems;
        problemsTruncated = pushed.problemsTruncated;
        // The platform refused the whole call: the run failed, the products it stored stay.
        if (pushed.refused) failureReason = `The ${pushed.refused.platform} platform refused the push: ${pushed.refused.message}`;
      }
    }

    progress.phase = 'finishing';
    const end = await db.finishCatalogueSync({ syncId: input.syncId, platforms, problems, problemsTruncated, failureReason });
    progress.phase = end?.status === 'failed' ? 'failed' : 'completed';
    if (failureReason) progress.failureReason = failureReason;
    return progress;
  } catch (err) {
    if (!(err instanceof ActivityFailure)) throw err;
    log.error('catalogue sync failed', { syncId: input.syncId, reason: err.cause?.message ?? err.message });
    return await fail(STOPPED);
  }
}
