import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Context, ApplicationFailure } from '@temporalio/activity';
import { Worker, type WorkflowBundle } from '@temporalio/worker';
import type { DataIndexActivities, IndexOutcome } from '../../../activities/data/indexes.js';
import {
  indexStateQuery,
  indexWantedSignal,
  type dataIndexWorkflow,
  type DataIndexState,
  type IndexRequest,
} from '../../../workflows/data/column-index.js';
import { dataIndexStarter } from '../../../workflows/data/column-index.starter.js';
import { timeSkippingEnv, freshTaskQueue } from '../../support/workflow-env.js';

// The index workflow on the time-skipping server, with a double of the column row that moves its
// index_status under the same guards as the SQL (pending → building → ready | failed; dropping →
// null), so what the workflow asks for in which order is checked against the states it leaves.
let env: TestWorkflowEnvironment;
let bundle: WorkflowBundle;

before(async () => {
  ({ env, bundle } = await timeSkippingEnv('index.ts'));
});
after(async () => {
  await env?.teardown();
});

const COLUMN = '6f1c2a7e-0b4d-4c1e-9a55-3d2f1e0c9b11';
const TABLE = '0a9b8c7d-6e5f-4a3b-8c2d-1e0f9a8b7c6d';

interface Row {
  status: string | null;
  indexed: boolean;
  error: string | null;
  /** Every status the row took, in order. */
  moves: (string | null)[];
  calls: string[];
}

function rowDouble(initial: string | null) {
  const row: Row = { status: initial, indexed: initial !== null, error: null, moves: [initial], calls: [] };
  const move = (from: (string | null)[], to: string | null) => {
    if (!from.includes(row.status)) return false;
    row.status = to;
    row.moves.push(to);
    return true;
  };
  return { row, move };
}

type Acts = DataIndexActivities;
const outcome = (o: IndexOutcome['outcome'], error?: string): IndexOutcome => (error ? { outcome: o, error } : { outcome: o });

/** A double whose build calls `during` while building (pending → building), then moves to ready. */
function activities(d: ReturnType<typeof rowDouble>, during?: () => Promise<void>): Acts {
  return {
    async buildColumnIndex() {
      d.row.calls.push('build');
      if (!d.row.indexed || !d.move(['pending', 'building'], 'building')) return outcome('skipped');
      await during?.();
      return d.move(['building'], 'ready') ? outcome('ready') : outcome('superseded');
    },
    async dropColumnIndex() {
      d.row.calls.push('drop');
      if (d.row.status !== 'dropping') return outcome('skipped');
      d.move(['dropping'], null);
      d.row.indexed = false;
      return outcome('dropped');
    },
    async abandonColumnIndex(input) {
      d.row.calls.push('abandon');
      d.move(['pending', 'building'], 'failed');
      d.row.error = input.error;
      return outcome('failed', input.error);
    },
    async syncSearchIndex() {
      d.row.calls.push('sync');
      return outcome('ready');
    },
    async readIndexProgress() {
      return { phase: 'building index: scanning table', blocks_done: 3, blocks_total: 10 };
    },
  };
}

