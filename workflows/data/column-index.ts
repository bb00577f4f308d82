import {
  ActivityCancellationType,
  CancellationScope,
  condition,
  continueAsNew,
  defineQuery,
  defineSignal,
  isCancellation,
  proxyActivities,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import type { DataIndexActivities, IndexProgress } from '../../activities/data/indexes.js';
import { columnIndexName, searchIndexName } from '../../domain/data/expressions.js';

// The index of one column of a data table, or the table's search (trigram) index (issue 14 point
// 7; notes/commerce-and-data-tables.md §4.7): one workflow per index target, fed by signals
// carrying what is wanted (build or drop) and run one request at a time. The database row holds
// the state the API shows (index_status); every activity moves it under a guard, so a request that
// arrives late or twice changes nothing it should not. A drop asked for while the same column's
// build runs cancels the build (the activity kills its statement and drops the half-built index).

/** What callers ask for. A column request names its column by id (the index name comes from it). */
export type IndexRequest = { kind: 'column'; want: 'build' | 'drop'; columnId: string } | { kind: 'search' };

export interface DataIndexInput {
  accountId: number;
  tableId: string;
  /** The column key, or `$search` for the table's search index (part of the workflow id only). */
  target: string;
  /** The task queue of the index activities (one build at a time per worker: CIC waits for other CICs). */
  indexTaskQueue: string;
  /** Requests carried over a continue-as-new. */
  queued?: IndexRequest[];
}

export interface DataIndexState {
  target: string;
  /** idle: nothing to do; building/dropping/syncing: an activity runs; done: the last request finished. */
  status: 'idle' | 'building' | 'dropping' | 'syncing' | 'done';
  /** The request being worked on, and the ones waiting behind it. */
  current: IndexRequest | null;
  queued: IndexRequest[];
  /** pg_stat_progress_create_index while a build runs (polled; null between samples and builds). */
  phase: string | null;
  blocksDone: number | null;
  blocksTotal: number | null;
  /** The outcome of the last finished request: ready, dropped, failed, skipped, cancelled. */
  last: { request: IndexRequest; outcome: string; error?: string } | null;
  handled: number;
}

export const indexWantedSignal = defineSignal<[IndexRequest]>('indexWanted');
export const indexStateQuery = defineQuery<DataIndexState>('indexState');

const PROGRESS_EVERY = '10 seconds';

// Status moves and progress samples: short statements on the main queue.
const quick = proxyActivities<Pick<DataIndexActivities, 'readIndexProgress'>>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '10 seconds', maximumAttempts: 3 },
});

const sameTarget = (a: IndexRequest, b: IndexRequest) =>
  a.kind === b.kind && (a.kind === 'search' || (b.kind === 'column' && a.columnId === b.columnId));

export async function dataIndexWorkflow(input: DataIndexInput): Promise<DataIndexState> {
  // A build holds its connection for as long as the table takes (minutes on millions of rows):
  // no start-to-close limit worth having, a heartbeat instead, so a killed worker's attempt is
  // retried within the heartbeat timeout. Permanent failures come back as a failed outcome.
  const index = proxyActivities<Omit<DataIndexActivities, 'readIndexProgress'>>({
    taskQueue: input.indexTaskQueue,
    startToCloseTimeout: '6 hours',
    heartbeatTimeout: '10 seconds',
    cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
    retry: { initialInterval: '2 seconds', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 20 },
  });

  const queue: IndexRequest[] = [...(input.queued ?? [])];
  const state: DataIndexState = {
    target: input.target,
    status: 'idle',
    current: null,
    queued: queue,
    phase: null,
    blocksDone: null,
    blocksTotal: null,
    last: null,
    handled: 0,
  };
  let scope: CancellationScope | null = null;
  let stopping = false;

  setHandler(indexStateQuery, () => state);
  setHandler(indexWantedSignal, (req) => {
    // The newest request for a target replaces any still waiting: only the last wish counts.
    for (let i = queue.length - 1; i >= 0; i--) if (sameTarget(queue[i], req)) queue.splice(i, 1);
    const cur = state.current;
    if (cur && !stopping && sameTarget(cur, req)) {
      // The running request already does what is asked: nothing to add.
      if (req.kind === 'search' || (cur.kind === 'column' && cur.want === req.want)) {
        if (req.kind === 'search') queue.push(req);
        return;
      }
      // The opposite of a running column request: stop it, then do this one.
      stopping = true;
      scope?.cancel();
    }
    queue.push(req);
  });

  const sample = (p: IndexProgress | null) => {
    state.phase = p?.phase ?? null;
    state.blocksDone = p?.blocks_done ?? null;
    state.blocksTotal = p?.blocks_total ?? null;
  };

  /** Samples progress into the query's state while `work` runs. */
  async function withProgress<T>(indexName: string, work: Promise<T>): Promise<T> {
    let finished = false;
    // Never fails the workflow: a cancelled scope ends the sampling with the work.
    const watching = (async () => {
      while (!(await condition(() => finished, PROGRESS_EVERY))) {
        sample(await quick.readIndexProgress({ indexName }).catch(() => null));
      }
    })().catch(() => undefined);
    try {
      return await work;
    } finally {
      finished = true;
      await watching;
      sample(null);
    }
  }

  async function handle(req: IndexRequest): Promise<{ outcome: string; error?: string }> {
    if (req.kind === 'search') {
      state.status = 'syncing';
      return withProgress(searchIndexName(input.tableId), index.syncSearchIndex({ accountId: input.accountId, tableId: input.tableId }));
    }
    const key = { accountId: input.accountId, tableId: input.tableId, columnId: req.columnId };
    if (req.want === 'drop') {
      state.status = 'dropping';
      return index.dropColumnIndex(key);
    }
    state.status = 'building';
    try {
      return await withProgress(columnIndexName(req.columnId), index.buildColumnIndex(key));
    } catch (err) {
      if (isCancellation(err)) throw err;
      // Retries ran out (the database unreachable for long, or a fault of ours): say so on the row.
      const error = err instanceof Error ? (err.cause instanceof Error ? err.cause.message : err.message) : String(err);
      return CancellationScope.nonCancellable(() => index.abandonColumnIndex({ ...key, error }));
    }
  }

  // The request normally comes with the start (signal-with-start) and is handled before this line.
  if (!queue.length) await condition(() => queue.length > 0, '1 minute');
  while (queue.length) {
    const req = queue.shift()!;
    state.current = req;
    const s = new CancellationScope();
    scope = s;
    try {
      state.last = { request: req, ...(await s.run(() => handle(req))) };
    } catch (err) {
      if (!isCancellation(err)) throw err;
      state.last = { request: req, outcome: 'cancelled' };
    }
    scope = null;
    stopping = false;
    state.current = null;
    state.status = 'idle';
    state.handled++;
    if (queue.length && workflowInfo().continueAsNewSuggested) {
      await continueAsNew<typeof dataIndexWorkflow>({ ...input, queued: [...queue] });
    }
  }
  state.status = 'done';
  return state;
}
