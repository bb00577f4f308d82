import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker, Runtime, DefaultLogger, makeTelemetryFilterString, bundleWorkflowCode } from '@temporalio/worker';
import type { AttemptResult } from '../../activities/webhooks/webhook-delivery.js';
import type { WebhookDeliveryInput } from '../../workflows/webhooks/webhook-delivery.js';

// The real delivery workflow on the time-skipping test server: its durable timers skip ahead, so the
// whole contract schedule (about 8.6 hours) runs in seconds. The attempt activity is a test double
// that notes the test server's clock at every attempt.
const require = createRequire(import.meta.url);
const serverPath = process.env.TEMPORAL_TEST_SERVER ?? path.resolve(import.meta.dirname, '../../.venv/bin/temporal-test-server');
let env: TestWorkflowEnvironment;
let bundle: { code: string };

before(async () => {
  Runtime.install({
    logger: new DefaultLogger('WARN'),
    telemetryOptions: { logging: { filter: makeTelemetryFilterString({ core: 'ERROR' }), forward: {} } },
  });
  assert.ok(fs.existsSync(serverPath), `time-skipping server missing at ${serverPath}: run node scripts/bootstrap.mjs`);
  env = await TestWorkflowEnvironment.createTimeSkipping({ server: { executable: { type: 'existing-path', path: serverPath } } });
  bundle = await bundleWorkflowCode({
    workflowsPath: require.resolve('../../workflows/webhooks/webhook-delivery.ts'),
    logger: { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error() {} } as never,
  });
});
after(async () => {
  await env?.teardown();
});

async function run(input: WebhookDeliveryInput, answers: Array<AttemptResult['outcome']>) {
  const times: number[] = [];
  const recorded: Array<{ attempt: number; final: boolean }> = [];
  const taskQueue = `schedule-${Math.random()}`;
  const worker = await Worker.create({
    connection: env.nativeConnection,
    taskQueue,
    workflowBundle: bundle,
    activities: {
      async deliverWebhookAttempt(a: { attempt: number; final: boolean }) {
        times.push(await env.currentTimeMs());
        recorded.push({ attempt: a.attempt, final: a.final });
        const outcome = answers[Math.min(times.length - 1, answers.length - 1)];
        return {
          outcome,
          attemptedAt: new Date().toISOString(),
          statusCode: outcome === 'succeeded' ? 200 : 500,
          latencyMs: 1,
          error: outcome === 'succeeded' ? null : 'HTTP 500',
          responseExcerpt: null,
          disabled: false,
        };
      },
    },
  });
  const result = await worker.runUntil(
    env.client.workflow.execute('webhookDeliveryWorkflow', { taskQueue, workflowId: `wf-${Math.random()}`, args: [input] }),
  );
  const offsets = times.map((t) => Math.round((t - times[0]) / 1000));
  return { result, offsets, recorded };
}

test(
  'a receiver that never answers 2xx gets attempts at 0, +1 min, +5 min, +30 min, +2 h, +6 h, then the delivery fails',
  { timeout: 60_000 },
  async () => {
    const { result, offsets, recorded } = await run({ accountId: 1, eventId: 'evt_x', target: { type: 'endpoint', id: 1 } }, ['failed']);
    const gaps = offsets.slice(1).map((o, i) => o - offsets[i]);
    assert.deepEqual(gaps, [60, 300, 1800, 7200, 21600]);
    assert.deepEqual(offsets, [0, 60, 360, 2160, 9360, 30960]);
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
  const { result, offsets } = await run({ accountId: 1, eventId: 'evt_y', target: { type: 'endpoint', id: 1 } }, [
    'failed',
    'failed',
    'succeeded',
  ]);
  assert.deepEqual(offsets, [0, 60, 360]);
  assert.equal(result.status, 'succeeded');
});

test('automation callbacks retry 3 times at 30 s, 2 min and 10 min', { timeout: 60_000 }, async () => {
  const { result, offsets } = await run(
    { accountId: 1, eventId: '00000000-0000-4000-8000-000000000000', target: { type: 'subscription', id: 1 } },
    ['failed'],
  );
  assert.deepEqual(offsets, [0, 30, 150, 750]);
  assert.equal(result.status, 'failed');
});

test('a disabled target or a 410 Gone ends the delivery at once', { timeout: 60_000 }, async () => {
  for (const outcome of ['skipped', 'gone'] as const) {
    const { result, offsets } = await run({ accountId: 1, eventId: 'evt_z', target: { type: 'endpoint', id: 1 } }, [outcome]);
    assert.deepEqual(offsets, [0]);
    assert.equal(result.status, 'failed');
  }
});
