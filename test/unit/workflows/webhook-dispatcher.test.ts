import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker, type WorkflowBundle } from '@temporalio/worker';
import { ActivityFailure, ApplicationFailure, defaultPayloadConverter } from '@temporalio/common';
import { Context } from '@temporalio/activity';
import { WorkflowFailedError } from '@temporalio/client';
import type { WebhookDispatchActivities, DispatchWebhooksResult } from '../../../activities/webhooks/webhook-dispatch.js';
import {
  webhookDispatcherStateQuery,
  type webhookDispatcherWorkflow,
  type WebhookDispatcherInput,
  type WebhookDispatcherState,
} from '../../../workflows/webhooks/webhook-dispatcher.js';
import { timeSkippingEnv, freshTaskQueue } from '../../support/workflow-env.js';

// The webhook dispatcher (first attempts of queued deliveries, running for good) on the
// time-skipping server with a typed double of its one activity. As in outbound-dispatcher.test.ts,
// the double answers a script and then throws a non-retryable failure, which ends the run so that
// the test can await it.
let env: TestWorkflowEnvironment;
let bundle: WorkflowBundle;

before(async () => {
  ({ env, bundle } = await timeSkippingEnv('webhooks/webhook-dispatcher.ts'));
});
after(async () => {
  await env?.teardown();
});

const SCRIPT_DONE = 'ScriptDone';
type Step = DispatchWebhooksResult | (() => never);

function dispatchDouble(script: Step[]) {
  const calls: Array<{ attempt: number; taskQueue: string; runId: string; args: Record<string, unknown> }> = [];
  const activities: WebhookDispatchActivities = {
    async dispatchWebhookDeliveries(args) {
      const info = Context.current().info;
      calls.push({ attempt: info.attempt, taskQueue: info.taskQueue, runId: info.workflowExecution!.runId, args: { ...args } });
      if (calls.length > script.length) throw ApplicationFailure.nonRetryable('the test script ran out', SCRIPT_DONE);
      const step = script[calls.length - 1];
      return typeof step === 'function' ? step() : step;
    },
  };
  return { activities, calls };
}

const ran = (attempted: number, succeeded: number, lastError: string | null = null): DispatchWebhooksResult => ({
  attempted,
  succeeded,
  handedOver: attempted - succeeded,
  lastError,
});

const input = (over: Partial<WebhookDispatcherInput> = {}): WebhookDispatcherInput => ({
  sliceSize: 100,
  concurrency: 16,
  leaseSeconds: 60,
  idleWaitMs: 2000,
  ...over,
});

/** Runs the dispatcher until the script runs out; answers why it ended and its last state. */
async function run(script: Step[], over: Partial<WebhookDispatcherInput> = {}) {
  const d = dispatchDouble(script);
  const taskQueue = freshTaskQueue('webhook-dispatcher');
  const workflowId = `webhook-dispatcher/test-${Math.random()}`;
  const worker = await Worker.create({ connection: env.nativeConnection, taskQueue, workflowBundle: bundle, activities: d.activities });
  return worker.runUntil(async () => {
    const handle = await env.client.workflow.start<typeof webhookDispatcherWorkflow>('webhookDispatcherWorkflow', {
      taskQueue,
      workflowId,
      args: [input(over)],
    });
    const failure = await handle.result().then(
      () => assert.fail('a dispatcher never ends by itself'),
      (err: unknown) => err,
    );
    const state = await handle.query(webhookDispatcherStateQuery);
    return { ...d, failure, state, taskQueue, workflowId, firstRunId: handle.firstExecutionRunId };
  });
}

function causeType(err: unknown): string | undefined {
  assert.ok(err instanceof WorkflowFailedError, `not a workflow failure: ${String(err)}`);
  assert.ok(err.cause instanceof ActivityFailure);
  assert.ok(err.cause.cause instanceof ApplicationFailure);
  return err.cause.cause.type ?? undefined;
}