/** Waits for `gate` heartbeating, as a real build does (a silent activity past its heartbeat timeout is retried). */
async function heartbeatUntil(gate: Promise<void>) {
  const ctx = Context.current();
  let open = false;
  void gate.then(() => (open = true));
  while (!open) {
    ctx.heartbeat();
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function run<T>(acts: Acts, fn: (taskQueue: string) => Promise<T>): Promise<T> {
  const taskQueue = freshTaskQueue('data-index');
  const worker = await Worker.create({ connection: env.nativeConnection, taskQueue, workflowBundle: bundle, activities: acts });
  return worker.runUntil(fn(taskQueue));
}

/** As services/data/indexes.ts asks: signal-with-start with the starter's id policies. */
async function request(taskQueue: string, req: IndexRequest, workflowId = `data-index/1/${TABLE}/amount-${taskQueue}`) {
  return env.client.workflow.signalWithStart<typeof dataIndexWorkflow, [IndexRequest]>('dataIndexWorkflow', {
    taskQueue,
    workflowId,
    args: [{ accountId: 1, tableId: TABLE, target: 'amount', indexTaskQueue: taskQueue }],
    workflowIdReusePolicy: dataIndexStarter.workflowIdReusePolicy,
    workflowIdConflictPolicy: dataIndexStarter.workflowIdConflictPolicy,
    signal: indexWantedSignal,
    signalArgs: [req],
  });
}

const build: IndexRequest = { kind: 'column', want: 'build', columnId: COLUMN };
const drop: IndexRequest = { kind: 'column', want: 'drop', columnId: COLUMN };

test('a build request moves the column pending → building → ready, and the query shows the build', { timeout: 60_000 }, async () => {
  const d = rowDouble('pending');
  let seen: DataIndexState | null = null;
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const state = await run(
    activities(d, () => heartbeatUntil(gate)),
    async (q) => {
      const h = await request(q, build);
      // The build is under way: the query answers with what is running and a progress sample.
      for (let i = 0; i < 50 && !(seen?.status === 'building' && seen.blocksTotal); i++) {
        await env.sleep(11_000);
        seen = await h.query(indexStateQuery);
      }
      release();
      return h.result();
    },
  );
  assert.equal(seen!.status, 'building');
  assert.deepEqual(seen!.current, build);
  assert.equal(seen!.phase, 'building index: scanning table');
  assert.equal(seen!.blocksDone, 3);
  assert.equal(seen!.blocksTotal, 10);
  assert.deepEqual(d.row.moves, ['pending', 'building', 'ready']);
  assert.equal(state.status, 'done');
  assert.deepEqual(state.last, { request: build, outcome: 'ready' });
  assert.equal(state.phase, null, 'no progress once the build is over');
});

test('a build the database refuses ends failed with its error; nothing is retried', { timeout: 60_000 }, async () => {
  const d = rowDouble('pending');
  const acts = activities(d);
  acts.buildColumnIndex = async () => {
    d.row.calls.push('build');
    d.move(['pending'], 'building');
    d.move(['building'], 'failed');
    d.row.error = 'index row size 5120 exceeds btree version 4 maximum 2704';
    return outcome('failed', d.row.error);
  };
  const state = await run(acts, async (q) => (await request(q, build)).result());
  assert.deepEqual(d.row.moves, ['pending', 'building', 'failed']);
  assert.deepEqual(d.row.calls, ['build']);
  assert.equal(state.last?.outcome, 'failed');
  assert.match(state.last?.error ?? '', /exceeds btree/);
});

test('a build whose activity keeps failing is abandoned: the column says failed with why', { timeout: 60_000 }, async () => {
  const d = rowDouble('pending');
  const acts = activities(d);
  acts.buildColumnIndex = async () => {
    d.row.calls.push('build');
    d.move(['pending'], 'building');
    throw ApplicationFailure.nonRetryable('invalid index name', 'Bug');
  };
  const state = await run(acts, async (q) => (await request(q, build)).result());
  assert.deepEqual(d.row.calls, ['build', 'abandon']);
  assert.deepEqual(d.row.moves, ['pending', 'building', 'failed']);
  assert.equal(d.row.error, 'invalid index name');
  assert.equal(state.last?.outcome, 'failed');
});

test('a drop during a build cancels the build, then drops: dropping → null, indexed false', { timeout: 60_000 }, async () => {
  const d = rowDouble('pending');
  let building!: () => void;
  const started = new Promise<void>((r) => (building = r));
  let cancelled = false;
  const acts = activities(d, async () => {
    building();
    // A build that would take long: it heartbeats until the workflow cancels it.
    const ctx = Context.current();
    for (;;) {
      ctx.heartbeat();
      try {
        await Promise.race([ctx.cancelled, new Promise((r) => setTimeout(r, 100))]);
      } catch (err) {
        cancelled = true;
        throw err;
      }
    }
  });
  const state = await run(acts, async (q) => {
    const h = await request(q, build);
    await started;
    // What the operator API does: the row says dropping, then the request follows.
    d.move(['building'], 'dropping');
    await request(q, drop, h.workflowId);
    return h.result();
  });
  assert.ok(cancelled, 'the build saw its cancellation');
  assert.deepEqual(d.row.calls, ['build', 'drop']);
  assert.deepEqual(d.row.moves, ['pending', 'building', 'dropping', null]);
  assert.equal(d.row.indexed, false);
  assert.equal(state.handled, 2);
  assert.deepEqual(state.last, { request: drop, outcome: 'dropped' });
});

test('build after drop: the build waits for the drop, repeats are coalesced, the last wish wins', { timeout: 60_000 }, async () => {
  const d = rowDouble('dropping');
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  let dropping!: () => void;
  const started = new Promise<void>((r) => (dropping = r));
  const acts = activities(d);
  const plainDrop = acts.dropColumnIndex;
  acts.dropColumnIndex = async (c) => {
    const out = await plainDrop(c);
    dropping();
    await heartbeatUntil(gate);
    return out;
  };
  const state = await run(acts, async (q) => {
    const h = await request(q, drop);
    await started;
    // The operator marks the column indexed again (the row says pending), and changes its mind twice
    // more while the drop is finishing: only the last request counts, once.
    d.move([null], 'pending');
    d.row.indexed = true;
    await request(q, build, h.workflowId);
    await request(q, drop, h.workflowId);
    await request(q, build, h.workflowId);
    const waiting = await h.query(indexStateQuery);
    assert.deepEqual(waiting.queued, [build]);
    release();
    return h.result();
  });
  assert.deepEqual(d.row.calls, ['drop', 'build']);
  assert.deepEqual(d.row.moves, ['dropping', null, 'pending', 'building', 'ready']);
  assert.equal(state.handled, 2);
  assert.deepEqual(state.last, { request: build, outcome: 'ready' });
});

test('search index requests while a sync runs are coalesced into one more sync', { timeout: 60_000 }, async () => {
  const d = rowDouble(null);
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  let syncing!: () => void;
  const started = new Promise<void>((r) => (syncing = r));
  const acts = activities(d);
  acts.syncSearchIndex = async () => {
    d.row.calls.push('sync');
    syncing();
    await heartbeatUntil(gate);
    return outcome('ready');
  };
  const state = await run(acts, async (q) => {
    const id = `data-index/1/${TABLE}/$search-${q}`;
    const h = await request(q, { kind: 'search' }, id);
    await started;
    for (let i = 0; i < 3; i++) await request(q, { kind: 'search' }, id);
    release();
    return h.result();
  });
  assert.deepEqual(d.row.calls, ['sync', 'sync']);
  assert.equal(state.handled, 2);
});
