import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker, type WorkflowBundle } from '@temporalio/worker';
import { ActivityFailure, ApplicationFailure, defaultPayloadConverter } from '@temporalio/common';
import { Context } from '@temporalio/activity';
import { WorkflowFailedError, type WorkflowHandleWithFirstExecutionRunId } from '@temporalio/client';
import type { DispatchActivities } from '../../../activities/messaging/dispatch.js';
import {
  dispatcherStateQuery,
  type outboundDispatcherWorkflow,
  type DispatcherInput,
  type DispatcherState,
} from '../../../workflows/messaging/outbound-dispatcher.js';
import { timeSkippingEnv, freshTaskQueue, assertGaps } from '../../support/workflow-env.js';

// The batch dispatcher on the time-skipping server, with typed doubles of its activities. It runs
// for good, so each test scripts the streaming activity's answers and, when the script runs out,
// the double throws a non-retryable failure: the run fails with it and the test can await the
// result (which is also what lets the server skip time through the retry pauses).
let env: TestWorkflowEnvironment;
let bundle: WorkflowBundle;

before(async () => {
  ({ env, bundle } = await timeSkippingEnv('messaging/outbound-dispatcher.ts'));
});
after(async () => {
  await env?.teardown();
});

type StreamResult = Awaited<ReturnType<DispatchActivities['dispatchQueuedMessages']>>;
/**
 * What the streaming activity answers. Its inferred type says `lastError` is always null (it is
 * assigned in a closure, which TypeScript does not follow); it is the last transient error's text.
 */
type StreamAnswer = Omit<StreamResult, 'lastError'> & { lastError: string | null };
type BatchAnswer = Awaited<ReturnType<DispatchActivities['sendMessageBatch']>>;
/** An answer, or what the activity throws. */
type Step<T> = T | (() => never);
type Name = 'dispatchQueuedMessages' | 'sendMessageBatch' | 'failMessages' | 'sweepSilentMessages' | 'pollCheckingMessages';

interface Call {
  name: Name;
  /** The server clock (skipped time included) while this attempt ran. */
  at: number;
  attempt: number;
  taskQueue: string;
  args: Record<string, unknown>;
  /** The dispatcher's state, queried while this activity ran (sendMessageBatch only). */
  state?: DispatcherState;
}

const SCRIPT_DONE = 'ScriptDone';
const answer = <T>(step: Step<T>): T => (typeof step === 'function' ? (step as () => never)() : step);

/**
 * `streams` answers the streaming activity call by call; past its end the call throws the
 * non-retryable ScriptDone. `batches` answers the retry batches in turn (the last one repeats).
 */
function dispatchDoubles(o: { streams: Array<Step<StreamAnswer>>; batches?: Array<Step<BatchAnswer>> }) {
  const calls: Call[] = [];
  const note = async (name: Name, args: Record<string, unknown>, extra: Partial<Call> = {}) => {
    const info = Context.current().info;
    calls.push({ name, at: await env.currentTimeMs(), attempt: info.attempt, taskQueue: info.taskQueue, args, ...extra });
  };
  const named = (name: Name) => calls.filter((c) => c.name === name);
  const activities: Pick<DispatchActivities, Name> = {
    async dispatchQueuedMessages(args) {
      await note('dispatchQueuedMessages', args);
      const n = named('dispatchQueuedMessages').length;
      if (n > o.streams.length) throw ApplicationFailure.nonRetryable('the test script ran out', SCRIPT_DONE);
      return answer(o.streams[n - 1]) as StreamResult;
    },
    async sendMessageBatch(args) {
      // The workflow is blocked on this activity: its state is what it shows while it retries.
      const { workflowId } = Context.current().info.workflowExecution!;
      const state = await env.client.workflow.getHandle(workflowId).query(dispatcherStateQuery);
      await note('sendMessageBatch', args, { state });
      const batches = o.batches ?? [{ sent: args.ids.length, retry: [], lastError: null }];
      return answer(batches[Math.min(named('sendMessageBatch').length - 1, batches.length - 1)]);
    },
    async failMessages(args) {
      await note('failMessages', args);
    },
    async sweepSilentMessages(args) {
      await note('sweepSilentMessages', args);
      return 0;
    },
    async pollCheckingMessages(args) {
      await note('pollCheckingMessages', args);
      return 0;
    },
  };
  return { activities, calls, named };
}

