import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker, type WorkflowBundle } from '@temporalio/worker';
import type { WebhookActivities, AttemptResult } from '../../../activities/webhooks/webhook-delivery.js';
import type { webhookDeliveryWorkflow, WebhookDeliveryInput } from '../../../workflows/webhooks/webhook-delivery.js';
import { timeSkippingEnv, freshTaskQueue, assertGaps } from '../../support/workflow-env.js';

// The real delivery workflow on the time-skipping test server: its durable timers skip ahead, so the
// whole contract schedule (about 8.6 hours) runs in seconds. The attempt activity is a typed test
// double that notes the test server's clock at every attempt.
let env: TestWorkflowEnvironment;
let bundle: WorkflowBundle;

before(async () => {
  ({ env, bundle } = await timeSkippingEnv('webhooks/webhook-delivery.ts'));
});
after(async () => {
  await env?.teardown();
});

type Outcome = AttemptResult['outcome'];
const statusCodes: Record<Outcome, number | null> = { succeeded: 200, failed: 500, gone: 410, skipped: null };

/** The activities the workflow calls, answering `answers` in turn (the last one repeats). */
function attemptDouble(answers: Outcome[], times: number[], recorded: Array<{ attempt: number; final: boolean }>) {
  const activities: Pick<WebhookActivities, 'deliverWebhookAttempt'> = {
    async deliverWebhookAttempt(a) {
      times.push(await env.currentTimeMs());
      recorded.push({ attempt: a.attempt, final: a.final });
      const outcome = answers[Math.min(times.length - 1, answers.length - 1)];
      const statusCode = statusCodes[outcome];
      return {
        outcome,
        attemptedAt: new Date().toISOString(),
        statusCode,
        latencyMs: 1,
        error: outcome === 'succeeded' ? null : outcome === 'skipped' ? 'endpoint disabled' : `HTTP ${statusCode}`,
        responseExcerpt: null,
        disabled: false,
      };
    },
  };
  return activities;
}

// A retry's pause counts from the end of the attempt before it: on a loaded machine (CI beside other
// jobs) the real time an attempt takes shows in the skipped clock, by a second or more.
const SLACK_MS = 4000;

async function run(input: WebhookDeliveryInput, answers: Outcome[]) {
  const times: number[] = [];
  const recorded: Array<{ attempt: number; final: boolean }> = [];
  const taskQueue = freshTaskQueue('webhook-delivery');
  const worker = await Worker.create({
    connection: env.nativeConnection,
    taskQueue,
    workflowBundle: bundle,
    activities: attemptDouble(answers, times, recorded),
  });
  const result = await worker.runUntil(
    env.client.workflow.execute<typeof webhookDeliveryWorkflow>('webhookDeliveryWorkflow', {
      taskQueue,
      workflowId: `wf-${Math.random()}`,
      args: [input],
    }),
  );
  return { result, calls: times.map((at) => ({ at })), recorded };
}

test(
  'a receiver that never answers 2xx gets attempts at 0, +1 min, +5 min, +30 min, +2 h, +6 h, then the delivery fails',
  { timeout: 60_000 },
  async () => {
    const { result, calls, recorded } = await run({ accountId: 1, eventId: 'evt_x', target: { type: 'endpoint', id: 1 } }, ['failed']);
    assertGaps(calls, [60, 300, 1800, 7200, 21600], SLACK_MS);
    assert.equal(result.status, 'failed');
    assert.equal(result.attempts, 6);
    assert.deepEqual(
      recorded.map((r) => r.final),
      [false, false, false, false, false, true],
      'only the last attempt is recorded as final',
    );
  },
);

test('a 2xx ends the delivery: failing twice then succeeding makes three attempts at 0, +1 min, +6 min', { timeout: 60_000 }, async () => {
  const { result, calls, recorded } = await run({ accountId: 1, eventId: 'evt_y', target: { type: 'endpoint', id: 1 } }, [
    'failed',
    'failed',
    'succeeded',
  ]);
  assertGaps(calls, [60, 300], SLACK_MS);
  assert.equal(result.status, 'succeeded');
  assert.deepEqual(result, { status: 'succeeded', attempts: 3, lastStatusCode: 200, lastError: null });
  assert.deepEqual(
    recorded.map((r) => r.attempt),
    [1, 2, 3],
    'no attempt after the success',
  );
});

test('a first attempt that succeeds is the only one', { timeout: 60_000 }, async () => {
  const { result, calls } = await run({ accountId: 1, eventId: 'evt_w', target: { type: 'endpoint', id: 1 } }, ['succeeded']);
  assertGaps(calls, [], SLACK_MS);
  assert.deepEqual(result, { status: 'succeeded', attempts: 1, lastStatusCode: 200, lastError: null });
});

test('automation callbacks retry 3 times at 30 s, 2 min and 10 min', { timeout: 60_000 }, async () => {
  const { result, calls } = await run(
    { accountId: 1, eventId: '00000000-0000-4000-8000-000000000000', target: { type: 'subscription', id: 1 } },
    ['failed'],
  );
  assertGaps(calls, [30, 120, 600], SLACK_MS);
  assert.equal(result.status, 'failed');
});

test('a disabled target or a 410 Gone ends the delivery at once', { timeout: 60_000 }, async () => {
  for (const outcome of ['skipped', 'gone'] as const) {
    const { result, calls } = await run({ accountId: 1, eventId: 'evt_z', target: { type: 'endpoint', id: 1 } }, [outcome]);
    assertGaps(calls, [], SLACK_MS);
    assert.equal(result.status, 'failed');
  }
});

test('a 410 Gone after a failure is permanent: no further attempt, the delivery fails with the 410', { timeout: 60_000 }, async () => {
  const { result, calls, recorded } = await run({ accountId: 1, eventId: 'evt_g', target: { type: 'endpoint', id: 1 } }, [
    'failed',
    'gone',
  ]);
  assertGaps(calls, [60], SLACK_MS);
  assert.deepEqual(result, { status: 'failed', attempts: 2, lastStatusCode: 410, lastError: 'HTTP 410' });
  assert.deepEqual(
    recorded.map((r) => r.final),
    [false, false],
    'the activity, not the schedule, records a Gone as final',
  );
});

test('a delivery given its own schedule follows it instead of the contract one', { timeout: 60_000 }, async () => {
  const { result, calls } = await run(
    { accountId: 1, eventId: 'evt_s', target: { type: 'endpoint', id: 1 }, retryDelaysSeconds: [5, 10] },
    ['failed'],
  );
  assertGaps(calls, [5, 10], SLACK_MS);
  assert.equal(result.attempts, 3);
});
