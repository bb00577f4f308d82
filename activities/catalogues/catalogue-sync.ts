import { ApplicationFailure } from '@temporalio/activity';
import type { MikroORM } from '@mikro-orm/postgresql';
import {
  beginSyncRun,
  finishSyncRun,
  ingestSyncChunk,
  retireMissingProducts,
  runFigures,
  syncPushList,
  type ChunkOutcome,
  type RunEnd,
  type RunStart,
} from '../../services/catalogues/sync-ingest.js';
import type { SyncStatus } from '../../domain/catalogues/vocabulary.js';
import type { Logger } from '../../logger.js';

// The steps of a sync run (a product batch or a feed pull), each one transaction on the run row, so
// a retried step finds its own work done: a chunk's rows carry their outcome, the retired count is
// read back from the products, and a run ends once.

export interface CatalogueSyncActivityDeps {
  orm: MikroORM;
  log: Logger;
}

export function createCatalogueSyncActivities(deps: CatalogueSyncActivityDeps) {
  /**
   * One line per run's end with its figures, read back from the run (an upsert run of a shop on no
   * platform has already ended in its last chunk, so the finish step's own answer has none).
   */
  const logEnd = async (syncId: number, platforms: RunEnd['platforms'], reason?: string) => {
    const figures = await runFigures(deps.orm.em.fork(), syncId);
    if (!figures) return;
    if (figures.status === 'failed') deps.log.warn({ syncId, ...figures, platforms, reason }, 'catalogue sync failed');
    else deps.log.info({ syncId, ...figures, platforms }, 'catalogue sync finished');
  };
  return {
    /** Marks the run running. Not visible yet means the API has not committed it: retried, then given up by the workflow. */
    async beginCatalogueSync(input: { syncId: number }): Promise<RunStart> {
      const run = await deps.orm.em.fork().transactional((em) => beginSyncRun(em, input));
      if (!run) throw ApplicationFailure.retryable(`catalogue sync ${input.syncId} is not visible`, 'SyncNotVisible');
      deps.log.info({ syncId: input.syncId, mode: run.mode, received: run.received, channels: run.channels }, 'catalogue sync started');
      return run;
    },

    /** Applies the next chunk of staged rows (products, outcomes and counters in one transaction). */
    async ingestCatalogueSyncChunk(input: { syncId: number; chunkSize: number }): Promise<ChunkOutcome> {
      const outcome = await deps.orm.em.fork().transactional((em) => ingestSyncChunk(em, input));
      deps.log.debug({ syncId: input.syncId, ...outcome }, 'catalogue sync chunk');
      return outcome;
    },

    /** Replace mode: retires the shop's products no row of the payload landed on; `refused` when none could be stored. */
    async retireCatalogueSyncMissing(input: { syncId: number }): Promise<{ retired: number; refused?: string }> {
      return deps.orm.em.fork().transactional((em) => retireMissingProducts(em, input));
    },

    /** The product ids the run owes the platforms (created or changed; retired as removals): ids only, never item payloads. */
    async catalogueSyncPushList(input: { syncId: number }): Promise<{ productIds: number[]; removals: number[] }> {
      return syncPushList(deps.orm.em.fork(), input);
    },

    /** Ends the run (completed, or failed with `failureReason`), emitting catalogue.sync.completed or .failed once. */
    async finishCatalogueSync(input: { syncId: number } & RunEnd): Promise<{ status: SyncStatus } | null> {
      const ended = await deps.orm.em.fork().transactional((em) => finishSyncRun(em, input));
      await logEnd(input.syncId, input.platforms);
      return ended;
    },

    /** Ends the run as failed with a reason (a pull that never staged rows, a step that gave up); the products stored stay. */
    async failCatalogueSync(input: { syncId: number; reason: string }): Promise<{ status: SyncStatus } | null> {
      const ended = await deps.orm.em
        .fork()
        .transactional((em) =>
          finishSyncRun(em, { syncId: input.syncId, platforms: {}, problems: [], problemsTruncated: false, failureReason: input.reason }),
        );
      await logEnd(input.syncId, {}, input.reason);
      return ended;
    },
  };
}

export type CatalogueSyncActivities = ReturnType<typeof createCatalogueSyncActivities>;