const streamed = (sent: number, retry: number[] = [], lastError: string | null = null): StreamAnswer => ({ sent, retry, lastError });

const input = (over: Partial<DispatcherInput> = {}): DispatcherInput => ({
  channelType: 'sms',
  providerTaskQueue: 'unset',
  batchSize: 50,
  concurrency: 4,
  idleWaitMs: 2000,
  receiptTimeoutSeconds: 600,
  pollWindowSeconds: 300,
  run: 0,
  ...over,
});

interface Ran {
  handle: WorkflowHandleWithFirstExecutionRunId<typeof outboundDispatcherWorkflow>;
  workflowId: string;
  providerQueue: string;
  /** Why the run ended (the dispatcher itself never ends). */
  failure: unknown;
  /** The state of the last run, queried after it failed. */
  state: DispatcherState;
}

/**
 * Runs the dispatcher until the doubles' script runs out: a workflow worker with no activities, and
 * one activity worker on the provider queue and one on the dispatch queue, as deployed.
 */
async function run(d: ReturnType<typeof dispatchDoubles>, over: Partial<DispatcherInput> = {}): Promise<Ran> {
  const taskQueue = freshTaskQueue('dispatcher');
  const providerQueue = freshTaskQueue('dispatcher-provider');
  const workers = await Promise.all([
    Worker.create({ connection: env.nativeConnection, taskQueue, workflowBundle: bundle }),
    Worker.create({ connection: env.nativeConnection, taskQueue: providerQueue, activities: d.activities }),
    Worker.create({ connection: env.nativeConnection, taskQueue: `${providerQueue}-dispatch`, activities: d.activities }),
  ]);
  const workflowId = `outbound-dispatcher/test-${Math.random()}`;
  const body = async () => {
    const handle = await env.client.workflow.start<typeof outboundDispatcherWorkflow>('outboundDispatcherWorkflow', {
      taskQueue,
      workflowId,
      args: [input({ providerTaskQueue: providerQueue, ...over })],
    });
    const failure = await handle.result().then(
      () => assert.fail('a dispatcher never ends by itself'),
      (err: unknown) => err,
    );
    return { handle, workflowId, providerQueue, failure, state: await handle.query(dispatcherStateQuery) };
  };
  const [a, b, c] = workers;
  return a.runUntil(b.runUntil(c.runUntil(body())));
}

/** The failure's own type, under the workflow and activity failures wrapping it. */
function causeType(err: unknown): string | undefined {
  assert.ok(err instanceof WorkflowFailedError, `not a workflow failure: ${String(err)}`);
  assert.ok(err.cause instanceof ActivityFailure);
  assert.ok(err.cause.cause instanceof ApplicationFailure);
  return err.cause.cause.type ?? undefined;
}

test(
  'happy path: each iteration streams on the dispatch queue under a claim of its own, and counts what it sent',
  { timeout: 60_000 },
  async () => {
    const d = dispatchDoubles({ streams: [streamed(5), streamed(0), streamed(2)] });
    const r = await run(d, { channelType: 'whatsapp' });
    assert.equal(causeType(r.failure), SCRIPT_DONE);
    const streams = d.named('dispatchQueuedMessages');
    assert.deepEqual(
      streams.map((c) => c.args),
      [0, 1, 2, 3].map((i) => ({
        channelType: 'whatsapp',
        claim: `${r.workflowId}:${i}`,
        sliceSize: 50,
        concurrency: 4,
        maxSeconds: 30,
        idleWaitMs: 2000,
        maxRetry: 50,
      })),
    );
    assert.ok(
      streams.every((c) => c.taskQueue === `${r.providerQueue}-dispatch`),
      'streams run on the channel dispatch queue',
    );
    assert.deepEqual(r.state, { iteration: 4, sent: 7, lastBatch: 2, retrying: 0, lastError: null } satisfies DispatcherState);
    assert.deepEqual(
      d.calls.map((c) => c.name),
      Array(4).fill('dispatchQueuedMessages'),
      'nothing to retry, fail or sweep',
    );
  },
);

