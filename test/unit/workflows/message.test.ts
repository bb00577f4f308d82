import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker, type WorkflowBundle } from '@temporalio/worker';
import { ApplicationFailure, type Duration } from '@temporalio/common';
import { Context } from '@temporalio/activity';
import type { WorkflowHandle } from '@temporalio/client';
import type { MessageActivities } from '../../../activities/messaging/messages.js';
import type { MessageStatus } from '../../../domain/messaging/message-status.js';
import {
  receiptSignal,
  stateQuery,
  firstOutcomeUpdate,
  type messageWorkflow,
  type MessageWorkflowInput,
  type MessageWorkflowState,
} from '../../../workflows/messaging/message.js';
import { timeSkippingEnv, freshTaskQueue, assertGaps } from '../../support/workflow-env.js';

// The per-message workflow on the time-skipping server: a scheduled send, the receipt wait and the
// delivery polls are durable timers that skip ahead. Its two kinds of activity run where they run
// in production: the provider calls (dispatchMessage, pollDeliveryStatus) on the channel's
// rate-limited provider task queue, the record moves (markMessageFailed, markCheckingDelivery) on
// the workflow's own queue. Each double notes the server clock, its attempt number and its queue.
let env: TestWorkflowEnvironment;
let bundle: WorkflowBundle;

before(async () => {
  ({ env, bundle } = await timeSkippingEnv('messaging/message.ts'));
});
after(async () => {
  await env?.teardown();
});

type Outcome = Awaited<ReturnType<MessageActivities['dispatchMessage']>>;
/** What one dispatch attempt does: answer an outcome, or throw (a provider failure as the activity reports it). */
type DispatchStep = Outcome | (() => never);

interface Call {
  name: keyof MessageActivities;
  /** The server clock (skipped time included) while this attempt ran. */
  at: number;
  attempt: number;
  taskQueue: string;
  args: Record<string, unknown>;
}

/**
 * Doubles of the four activities. `dispatch` answers each attempt in turn (the last one repeats);
 * `polls` answers each delivery poll in turn (the last one repeats). `markMessageFailed` and
 * `markCheckingDelivery` answer the status a forward-only move would give.
 */
function messageDoubles(o: { dispatch: DispatchStep[]; polls?: MessageStatus[]; beforeDispatch?: () => Promise<void> }) {
  const calls: Call[] = [];
  const note = async (name: keyof MessageActivities, args: Record<string, unknown>) => {
    const info = Context.current().info;
    calls.push({ name, at: await env.currentTimeMs(), attempt: info.attempt, taskQueue: info.taskQueue, args });
  };
  const count = (name: keyof MessageActivities) => calls.filter((c) => c.name === name).length;
  const provider: Pick<MessageActivities, 'dispatchMessage' | 'pollDeliveryStatus'> = {
    async dispatchMessage(args) {
      await note('dispatchMessage', args);
      await o.beforeDispatch?.();
      const step = o.dispatch[Math.min(count('dispatchMessage') - 1, o.dispatch.length - 1)];
      return typeof step === 'function' ? step() : step;
    },
    async pollDeliveryStatus(args) {
      await note('pollDeliveryStatus', args);
      const polls = o.polls ?? ['checking_delivery'];
      return polls[Math.min(count('pollDeliveryStatus') - 1, polls.length - 1)];
    },
  };
  const db: Pick<MessageActivities, 'markMessageFailed' | 'markCheckingDelivery'> = {
    async markMessageFailed(args) {
      await note('markMessageFailed', args);
      return 'failed';
    },
    async markCheckingDelivery(args) {
      await note('markCheckingDelivery', args);
      return 'checking_delivery';
    },
  };
  const named = (name: keyof MessageActivities) => calls.filter((c) => c.name === name);
  return { provider, db, calls, named };
}

const sent = (id = 'SM1'): Outcome => ({ status: 'sent', gatewayMessageId: id });
const transient =
  (message = 'gateway timeout (provider code 504)', nextRetryDelay?: Duration) =>
  () => {
    throw ApplicationFailure.create({ message, type: 'ProviderTransient', nextRetryDelay });
  };

