import { CancelledFailure, Context } from '@temporalio/activity';
import type { MikroORM } from '@mikro-orm/postgresql';
import pg from 'pg';
import type { Config } from '../../config.js';
import type { Logger } from '../../logger.js';
import { one } from '../../entities/db.js';
import {
  columnIndexName,
  columnStatisticsName,
  searchColumns,
  searchIndexName,
  searchStatisticsName,
} from '../../domain/data/expressions.js';
import {
  ANALYZE_RECORDS,
  columnIndexDdl,
  columnIndexDropped,
  columnIndexFailed,
  columnIndexProgress,
  columnIndexReady,
  columnStatisticsDdl,
  dropStatisticsDdl,
  indexValidity,
  indexedColumn,
  searchIndexBuilding,
  searchIndexDdl,
  searchIndexDropped,
  searchIndexDropping,
  searchIndexFailed,
  searchIndexReady,
  searchIndexState,
  searchStatisticsDdl,
  searchableColumns,
  startColumnIndexBuild,
  statisticsFilled,
} from '../../services/data/store/indexes.js';

// The index activities of data tables (notes/commerce-and-data-tables.md §4.7). A build runs
// CREATE INDEX CONCURRENTLY on a connection of its own, outside any transaction (CIC refuses to run
// in one), named after the index so that a later attempt can find and end an orphan of an earlier
// one (a killed worker's statement may still run on the server). Progress is read from
// pg_stat_progress_create_index over the pool, heartbeated and written to the column's row. Every
// state move is an UPDATE guarded by the state it expects, so a request that lost a race changes
// nothing. Errors: a statement the database refused for what it is (a value too large for a
// B-tree, an expression it cannot evaluate) will refuse again, so the column ends failed with the
// text and the half-built (invalid) index is dropped; connection loss and lock waits are retried.
//
// Beside each index, before it is called ready, a statistics object on its expression
// (services/data/store/indexes.ts: a partial expression index gives the planner none, and without them
// it sorts every match of a filter instead of walking the sort index), then ANALYZE data_records.
// ANALYZE reads a fixed sample (300 × default_statistics_target rows, 30,000 by default) whatever
// the table's size, so its cost is bounded: about 0.6 s measured at 2M records with three objects;
// it grows with the number of statistics objects on data_records (each expression is evaluated over
// the sample), not with the records. Statistics are an aid to plans, not a condition of the index:
// when they cannot be made (a lock wait over lock_timeout behind another build) the index is ready
// all the same, the failure is logged, and the object is filled by the next ANALYZE of data_records
// (the next index's, or autovacuum's); a later request for the index makes them again if missing.

export interface IndexProgress {
  phase: string;
  blocks_done: number;
  blocks_total: number;
  tuples_done?: number;
  tuples_total?: number;
}

export interface IndexOutcome {
  /** ready: the index is valid; failed: it could not be built (error says why); dropped; skipped: nothing was asked of it any more; superseded: built, but the row moved on meanwhile. */
  outcome: 'ready' | 'failed' | 'dropped' | 'skipped' | 'superseded';
  error?: string;
}

export interface DataIndexDeps {
  orm: MikroORM;
  config: Pick<Config, 'databaseUrl'>;
  log: Logger;
  /** How long a build waits for a lock (the table's, or older transactions' before each scan) before that attempt gives up. */
  lockTimeoutMs?: number;
  /** How often progress is sampled (and the activity heartbeats) while a statement runs. */
  sampleEveryMs?: number;
}

/** Lock waits are retried this many attempts before the index is called failed. */
const LOCK_ATTEMPTS = 5;
const APP = 'svc-data-index:';

const quoteIdent = (name: string) => {
  // Index names come from columnIndexName/searchIndexName (dx_/dq_ and hex); checked once more here.
  if (!/^d[xq]_[0-9a-f]{32}$/.test(name)) throw new Error(`not an index name: ${name}`);
  return `"${name}"`;
};

/** An error the database will give again whatever we wait for (not a lost connection, a lock wait or a cancel). */
function isPermanent(err: unknown, attempt: number): boolean {
  const code = (err as { code?: unknown }).code;
  if (typeof code !== 'string' || !/^[0-9A-Z]{5}$/.test(code)) return false; // socket errors: no SQLSTATE
  if (code.startsWith('08') || code.startsWith('57P') || code.startsWith('53')) return false; // connection, shutdown, resources
  // Lock timeout, deadlock, canceled, and a name taken by a concurrent attempt (the next attempt looks again).
  if (code === '55P03' || code === '40P01' || code === '57014' || code === '42P07') return attempt >= LOCK_ATTEMPTS;
  return true;
}

const messageOf = (err: unknown) => (err instanceof Error ? err.message : String(err));