test('transient send failures come back to the workflow, are sent again after 1 s then 5 s, and succeed', { timeout: 60_000 }, async () => {
  const d = dispatchDoubles({
    streams: [streamed(8, [3, 4], 'gateway down (provider code 503)')],
    batches: [
      { sent: 1, retry: [4], lastError: 'gateway down (provider code 503)' },
      { sent: 1, retry: [], lastError: null },
    ],
  });
  const r = await run(d);
  assert.equal(causeType(r.failure), SCRIPT_DONE);
  const [stream] = d.named('dispatchQueuedMessages');
  const batches = d.named('sendMessageBatch');
  assert.deepEqual(
    batches.map((b) => b.args),
    [
      { ids: [3, 4], concurrency: 4, channelType: 'sms' },
      { ids: [4], concurrency: 4, channelType: 'sms' },
    ],
  );
  assertGaps([stream, ...batches], [1, 5]);
  assert.ok(
    batches.every((b) => b.taskQueue === r.providerQueue),
    'retry batches run on the provider queue',
  );
  assert.deepEqual(
    batches.map((b) => b.state!.retrying),
    [2, 1],
    'the state shows how many wait for their retry',
  );
  assert.equal(d.named('failMessages').length, 0);
  assert.equal(r.state.sent, 10);
  assert.equal(r.state.retrying, 0);
});

test('a retried streaming activity keeps its claim, so its retry resends what that claim holds', { timeout: 60_000 }, async () => {
  const d = dispatchDoubles({
    streams: [
      () => {
        throw new Error('Connection terminated unexpectedly');
      },
      streamed(3),
    ],
  });
  const r = await run(d, { channelType: 'whatsapp' });
  assert.equal(causeType(r.failure), SCRIPT_DONE);
  const [first, second, third] = d.named('dispatchQueuedMessages');
  assert.deepEqual([first.attempt, second.attempt, third.attempt], [1, 2, 1]);
  assert.equal(first.args.claim, second.args.claim, 'the same claim on the retry');
  assert.notEqual(second.args.claim, third.args.claim, 'the next iteration has a claim of its own');
  assert.equal(r.state.sent, 3);
});

test('messages still failing after every pause (1, 5, 15, 60, 120 s) are failed with the last error', { timeout: 60_000 }, async () => {
  const d = dispatchDoubles({
    streams: [streamed(0, [9], 'HTTP 500 (provider code 500)')],
    batches: [{ sent: 0, retry: [9], lastError: 'HTTP 500 (provider code 500)' }],
  });
  const r = await run(d, { channelType: 'whatsapp' });
  assert.equal(causeType(r.failure), SCRIPT_DONE);
  const [stream] = d.named('dispatchQueuedMessages');
  const batches = d.named('sendMessageBatch');
  assertGaps([stream, ...batches], [1, 5, 15, 60, 120]);
  const failed = d.named('failMessages');
  assert.equal(failed.length, 1);
  assert.deepEqual(failed[0].args, { ids: [9], errorMessage: 'Provider unavailable: HTTP 500 (provider code 500)' });
  assert.equal(failed[0].taskQueue, r.providerQueue);
  assert.ok(failed[0].at >= batches[4].at);
});

test('a non-retryable failure is not retried: it ends the dispatcher run', { timeout: 60_000 }, async () => {
  const d = dispatchDoubles({
    streams: [
      streamed(1),
      () => {
        throw ApplicationFailure.nonRetryable('message msg_x: no provider "carrier-pigeon" for sms', 'UnknownProvider');
      },
      streamed(1),
    ],
  });
  const r = await run(d, { channelType: 'whatsapp' });
  assert.equal(causeType(r.failure), 'UnknownProvider');
  assert.deepEqual(
    d.named('dispatchQueuedMessages').map((c) => c.attempt),
    [1, 1],
    'one attempt, and no iteration after it',
  );
  assert.deepEqual(r.state, { iteration: 2, sent: 1, lastBatch: 1, retrying: 0, lastError: null });
});