test(
  'each run dispatches from the dispatcher queue and adds to its counters; the last error stays until another',
  { timeout: 60_000 },
  async () => {
    const r = await run([ran(10, 10), ran(4, 1, 'HTTP 503'), ran(0, 0), ran(2, 2)]);
    assert.equal(causeType(r.failure), SCRIPT_DONE);
    assert.equal(r.calls.length, 5);
    for (const c of r.calls) {
      assert.deepEqual(c.args, {
        sliceSize: 100,
        concurrency: 16,
        leaseSeconds: 60,
        idleWaitMs: 2000,
        maxSeconds: 30,
        taskQueue: r.taskQueue,
      });
      assert.equal(c.taskQueue, r.taskQueue, 'the activity runs where the retry workflows it starts will run');
    }
    assert.deepEqual(r.state, {
      iteration: 5,
      attempted: 16,
      succeeded: 13,
      handedOver: 3,
      lastError: 'HTTP 503',
    } satisfies WebhookDispatcherState);
  },
);

test('a failing activity run (the database, say) is retried by its policy and counted once', { timeout: 60_000 }, async () => {
  const r = await run([
    () => {
      throw new Error('Connection terminated unexpectedly');
    },
    ran(3, 3),
  ]);
  assert.equal(causeType(r.failure), SCRIPT_DONE);
  assert.deepEqual(
    r.calls.map((c) => c.attempt),
    [1, 2, 1],
  );
  assert.deepEqual(r.state, { iteration: 2, attempted: 3, succeeded: 3, handedOver: 0, lastError: null });
});

test('a non-retryable failure is not retried: it ends the dispatcher run', { timeout: 60_000 }, async () => {
  const r = await run([
    ran(1, 1),
    () => {
      throw ApplicationFailure.nonRetryable('relation "webhook_deliveries" does not exist', 'Broken');
    },
    ran(1, 1),
  ]);
  assert.equal(causeType(r.failure), 'Broken');
  assert.deepEqual(
    r.calls.map((c) => c.attempt),
    [1, 1],
  );
  assert.equal(r.state.iteration, 2);
});

test('after runsPerExecution runs the dispatcher continues as new, carrying its counters', { timeout: 60_000 }, async () => {
  const r = await run([ran(5, 4), ran(5, 4), ran(5, 4), ran(1, 1), ran(1, 0, 'timed out')], { runsPerExecution: 3 });
  assert.equal(causeType(r.failure), SCRIPT_DONE);
  const runs = [...new Set(r.calls.map((c) => c.runId))];
  assert.equal(runs.length, 2, 'three runs in the first execution, the rest in the second');
  assert.deepEqual(
    r.calls.map((c) => runs.indexOf(c.runId)),
    [0, 0, 0, 1, 1, 1],
  );
  const history = await env.client.workflow.getHandle(r.workflowId, r.firstRunId).fetchHistory();
  const continued = history.events!.at(-1)!.workflowExecutionContinuedAsNewEventAttributes;
  assert.ok(continued, 'the first execution continued as new');
  assert.deepEqual(defaultPayloadConverter.fromPayload<WebhookDispatcherInput>(continued.input!.payloads![0]), {
    ...input({ runsPerExecution: 3 }),
    iteration: 3,
    attempted: 15,
    succeeded: 12,
    handedOver: 3,
  });
  assert.deepEqual(r.state, { iteration: 6, attempted: 17, succeeded: 13, handedOver: 4, lastError: 'timed out' });
});

test('without runsPerExecution an execution makes 100 runs before it continues as new', { timeout: 60_000 }, async () => {
  const r = await run(Array.from({ length: 101 }, () => ran(1, 1)));
  assert.equal(causeType(r.failure), SCRIPT_DONE);
  const first = r.calls.filter((c) => c.runId === r.firstRunId).length;
  assert.equal(first, 100);
  assert.deepEqual(r.state, { iteration: 102, attempted: 101, succeeded: 101, handedOver: 0, lastError: null });
});