const input = (over: Partial<MessageWorkflowInput> = {}): MessageWorkflowInput => ({
  accountId: 1,
  messageId: 42,
  uid: 'msg_test',
  channelType: 'sms',
  providerTaskQueue: 'unset',
  sendAt: null,
  receiptTimeoutSeconds: 600,
  deliveryPollSeconds: 60,
  deliveryPollAttempts: 3,
  ...over,
});

/**
 * Runs `fn` with a workflow worker (the record moves) and a provider worker (the provider calls) on
 * task queues of their own; `start` starts the workflow with `over` (its provider queue filled in).
 */
async function withWorkers<T>(
  d: ReturnType<typeof messageDoubles>,
  fn: (
    start: (over?: Partial<MessageWorkflowInput>) => Promise<WorkflowHandle<typeof messageWorkflow>>,
    queues: { taskQueue: string; providerQueue: string },
  ) => Promise<T>,
): Promise<T> {
  const taskQueue = freshTaskQueue('message');
  const providerQueue = freshTaskQueue('message-provider');
  const [worker, providerWorker] = await Promise.all([
    Worker.create({ connection: env.nativeConnection, taskQueue, workflowBundle: bundle, activities: d.db }),
    Worker.create({ connection: env.nativeConnection, taskQueue: providerQueue, activities: d.provider }),
  ]);
  const start = (over: Partial<MessageWorkflowInput> = {}) =>
    env.client.workflow.start<typeof messageWorkflow>('messageWorkflow', {
      taskQueue,
      workflowId: `message-${Math.random()}`,
      args: [input({ providerTaskQueue: providerQueue, ...over })],
    });
  return worker.runUntil(providerWorker.runUntil(fn(start, { taskQueue, providerQueue })));
}

const run = (d: ReturnType<typeof messageDoubles>, over: Partial<MessageWorkflowInput> = {}) =>
  withWorkers(d, async (start) => (await start(over)).result());

test('happy path: the provider call runs on the provider queue, a receipt ends the wait with no poll', { timeout: 60_000 }, async () => {
  const d = messageDoubles({ dispatch: [sent('SM77')] });
  const { result, afterDispatch, queues } = await withWorkers(d, async (start, queues) => {
    const h = await start();
    // The API's first-outcome update answers once the provider has answered.
    const afterDispatch = await h.executeUpdate(firstOutcomeUpdate, { args: [30_000] });
    await h.signal(receiptSignal, 'delivered');
    return { result: await h.result(), afterDispatch, queues };
  });
  assert.deepEqual(afterDispatch, { status: 'sent', gatewayMessageId: 'SM77', dispatched: true, pollsLeft: 3 });
  assert.deepEqual(result, {
    status: 'delivered',
    gatewayMessageId: 'SM77',
    dispatched: true,
    pollsLeft: 3,
  } satisfies MessageWorkflowState);
  assert.deepEqual(
    d.calls.map((c) => [c.name, c.taskQueue, c.args]),
    [['dispatchMessage', queues.providerQueue, { messageId: 42 }]],
    'one provider call, on the provider queue; no checking, no poll',
  );
});

test('a retryable provider failure is retried by the activity policy, then the send succeeds', { timeout: 60_000 }, async () => {
  const d = messageDoubles({ dispatch: [transient(), transient(), sent()], polls: ['delivered'] });
  const result = await run(d);
  const dispatches = d.named('dispatchMessage');
  assert.deepEqual(
    dispatches.map((c) => c.attempt),
    [1, 2, 3],
    'the same activity, attempted again',
  );
  // The provider proxy's retry policy: 1 s, then doubling.
  assertGaps(dispatches, [1, 2]);
  assert.equal(d.named('markMessageFailed').length, 0);
  assert.equal(result.status, 'delivered');
  assert.equal(result.gatewayMessageId, 'SM1');
});