export function createDataIndexActivities(deps: DataIndexDeps) {
  const lockTimeoutMs = deps.lockTimeoutMs ?? 60_000;
  const sampleEveryMs = deps.sampleEveryMs ?? 1_000;
  const em = () => deps.orm.em.fork();

  async function progressOf(indexName: string): Promise<IndexProgress | null> {
    const row = await one<{ phase: string; blocks_done: string; blocks_total: string; tuples_done: string; tuples_total: string }>(
      em(),
      `select p.phase, p.blocks_done, p.blocks_total, p.tuples_done, p.tuples_total
         from pg_stat_progress_create_index p join pg_stat_activity a on a.pid = p.pid
        where a.application_name = ? limit 1`,
      [APP + indexName],
    );
    if (!row) return null;
    return {
      phase: row.phase,
      blocks_done: Number(row.blocks_done),
      blocks_total: Number(row.blocks_total),
      tuples_done: Number(row.tuples_done),
      tuples_total: Number(row.tuples_total),
    };
  }

  /** The index's state in the catalog: absent, valid (built and usable) or invalid (a failed or unfinished CIC). */
  async function catalogState(indexName: string): Promise<'absent' | 'valid' | 'invalid'> {
    const valid = await indexValidity(em(), indexName);
    return valid === null ? 'absent' : valid ? 'valid' : 'invalid';
  }

  /**
   * Runs one index statement on a connection of its own, heartbeating (with progress) until it ends.
   * Cancellation (a drop asked for during the build) cancels the statement. Before it runs, any other
   * session still working on the same index (an earlier attempt's orphan) is ended.
   */
  async function runStatement(
    indexName: string,
    sql: string,
    opts: { onProgress?: (p: IndexProgress | null) => Promise<void>; cancellable?: boolean } = {},
  ): Promise<void> {
    const ctx = Context.current();
    const client = new pg.Client({ connectionString: deps.config.databaseUrl, application_name: APP + indexName });
    client.on('error', () => {}); // a dropped connection surfaces as the query's error
    await client.connect();
    let timer: NodeJS.Timeout | undefined;
    try {
      await client.query(`set lock_timeout = ${Math.max(1, Math.floor(lockTimeoutMs))}`);
      await client.query('set statement_timeout = 0');
      // The server ends our statement soon after this connection dies (a killed worker), instead of building on for no one.
      await client.query(`set client_connection_check_interval = '2s'`);
      await endOrphans(client, indexName);
      const pid = (await client.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0].pid;
      let sampling = false;
      timer = setInterval(() => {
        if (sampling) return;
        sampling = true;
        progressOf(indexName)
          .then(async (p) => {
            ctx.heartbeat(p ?? { phase: 'waiting' });
            await opts.onProgress?.(p);
          })
          .catch((err: unknown) => deps.log.debug({ err, indexName }, 'index progress not sampled'))
          .finally(() => (sampling = false));
      }, sampleEveryMs);
      let running = true;
      let cancelledBy: unknown = null;
      if (opts.cancellable !== false) {
        ctx.cancelled.catch(async (err: unknown) => {
          if (!running) return;
          cancelledBy = err;
          await one(em(), 'select pg_cancel_backend(?)', [pid]).catch(() => {});
        });
      }
      try {
        await client.query(sql);
      } catch (err) {
        throw cancelledBy ?? err;
      } finally {
        running = false;
      }
    } finally {
      clearInterval(timer);
      await client.end().catch(() => {});
    }
  }

  /** Ends other sessions working on this index (our application name): an earlier attempt that outlived its worker. */
  async function endOrphans(client: pg.Client, indexName: string) {
    for (let i = 0; i < 50; i++) {
      const { rows } = await client.query<{ pid: number }>(
        'select pid, pg_terminate_backend(pid) from pg_stat_activity where application_name = $1 and pid <> pg_backend_pid()',
        [APP + indexName],
      );
      if (!rows.length) return;
      if (i === 0) deps.log.warn({ indexName, pids: rows.map((r) => r.pid) }, 'ended an earlier attempt still working on the index');
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  const dropStatement = (indexName: string) => `DROP INDEX CONCURRENTLY IF EXISTS ${quoteIdent(indexName)}`;

  /** absent; made but never analyzed (empty); analyzed (filled). pg_stats_ext lists analyzed objects only. */
  async function statisticsState(name: string): Promise<'absent' | 'empty' | 'filled'> {
    const filled = await statisticsFilled(em(), name);
    return filled === null ? 'absent' : filled ? 'filled' : 'empty';
  }

  /**
   * Makes the statistics object unless it is there and analyzed, then analyzes data_records. A
   * failure other than cancellation is logged and left (see the head of this file).
   */
  async function ensureStatistics(name: string, ddl: string): Promise<void> {
    const ctx = Context.current();
    try {
      const state = await statisticsState(name);
      if (state === 'filled') return;
      if (state === 'absent') await runStatement(name, ddl);
      const started = performance.now();
      // ANALYZE waits for another build's lock, and a build waits for ANALYZE's snapshot: the
      // deadlock detector then ends one of the two; ours is asked again a few times.
      for (let attempt = 1; ; attempt++) {
        try {
          await runStatement(name, ANALYZE_RECORDS);
          break;
        } catch (err) {
          const code = (err as { code?: unknown }).code;
          if (attempt >= 3 || (code !== '40P01' && code !== '55P03') || ctx.cancellationSignal.aborted) throw err;
          await new Promise((r) => setTimeout(r, 500 * attempt));
        }
      }
      deps.log.info({ name, ms: Math.round(performance.now() - started) }, 'expression statistics made and data_records analyzed');
    } catch (err) {
      if (err instanceof CancelledFailure || ctx.cancellationSignal.aborted) throw err;
      deps.log.warn({ err, name }, 'expression statistics not made; the index is ready without them');
    }
  }

  const dropStatistics = (name: string) => runStatement(name, dropStatisticsDdl(name), { cancellable: false });

  /** Drops whatever is left of a failed or cancelled build; a failure here is left to the next attempt or request. */
  async function dropQuietly(indexName: string) {
    try {
      await runStatement(indexName, dropStatement(indexName), { cancellable: false });
    } catch (err) {
      deps.log.warn({ err, indexName }, 'invalid index not dropped');
    }
  }

  /**
   * Builds the index unless a valid one of that name exists (a retry after the work was done); an
   * invalid one (an earlier attempt's) is dropped first. Answers ready, or failed with the error
   * text (the invalid index dropped); throws for what a retry may cure, and on cancellation.
   */
  async function build(
    indexName: string,
    ddl: string,
    about: Record<string, unknown>,
    onProgress?: (p: IndexProgress | null) => Promise<void>,
  ): Promise<IndexOutcome> {
    const ctx = Context.current();
    const state = await catalogState(indexName);
    if (state === 'valid') {
      // A session of an earlier attempt could still be finishing it; valid means it is done.
      return { outcome: 'ready' };
    }
    if (state === 'invalid') await runStatement(indexName, dropStatement(indexName));
    const started = performance.now();
    // The last progress sample gives the finish line its figures (the records the build read).
    const sampled: { last: IndexProgress | null } = { last: null };
    deps.log.info({ ...about, indexName, attempt: ctx.info.attempt }, 'index build started');
    try {
      await runStatement(indexName, ddl, {
        onProgress: async (p) => {
          if (p) sampled.last = p;
          await onProgress?.(p);
        },
      });
      deps.log.info(
        {
          ...about,
          indexName,
          ms: Math.round(performance.now() - started),
          tuples: sampled.last?.tuples_total ?? null,
          blocks: sampled.last?.blocks_total ?? null,
        },
        'index build finished',
      );
    } catch (err) {
      if (err instanceof CancelledFailure || ctx.cancellationSignal.aborted) {
        await dropQuietly(indexName);
        throw err;
      }
      if (!isPermanent(err, ctx.info.attempt)) {
        deps.log.warn({ err, indexName, attempt: ctx.info.attempt }, 'index build interrupted; it will be tried again');
        throw err;
      }
      deps.log.warn({ err, indexName }, 'index build failed');
      await dropQuietly(indexName);
      return { outcome: 'failed', error: messageOf(err) };
    }
    return (await catalogState(indexName)) === 'valid' ? { outcome: 'ready' } : { outcome: 'failed', error: 'index built but not valid' };
  }

  interface ColumnRef {
    accountId: number;
    tableId: string;
    columnId: string;
  }

  const columnRow = (c: ColumnRef) => indexedColumn(em(), c.accountId, c.tableId, c.columnId);

  async function failColumn(c: ColumnRef, error: string): Promise<IndexOutcome> {
    await columnIndexFailed(em(), c.columnId, error);
    return { outcome: 'failed', error };
  }

  return {
    /** Builds a column's index (pending → building → ready, or failed with index_error). */
    async buildColumnIndex(c: ColumnRef): Promise<IndexOutcome> {
      const row = await columnRow(c);
      if (!row || !row.indexed) return { outcome: 'skipped' };
      const indexName = columnIndexName(c.columnId);
      const statistics = () => ensureStatistics(columnStatisticsName(c.columnId), columnStatisticsDdl(c.columnId, row.key, row.type));
      if (row.index_status === 'ready') {
        if ((await catalogState(indexName)) === 'valid') {
          await statistics(); // an index made before statistics were, or whose statistics failed
          return { outcome: 'ready' };
        }
        // Marked ready but gone (dropped by hand): build it again.
      } else if (row.index_status !== 'pending' && row.index_status !== 'building') {
        return { outcome: 'skipped' }; // failed (until asked again), dropping or never asked
      }
      const moved = await startColumnIndexBuild(em(), c.columnId, indexName);
      if (!moved) return { outcome: 'skipped' };
      const out = await build(
        indexName,
        columnIndexDdl(c.tableId, c.columnId, row.key, row.type),
        { ...c, key: row.key, type: row.type },
        async (p) => {
          await columnIndexProgress(em(), c.columnId, p);
        },
      );
      if (out.outcome === 'failed') return failColumn(c, out.error!);
      // Before ready, so that the first list that may use the index is planned with them.
      await statistics();
      const ready = await columnIndexReady(em(), c.columnId);
      if (ready) deps.log.info({ ...c, indexName }, 'column index ready');
      return ready ? { outcome: 'ready' } : { outcome: 'superseded' };
    },

    /** Drops a column's index (dropping → null, indexed false); the column may be gone already. */
    async dropColumnIndex(c: ColumnRef): Promise<IndexOutcome> {
      const row = await columnRow(c);
      // Asked to build again since (pending, building or ready): the later wish wins.
      if (row && row.index_status !== 'dropping' && row.index_status !== null && row.index_status !== 'failed')
        return { outcome: 'skipped' };
      const indexName = columnIndexName(c.columnId);
      await runStatement(indexName, dropStatement(indexName));
      await dropStatistics(columnStatisticsName(c.columnId));
      await columnIndexDropped(em(), c.columnId);
      return { outcome: 'dropped' };
    },

    /** The build's retries ran out: whatever it left is dropped and the column says failed, with why. */
    async abandonColumnIndex(c: ColumnRef & { error: string }): Promise<IndexOutcome> {
      await dropQuietly(columnIndexName(c.columnId));
      await dropStatistics(columnStatisticsName(c.columnId)).catch((err: unknown) =>
        deps.log.warn({ err, columnId: c.columnId }, 'statistics of an abandoned index not dropped'),
      );
      return failColumn(c, c.error);
    },

    /**
     * Brings the table's search index in line with its searchable columns: builds it over them
     * (dropping one over other columns first: the name is the table's), drops it when there are
     * none or the table is gone, leaves it when it already covers them.
     */
    async syncSearchIndex(t: { accountId: number; tableId: string }): Promise<IndexOutcome> {
      const indexName = searchIndexName(t.tableId);
      const statsName = searchStatisticsName(t.tableId);
      const table = await searchIndexState(em(), t.accountId, t.tableId);
      if (!table) {
        await runStatement(indexName, dropStatement(indexName));
        await dropStatistics(statsName);
        return { outcome: 'dropped' };
      }
      const columns = await searchableColumns(em(), t.tableId);
      const want = searchColumns(columns);
      const covered = table.search_index_columns ?? [];
      const same = want.length === covered.length && want.every((k, i) => k === covered[i]);
      if (!want.length) {
        await searchIndexDropping(em(), t.tableId);
        await runStatement(indexName, dropStatement(indexName));
        await dropStatistics(statsName);
        await searchIndexDropped(em(), t.tableId);
        return { outcome: 'dropped' };
      }
      if (same && table.search_index_status === 'ready' && (await catalogState(indexName)) === 'valid') {
        await ensureStatistics(statsName, searchStatisticsDdl(t.tableId, want));
        return { outcome: 'ready' };
      }
      if (same && table.search_index_status === 'failed') return { outcome: 'skipped' };
      const wantJson = JSON.stringify(want);
      await searchIndexBuilding(em(), t.tableId, wantJson);
      // Same name, other columns: the old index (and the statistics on its expression) go first (until the new one is ready, q scans).
      if (!same) {
        await runStatement(indexName, dropStatement(indexName));
        await dropStatistics(statsName);
      }
      const out = await build(indexName, searchIndexDdl(t.tableId, want), { ...t, search: want });
      if (out.outcome === 'failed') {
        await searchIndexFailed(em(), t.tableId, wantJson, out.error);
        return out;
      }
      await ensureStatistics(statsName, searchStatisticsDdl(t.tableId, want));
      const ready = await searchIndexReady(em(), t.tableId, wantJson);
      return ready ? { outcome: 'ready' } : { outcome: 'superseded' };
    },

    /** A sample of a build's progress, for the workflow's query (null when no build of that index runs). */
    async readIndexProgress(input: { indexName: string }): Promise<IndexProgress | null> {
      return progressOf(input.indexName);
    },
  };
}

export type DataIndexActivities = ReturnType<typeof createDataIndexActivities>;
