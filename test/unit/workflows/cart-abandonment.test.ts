import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker, type WorkflowBundle } from '@temporalio/worker';
import { Context } from '@temporalio/activity';
import type { CartTimerActivities } from '../../../activities/shop/cart-abandonment.js';
import type { QuietVerdict } from '../../../services/shop/timers.js';
import type { cartAbandonmentWorkflow, CartAbandonmentInput } from '../../../workflows/shop/cart-abandonment.js';
import { timeSkippingEnv, freshTaskQueue } from '../../support/workflow-env.js';

// A basket's quiet-period timer on the time-skipping server: the quiet period, activity starting it
// again, the order ending it, the database's later activity winning over the timer, expiry.
let env: TestWorkflowEnvironment;
let bundle: WorkflowBundle;

before(async () => {
  ({ env, bundle } = await timeSkippingEnv('shop/cart-abandonment.ts'));
});
after(async () => {
  await env?.teardown();
});

const QUIET = 3600;
const EXPIRE = 7 * 24 * 3600;
const input: CartAbandonmentInput = { accountId: 7, cartId: 42, quietSeconds: QUIET, expireSeconds: EXPIRE };

/** Judge doubles answering `verdicts` in turn, recording each call's phase and (server) time. */
function judge(verdicts: QuietVerdict[]) {
  const calls: Array<{ phase: string; at: number }> = [];
  const activities: CartTimerActivities = {
    async judgeQuietCart(i) {
      calls.push({ phase: i.phase, at: Context.current().info.scheduledTimestampMs });
      return verdicts.shift() ?? { kind: 'final', outcome: 'gone' };
    },
  };
  return { activities, calls };
}

async function withWorker<T>(activities: CartTimerActivities, fn: (taskQueue: string) => Promise<T>): Promise<T> {
  const taskQueue = freshTaskQueue('cart');
  const worker = await Worker.create({ connection: env.nativeConnection, taskQueue, workflowBundle: bundle, activities });
  return worker.runUntil(fn(taskQueue));
}

const start = (taskQueue: string, args = input) =>
  env.client.workflow.start<typeof cartAbandonmentWorkflow>('cartAbandonmentWorkflow', {
    taskQueue,
    workflowId: `cart-abandonment-${Math.random()}`,
    args: [args],
  });

test(
  'quiet for the quiet period: judged once (abandoned there when it holds items), then expired after the expiry period',
  { timeout: 60_000 },
  async () => {
    const d = judge([{ kind: 'checked' }, { kind: 'final', outcome: 'expired' }]);
    const result = await withWorker(d.activities, async (q) => {
      const h = await start(q);
      return h.result();
    });
    assert.equal(result, 'expired');
    assert.deepEqual(
      d.calls.map((c) => c.phase),
      ['quiet', 'expiry'],
    );
    const gap = (d.calls[1].at - d.calls[0].at) / 1000;
    assert.ok(Math.abs(gap - (EXPIRE - QUIET)) < 5, `expiry judged ${gap}s after the quiet check`);
  },
);

test('activity starts the quiet period again; an order ends the timer without a judgement', { timeout: 60_000 }, async () => {
  const d = judge([{ kind: 'checked' }]);
  const result = await withWorker(d.activities, async (q) => {
    const h = await start(q);
    await env.sleep(QUIET * 600);
    await h.signal('activity');
    await env.sleep(QUIET * 600);
    assert.equal(d.calls.length, 0, 'the quiet period started again at the activity');
    await env.sleep(QUIET * 600);
    assert.deepEqual(
      d.calls.map((c) => c.phase),
      ['quiet'],
    );
    await h.signal('activity');
    await h.signal('closed');
    return h.result();
  });
  assert.equal(result, 'ordered');
  assert.equal(d.calls.length, 1);
});

test('activity the database saw but no signal brought: the timer waits out the rest, then judges again', { timeout: 60_000 }, async () => {
  const d = judge([{ kind: 'wait', seconds: 600 }, { kind: 'checked' }, { kind: 'final', outcome: 'ordered' }]);
  const result = await withWorker(d.activities, async (q) => (await start(q)).result());
  assert.equal(result, 'ordered');
  assert.deepEqual(
    d.calls.map((c) => c.phase),
    ['quiet', 'quiet', 'expiry'],
  );
  const waited = (d.calls[1].at - d.calls[0].at) / 1000;
  assert.ok(Math.abs(waited - 600) < 5, `judged again after ${waited}s`);
});

test('a basket deleted meanwhile ends the timer', { timeout: 60_000 }, async () => {
  const d = judge([{ kind: 'final', outcome: 'gone' }]);
  const result = await withWorker(d.activities, async (q) => (await start(q)).result());
  assert.equal(result, 'gone');
});