test(
  'run 0 of the SMS channel sweeps silent messages at once, then again once half the receipt timeout has passed',
  { timeout: 60_000 },
  async () => {
    const d = dispatchDoubles({
      // t=0: sweeps; t≈1: a retry after 1 s, too soon; t≈22: retries after 1 + 5 + 15 s, past 10 s: sweeps again.
      streams: [streamed(1), streamed(0, [5], 'e'), streamed(0, [6], 'e')],
      batches: [
        { sent: 1, retry: [], lastError: null },
        { sent: 0, retry: [6], lastError: 'e' },
        { sent: 0, retry: [6], lastError: 'e' },
        { sent: 1, retry: [], lastError: null },
      ],
    });
    const r = await run(d, { receiptTimeoutSeconds: 20, pollWindowSeconds: 300 });
    assert.equal(causeType(r.failure), SCRIPT_DONE);
    const sweeps = d.named('sweepSilentMessages');
    // Eight activities' real work lie between the two sweeps besides the 22 s of pauses.
    assertGaps(sweeps, [22], 4000);
    assert.ok(sweeps[0].at - d.calls[0].at < 1500, 'the first sweep follows the first stream');
    assert.deepEqual(sweeps[0].args, { olderThanSeconds: 20, limit: 500 });
    assert.deepEqual(
      d.named('pollCheckingMessages').map((p) => p.args),
      [
        { limit: 500, maxAgeSeconds: 320 },
        { limit: 500, maxAgeSeconds: 320 },
      ],
    );
    assert.ok(
      sweeps.every((s) => s.taskQueue === r.providerQueue),
      'sweeps ask the provider: on its queue',
    );
  },
);

test('only run 0 of the SMS channel sweeps: other runs and WhatsApp never do', { timeout: 60_000 }, async () => {
  for (const over of [{ run: 1 }, { channelType: 'whatsapp' as const }]) {
    const d = dispatchDoubles({ streams: [streamed(1), streamed(1)] });
    const r = await run(d, over);
    assert.equal(causeType(r.failure), SCRIPT_DONE);
    assert.equal(d.named('sweepSilentMessages').length + d.named('pollCheckingMessages').length, 0, JSON.stringify(over));
  }
});

test(
  'after 100 iterations the dispatcher continues as new, carrying its counters, claims and last sweep',
  { timeout: 120_000 },
  async () => {
    const d = dispatchDoubles({ streams: Array.from({ length: 102 }, () => streamed(2)) });
    const r = await run(d, { receiptTimeoutSeconds: 3600 });
    assert.equal(causeType(r.failure), SCRIPT_DONE);
    const claims = d.named('dispatchQueuedMessages').map((c) => c.args.claim);
    assert.equal(claims.length, 103);
    assert.deepEqual(
      claims,
      claims.map((_, i) => `${r.workflowId}:${i}`),
      'claims never repeat across runs',
    );
    // The first run's history ends in continue-as-new with the carried input.
    const history = await env.client.workflow.getHandle(r.workflowId, r.handle.firstExecutionRunId).fetchHistory();
    const last = history.events!.at(-1)!.workflowExecutionContinuedAsNewEventAttributes;
    assert.ok(last, 'the first run continued as new');
    const carried = defaultPayloadConverter.fromPayload<DispatcherInput>(last.input!.payloads![0]);
    const firstSweep = d.named('sweepSilentMessages')[0].at;
    assert.equal(carried.lastSweepAt !== undefined && Math.abs(carried.lastSweepAt - firstSweep) < 5000, true, 'the last sweep is carried');
    assert.deepEqual(
      { ...carried, lastSweepAt: 0 },
      { ...input({ receiptTimeoutSeconds: 3600, providerTaskQueue: r.providerQueue }), iteration: 100, sent: 200, lastSweepAt: 0 },
    );
    assert.equal(d.named('sweepSilentMessages').length, 1, 'the continued run does not sweep again before its time');
    assert.deepEqual(r.state, { iteration: 103, sent: 204, lastBatch: 2, retrying: 0, lastError: null });
  },
);