test("a provider's Retry-After (nextRetryDelay) sets the pause before the next attempt", { timeout: 60_000 }, async () => {
  const d = messageDoubles({ dispatch: [transient('throttled (provider code 429)', '90 seconds'), sent()], polls: ['delivered'] });
  await run(d);
  assertGaps(d.named('dispatchMessage'), [90]);
});

test('retries running out on a transient failure fail the record with the reason; nothing is polled', { timeout: 60_000 }, async () => {
  const d = messageDoubles({ dispatch: [transient('gateway down (provider code 503)')] });
  const result = await run(d);
  assert.equal(d.named('dispatchMessage').length, 12, 'the provider policy allows 12 attempts');
  const failed = d.named('markMessageFailed');
  assert.equal(failed.length, 1);
  assert.deepEqual(failed[0].args, { messageId: 42, errorMessage: 'Provider unavailable: gateway down (provider code 503)' });
  assert.notEqual(failed[0].taskQueue, d.named('dispatchMessage')[0].taskQueue, 'the record move runs on the workflow queue');
  assert.deepEqual(result, { status: 'failed', gatewayMessageId: null, dispatched: true, pollsLeft: 3 });
  assert.equal(d.named('markCheckingDelivery').length + d.named('pollDeliveryStatus').length, 0);
});

test('a non-retryable failure is attempted once, then the record is failed with its reason', { timeout: 60_000 }, async () => {
  const d = messageDoubles({
    dispatch: [
      () => {
        throw ApplicationFailure.nonRetryable('message msg_test: no provider "carrier-pigeon" for sms', 'UnknownProvider');
      },
    ],
  });
  const result = await run(d);
  assert.equal(d.named('dispatchMessage').length, 1, 'not retried');
  assert.deepEqual(
    d.named('markMessageFailed').map((c) => c.args.errorMessage),
    ['Cannot be sent: message msg_test: no provider "carrier-pigeon" for sms'],
  );
  assert.equal(result.status, 'failed');
});

test("a provider's permanent refusal (the activity already failed the record) ends the workflow at once", { timeout: 60_000 }, async () => {
  const d = messageDoubles({ dispatch: [{ status: 'failed', gatewayMessageId: null }] });
  const result = await run(d);
  assert.deepEqual(result, { status: 'failed', gatewayMessageId: null, dispatched: true, pollsLeft: 3 });
  assert.deepEqual(
    d.calls.map((c) => c.name),
    ['dispatchMessage'],
    'no second failing move, no receipt wait, no poll',
  );
});

test('a scheduled send waits, queued, until its time; then it is dispatched', { timeout: 60_000 }, async () => {
  const d = messageDoubles({ dispatch: [sent()], polls: ['delivered'] });
  const begun = await env.currentTimeMs();
  const sendAt = begun + 2 * 24 * 3600_000;
  const { early, queried, result } = await withWorkers(d, async (start) => {
    const h = await start({ sendAt: new Date(sendAt).toISOString() });
    // waitMs 0: the update answers what is known now, without waiting for the provider.
    const early = await h.executeUpdate(firstOutcomeUpdate, { args: [0] });
    const queried = await h.query(stateQuery);
    assert.equal(d.calls.length, 0, 'nothing is sent before its time');
    return { early, queried, result: await h.result() };
  });
  assert.deepEqual(early, { status: 'queued', gatewayMessageId: null, dispatched: false, pollsLeft: 3 });
  assert.deepEqual(queried, early);
  const [dispatch] = d.named('dispatchMessage');
  assert.ok(dispatch.at >= sendAt, `sent ${sendAt - dispatch.at} ms early`);
  assert.ok(dispatch.at - sendAt < 60_000, 'sent when its time came');
  assert.equal(result.status, 'delivered');
});

