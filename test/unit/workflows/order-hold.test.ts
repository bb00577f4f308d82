import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker, type WorkflowBundle } from '@temporalio/worker';
import type { OrderHoldActivities } from '../../../activities/orders/order-hold.js';
import { orderHoldQuery, orderMovedOnSignal, type orderHoldWorkflow, type OrderHoldState } from '../../../workflows/orders/order-hold.js';
import { timeSkippingEnv, freshTaskQueue } from '../../support/workflow-env.js';

// The order-hold workflow on the time-skipping server: a 48-hour TTL passes in moments. The activity
// double keeps one hold with the same guard as the SQL (held → one other status, once), so the
// confirmation-against-expiry race is decided as it is in the database.
let env: TestWorkflowEnvironment;
let bundle: WorkflowBundle;

before(async () => {
  ({ env, bundle } = await timeSkippingEnv('index.ts'));
});
after(async () => {
  await env?.teardown();
});

const HOUR = 3600_000;

/** One hold of 3 units and its guarded move; `moves` records every transition that won. */
function holdDouble() {
  const hold = { status: 'held' as string, moves: [] as string[] };
  const move = (to: string) => {
    if (hold.status !== 'held') return false;
    hold.status = to;
    hold.moves.push(to);
    return true;
  };
  const activities: Pick<OrderHoldActivities, 'expireOrderHolds'> = {
    async expireOrderHolds() {
      return move('expired') ? { holds: 1, units: 3 } : { holds: 0, units: 0 };
    },
  };
  return { hold, move, activities };
}

async function run(activities: Pick<OrderHoldActivities, 'expireOrderHolds'>, fn: (taskQueue: string) => Promise<OrderHoldState>) {
  const taskQueue = freshTaskQueue('order-hold');
  const worker = await Worker.create({ connection: env.nativeConnection, taskQueue, workflowBundle: bundle, activities });
  return worker.runUntil(fn(taskQueue));
}

const start = async (taskQueue: string, ttlMs = 48 * HOUR) =>
  env.client.workflow.start<typeof orderHoldWorkflow>('orderHoldWorkflow', {
    taskQueue,
    workflowId: `order-hold-${Math.random()}`,
    args: [{ accountId: 1, orderId: 7, expiresAt: new Date((await env.currentTimeMs()) + ttlMs).toISOString() }],
  });

test('an unanswered pending order: the hold is released at its expiry, not before', { timeout: 60_000 }, async () => {
  const d = holdDouble();
  let expiredAt = 0;
  let begun = 0;
  const activities = {
    async expireOrderHolds() {
      expiredAt = await env.currentTimeMs();
      return d.activities.expireOrderHolds({ accountId: 1, orderId: 7 });
    },
  };
  const state = await run(activities, async (q) => {
    // Read once the worker runs: the test server may skip time while a worker starts on a loaded machine.
    begun = await env.currentTimeMs();
    const h = await start(q);
    const waiting = await h.query(orderHoldQuery);
    assert.equal(waiting.phase, 'waiting');
    assert.equal(waiting.orderId, 7);
    return h.result();
  });
  assert.equal(state.phase, 'expired');
  assert.deepEqual(state.released, { holds: 1, units: 3 });
  assert.deepEqual(d.hold.moves, ['expired']);
  const after = (expiredAt - begun) / HOUR;
  assert.ok(after >= 48 && after < 48.1, `expired after ${after} h`);
});

test('a confirmation before expiry cancels the timer: nothing expires', { timeout: 60_000 }, async () => {
  const d = holdDouble();
  const state = await run(d.activities, async (q) => {
    const h = await start(q);
    await env.sleep(2 * HOUR);
    assert.ok(d.move('committed'));
    await h.signal(orderMovedOnSignal, { status: 'confirmed' });
    return h.result();
  });
  assert.equal(state.phase, 'moved_on');
  assert.equal(state.movedTo, 'confirmed');
  assert.deepEqual(d.hold.moves, ['committed']);
});

test('back to pending is not moving on: the timer still runs and releases the hold', { timeout: 60_000 }, async () => {
  const d = holdDouble();
  const state = await run(d.activities, async (q) => {
    const h = await start(q, HOUR);
    await h.signal(orderMovedOnSignal, { status: 'pending' });
    return h.result();
  });
  assert.equal(state.phase, 'expired');
  assert.deepEqual(d.hold.moves, ['expired']);
});

test(
  'the race: a confirmation that wins just before the timer, its signal lost, leaves the expiry nothing to release',
  { timeout: 60_000 },
  async () => {
    const d = holdDouble();
    const state = await run(d.activities, async (q) => {
      const h = await start(q, HOUR);
      await env.sleep(HOUR - 1000);
      assert.ok(d.move('committed'), 'the confirmation wins');
      return h.result();
    });
    assert.equal(state.phase, 'expired');
    assert.deepEqual(state.released, { holds: 0, units: 0 });
    assert.deepEqual(d.hold.moves, ['committed'], 'exactly one winner');
  },
);

test('the race the other way: the expiry wins and a late confirmation finds nothing held', { timeout: 60_000 }, async () => {
  const d = holdDouble();
  const state = await run(d.activities, async (q) => {
    const h = await start(q, HOUR);
    const result = await h.result();
    assert.equal(d.move('committed'), false, 'the confirmation loses');
    await h.signal(orderMovedOnSignal, { status: 'confirmed' }).catch(() => undefined);
    return result;
  });
  assert.equal(state.phase, 'expired');
  assert.deepEqual(d.hold.moves, ['expired']);
});

test('an expiry already past when the workflow starts (a late reconciler start) releases at once', { timeout: 60_000 }, async () => {
  const d = holdDouble();
  const state = await run(d.activities, async (q) => (await start(q, -5 * HOUR)).result());
  assert.equal(state.phase, 'expired');
  assert.deepEqual(d.hold.moves, ['expired']);
});
