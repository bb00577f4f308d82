import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker, type WorkflowBundle } from '@temporalio/worker';
import { ApplicationFailure } from '@temporalio/common';
import type { ReconciliationActivities, SliceOutcome, SliceRequest } from '../../../activities/payments/reconciliation.js';
import type {
  paymentReconciliationWorkflow,
  PaymentReconciliationInput,
  ReconciliationProgress,
} from '../../../workflows/payments/reconciliation.js';
import { timeSkippingEnv, freshTaskQueue } from '../../support/workflow-env.js';

// The reconciliation run (the workflow the `payment-reconciliation` schedule starts, and an
// operator's run-now) on the time-skipping server, with a typed double of its one activity: the
// period cut into slices, each reconciled once, the counts added up, a failed slice counted and
// the rest still done.
let env: TestWorkflowEnvironment;
let bundle: WorkflowBundle;

before(async () => {
  ({ env, bundle } = await timeSkippingEnv('payments/reconciliation.ts'));
});
after(async () => {
  await env?.teardown();
});

const outcome = (o: Partial<SliceOutcome> = {}): SliceOutcome => ({
  provider: 'mpesa-daraja',
  ours: 0,
  theirs: 0,
  matched: 0,
  missingAtProvider: 0,
  missingInOurs: 0,
  amountDiffers: 0,
  recorded: 0,
  ...o,
});

function double(answer: (s: SliceRequest) => SliceOutcome | 'refused') {
  const slices: SliceRequest[] = [];
  const activities: ReconciliationActivities = {
    async reconcilePaymentSlice(s) {
      slices.push(s);
      const a = answer(s);
      if (a === 'refused') throw ApplicationFailure.nonRetryable('payment report: not found (provider code 404.001.01)', 'ProviderRefused');
      return a;
    },
  };
  return { activities, slices };
}

async function run(
  input: PaymentReconciliationInput,
  activities: ReconciliationActivities,
  workflowId = `payment-reconciliation/t-${Math.random()}`,
) {
  const taskQueue = freshTaskQueue('reconcile');
  const worker = await Worker.create({ connection: env.nativeConnection, taskQueue, workflowBundle: bundle, activities });
  return worker.runUntil(async () => {
    const handle = await env.client.workflow.start<typeof paymentReconciliationWorkflow>('paymentReconciliationWorkflow', {
      taskQueue,
      workflowId,
      args: [input],
    });
    const result = await handle.result();
    return { result, progress: await handle.query<ReconciliationProgress>('progress'), workflowId };
  });
}

test('a named period in hour slices: each reconciled once with the run’s id, the counts added up', { timeout: 60_000 }, async () => {
  const d = double((s) =>
    s.from.startsWith('2026-11-27T10:00')
      ? outcome({ ours: 3, theirs: 4, matched: 2, missingInOurs: 2, recorded: 2 })
      : outcome({ ours: 1, theirs: 0, missingAtProvider: 1, recorded: 0 }),
  );
  const { result, progress, workflowId } = await run(
    { from: '2026-11-27T10:00:00.000Z', to: '2026-11-27T12:30:00.000Z', accountId: 7 },
    d.activities,
  );
  assert.deepEqual(
    d.slices.map((s) => [s.from, s.to, s.accountId, s.foundBy, s.provider]),
    [
      ['2026-11-27T10:00:00.000Z', '2026-11-27T11:00:00.000Z', 7, workflowId, undefined],
      ['2026-11-27T11:00:00.000Z', '2026-11-27T12:00:00.000Z', 7, workflowId, undefined],
      ['2026-11-27T12:00:00.000Z', '2026-11-27T12:30:00.000Z', 7, workflowId, undefined],
    ],
  );
  assert.deepEqual(result, {
    provider: 'mpesa-daraja',
    from: '2026-11-27T10:00:00.000Z',
    to: '2026-11-27T12:30:00.000Z',
    accountId: 7,
    phase: 'done',
    slices: 3,
    slicesDone: 3,
    slicesFailed: 0,
    failures: [],
    ours: 5,
    theirs: 4,
    matched: 2,
    missingAtProvider: 2,
    missingInOurs: 2,
    amountDiffers: 0,
    recorded: 2,
  });
  assert.deepEqual(progress, result, 'the progress query shows the run’s counts');
});

test('the schedule’s run: the window ending the lag before it started, on whole minutes', { timeout: 60_000 }, async () => {
  const d = double(() => outcome());
  // The time-skipping server's clock, which earlier tests' skipped timers may have moved past the wall clock.
  const startedAt = await env.currentTimeMs();
  const { result } = await run({ windowMinutes: 120, lagMinutes: 15, sliceMinutes: 30 }, d.activities);
  const to = Date.parse(result.to);
  const from = Date.parse(result.from);
  assert.equal(to % 60_000, 0, 'a whole minute');
  assert.equal(to - from, 120 * 60_000);
  assert.ok(to <= startedAt - 15 * 60_000 + 60_000 && to >= startedAt - 16 * 60_000, `ends the lag before the start (${result.to})`);
  assert.equal(d.slices.length, 4, 'two hours in half-hour slices');
  assert.deepEqual([d.slices[0]!.from, d.slices.at(-1)!.to], [result.from, result.to]);
  assert.equal(d.slices[0]!.accountId, undefined, 'every account');
});

test('a slice whose report is refused is counted with its reason; the others are still reconciled', { timeout: 60_000 }, async () => {
  const d = double((s) => (s.from.startsWith('2026-11-27T11') ? 'refused' : outcome({ ours: 1, matched: 1 })));
  const { result } = await run({ from: '2026-11-27T10:00:00Z', to: '2026-11-27T13:00:00Z', provider: 'mpesa-daraja' }, d.activities);
  assert.equal(d.slices.length, 3);
  assert.equal(d.slices[0]!.provider, 'mpesa-daraja', 'the provider named is passed on');
  assert.deepEqual([result.phase, result.slicesDone, result.slicesFailed, result.matched], ['done', 3, 1, 2]);
  assert.equal(result.failures.length, 1);
  assert.match(result.failures[0]!, /^2026-11-27T11:00:00.000Z: payment report: not found/);
});