test('a send time in the past is sent at once', { timeout: 60_000 }, async () => {
  const d = messageDoubles({ dispatch: [sent()], polls: ['delivered'] });
  const begun = await env.currentTimeMs();
  await run(d, { sendAt: new Date(begun - 3600_000).toISOString() });
  // Awaiting the result skips time: a wait of any length would show here as hours.
  assert.ok(d.named('dispatchMessage')[0].at - begun < 60_000);
});

test(
  'no receipt within the receipt timeout: the record moves to checking and the provider is asked every poll interval',
  { timeout: 60_000 },
  async () => {
    const d = messageDoubles({ dispatch: [sent()], polls: ['checking_delivery', 'checking_delivery', 'delivered'] });
    const result = await run(d, { receiptTimeoutSeconds: 600, deliveryPollSeconds: 120, deliveryPollAttempts: 5 });
    const [dispatch] = d.named('dispatchMessage');
    const [checking] = d.named('markCheckingDelivery');
    const polls = d.named('pollDeliveryStatus');
    // Checked once the receipt timeout ran out, polled at once, then every poll interval.
    assertGaps([dispatch, checking, ...polls], [600, 0, 120, 120]);
    assert.ok(
      polls.every((p) => p.taskQueue === dispatch.taskQueue),
      'polls are provider calls',
    );
    assert.deepEqual(result, { status: 'delivered', gatewayMessageId: 'SM1', dispatched: true, pollsLeft: 2 });
  },
);

test('polls that never settle stop after the configured number; the message stays in checking', { timeout: 60_000 }, async () => {
  const d = messageDoubles({ dispatch: [sent()], polls: ['checking_delivery'] });
  const result = await run(d, { deliveryPollAttempts: 3 });
  assert.equal(d.named('pollDeliveryStatus').length, 3);
  assert.deepEqual(result, { status: 'checking_delivery', gatewayMessageId: 'SM1', dispatched: true, pollsLeft: 0 });
});

test('a receipt arriving while the workflow waits between polls ends the polling', { timeout: 60_000 }, async () => {
  const d = messageDoubles({ dispatch: [sent()], polls: ['checking_delivery'] });
  const result = await withWorkers(d, async (start) => {
    const h = await start({ receiptTimeoutSeconds: 60, deliveryPollSeconds: 3600, deliveryPollAttempts: 5 });
    // Skip past the receipt timeout into the first hour-long wait after the first poll.
    await env.sleep(10 * 60_000);
    assert.equal((await h.query(stateQuery)).pollsLeft, 4);
    await h.signal(receiptSignal, 'read');
    return h.result();
  });
  assert.equal(d.named('pollDeliveryStatus').length, 1);
  assert.deepEqual(result, { status: 'read', gatewayMessageId: 'SM1', dispatched: true, pollsLeft: 4 });
});

test('WhatsApp has no status read: with no receipt the workflow ends as sent, without checking', { timeout: 60_000 }, async () => {
  const d = messageDoubles({ dispatch: [sent('wamid.1')] });
  const result = await run(d, { channelType: 'whatsapp' });
  assert.deepEqual(result, { status: 'sent', gatewayMessageId: 'wamid.1', dispatched: true, pollsLeft: 3 });
  assert.deepEqual(
    d.calls.map((c) => c.name),
    ['dispatchMessage'],
  );
});

test("a final receipt that overtakes the send's own answer is kept", { timeout: 60_000 }, async () => {
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  let dispatching!: () => void;
  const started = new Promise<void>((r) => (dispatching = r));
  const d = messageDoubles({
    dispatch: [sent()],
    beforeDispatch: async () => {
      dispatching();
      await held;
    },
  });
  const result = await withWorkers(d, async (start) => {
    const h = await start();
    await started;
    await h.signal(receiptSignal, 'delivered');
    assert.equal((await h.query(stateQuery)).status, 'delivered');
    release();
    return h.result();
  });
  assert.equal(result.status, 'delivered', 'the late "sent" does not move the status back');
  assert.equal(result.gatewayMessageId, 'SM1');
  assert.equal(d.named('markCheckingDelivery').length, 0);
});
