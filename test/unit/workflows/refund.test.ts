import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { WorkflowBundle } from '@temporalio/worker';
import type { PaymentMoveInput, PaymentMoved } from '../../../activities/payments/payment.js';
import type { ReverseInput, ReversalOutcome } from '../../../activities/payments/refund.js';
import { canMove, type PaymentState } from '../../../domain/payments/index.js';
import {
  refundResultSignal,
  refundStateQuery,
  LINGER_MS,
  MAX_SENDS,
  RESULT_WAIT_MS,
  SEND_RETRY_FIRST_MS,
  type refundWorkflow,
  type RefundResultSignal,
  type RefundWorkflowState,
} from '../../../workflows/payments/refund.js';
import { timeSkippingEnv, untilQueried, withQueueWorker } from '../../support/workflow-env.js';

// The refund workflow on the time-skipping server, with a refund double that keeps recordMove's rule
// (the contract's state table; a refused move is recorded, never applied) and a provider double whose
// reversal answers each test sets.
let env: TestWorkflowEnvironment;
let bundle: WorkflowBundle;

before(async () => {
  ({ env, bundle } = await timeSkippingEnv('index.ts'));
});
after(async () => {
  await env?.teardown();
});

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

interface Double {
  state: PaymentState;
  /** Applied moves, `to@source`. */
  moves: string[];
  /** Every applied move's input, for what it stored (last_error, receipt, provider_ref). */
  applied: PaymentMoveInput[];
  /** Refused moves, `from→to@source`. */
  refused: string[];
  /** The reversal requests, with the skipped-time clock when each was made. */
  sends: { input: ReverseInput; at: number }[];
  moveTimes: Record<string, number>;
  activities: {
    movePayment(m: PaymentMoveInput): Promise<PaymentMoved>;
    refundReceipt(i: { accountId: number; refundId: string }): Promise<string | null>;
    reverseRefund(i: ReverseInput): Promise<ReversalOutcome>;
  };
}

const ACK: ReversalOutcome = { kind: 'acknowledged', providerRef: 'AG_20261127_1', message: 'Accept the service request successfully.' };

function refundDouble(o: { receipt?: string | null; reverse?: (n: number) => ReversalOutcome; state?: PaymentState } = {}): Double {
  const d: Double = {
    state: o.state ?? 'draft',
    moves: [],
    applied: [],
    refused: [],
    sends: [],
    moveTimes: {},
    activities: {
      async movePayment(m) {
        if (!canMove(d.state, m.to) || m.to === 'refunded' || m.to === 'partly_refunded') {
          d.refused.push(`${d.state}→${m.to}@${m.source}`);
          return { applied: false, state: d.state, refusal: `Refused: ${d.state} → ${m.to}` };
        }
        d.state = m.to;
        d.moves.push(`${m.to}@${m.source}`);
        d.applied.push(m);
        d.moveTimes[m.to] = await env.currentTimeMs();
        return { applied: true, state: d.state };
      },
      async refundReceipt() {
        return o.receipt === undefined ? 'NLJ7RT61SV' : o.receipt;
      },
      async reverseRefund(input) {
        d.sends.push({ input, at: await env.currentTimeMs() });
        return o.reverse ? o.reverse(d.sends.length) : ACK;
      },
    },
  };
  return d;
}

const run = <T>(d: Double, fn: (taskQueue: string) => Promise<T>) => withQueueWorker(env, bundle, 'refund', d.activities, fn);

const start = (taskQueue: string) =>
  env.client.workflow.start<typeof refundWorkflow>('refundWorkflow', {
    taskQueue,
    workflowId: `refund-${Math.random()}`,
    args: [
      {
        accountId: 1,
        refundId: '6b1f0c1e-0000-4000-8000-000000000002',
        reference: 'PAY-20261127-00000002',
        refundOf: '6b1f0c1e-0000-4000-8000-000000000001',
        amountMinor: 40_000,
        currency: 'KES',
        reason: 'one item was missing',
        provider: null,
        state: 'draft',
      },
    ],
  });

const result = (outcome: RefundResultSignal['outcome'], providerRef = 'AG_20261127_1'): RefundResultSignal => ({
  eventId: `${providerRef}:${outcome}`,
  providerRef,
  outcome,
  providerCode: outcome === 'refunded' ? '0' : '2001',
  message: outcome === 'refunded' ? 'The service request is processed successfully.' : 'The initiator information is invalid.',
  receipt: outcome === 'refunded' ? 'RVS7RT61SV' : null,
  amountMinor: outcome === 'refunded' ? 40_000 : null,
});

/** Waits (in skipped time) until the workflow's state passes `ok`. */
const until = (h: Parameters<typeof untilQueried<RefundWorkflowState>>[0], ok: (s: RefundWorkflowState) => boolean) =>
  untilQueried(h, refundStateQuery, ok);

test(
  'the reversal is sent with the parent’s receipt; its result settles the refund: draft → pending → paid',
  { timeout: 60_000 },
  async () => {
    const d = refundDouble();
    const state = await run(d, async (q) => {
      const h = await start(q);
      const waiting = await until(h, (s) => s.phase === 'waiting');
      assert.equal(waiting.state, 'pending');
      assert.equal(waiting.providerRef, 'AG_20261127_1');
      assert.equal(waiting.sent, 'acknowledged');
      await h.signal(refundResultSignal, result('refunded'));
      await until(h, (s) => s.phase === 'settled');
      return h.result();
    });
    assert.deepEqual(d.moves, ['pending@workflow', 'paid@provider']);
    assert.deepEqual(d.refused, []);
    assert.equal(d.sends.length, 1);
    assert.deepEqual(
      { receipt: d.sends[0].input.receipt, amount: d.sends[0].input.amountMinor, reference: d.sends[0].input.reference },
      { receipt: 'NLJ7RT61SV', amount: 40_000, reference: 'PAY-20261127-00000002' },
    );
    assert.equal(d.sends[0].input.reason, 'one item was missing');
    const paid = d.applied.at(-1)!;
    assert.equal(paid.receipt, 'RVS7RT61SV', 'the reversal’s own receipt is kept');
    assert.equal(paid.providerRef, 'AG_20261127_1');
    assert.equal(state.state, 'paid');
    assert.equal(state.phase, 'done');
  },
);

test('a duplicate result changes nothing twice, before and after it settled', { timeout: 60_000 }, async () => {
  const d = refundDouble();
  const state = await run(d, async (q) => {
    const h = await start(q);
    await until(h, (s) => s.phase === 'waiting');
    await h.signal(refundResultSignal, result('refunded'));
    await h.signal(refundResultSignal, result('refunded'));
    await until(h, (s) => s.phase === 'settled');
    await env.sleep(10 * MINUTE);
    await h.signal(refundResultSignal, result('refunded'));
    return h.result();
  });
  assert.deepEqual(d.moves, ['pending@workflow', 'paid@provider']);
  assert.deepEqual(d.refused, [], 'a duplicate is dropped, not even asked for');
  assert.equal(state.duplicates, 2);
});

test('a failed result fails the refund with the provider’s words in last_error', { timeout: 60_000 }, async () => {
  const d = refundDouble();
  const state = await run(d, async (q) => {
    const h = await start(q);
    await until(h, (s) => s.phase === 'waiting');
    await h.signal(refundResultSignal, result('failed'));
    return h.result();
  });
  assert.deepEqual(d.moves, ['pending@workflow', 'failed@provider']);
  assert.equal(d.applied.at(-1)!.lastError, 'The initiator information is invalid. · 2001');
  assert.equal(state.state, 'failed');
});

test(
  'no receipt (a parent settled by a status query alone): the provider refuses and the refund fails, once',
  { timeout: 30_000 },
  async () => {
    const d = refundDouble({
      receipt: null,
      reverse: () => ({ kind: 'refused', code: 'receipt_required', message: 'A reversal needs the M-Pesa receipt of the payment.' }),
    });
    const state = await run(d, async (q) => (await start(q)).result());
    assert.equal(d.sends.length, 1);
    assert.equal(d.sends[0].input.receipt, null);
    assert.deepEqual(d.moves, ['pending@workflow', 'failed@provider']);
    assert.equal(d.applied.at(-1)!.lastError, 'receipt_required: A reversal needs the M-Pesa receipt of the payment.');
    assert.equal(state.state, 'failed');
    assert.equal(state.sent, 'refused');
  },
);

test('the provider took nothing (503): sent again on a backoff, then settled by its result', { timeout: 60_000 }, async () => {
  const d = refundDouble({
    reverse: (n) => (n < 3 ? { kind: 'unavailable', code: '503.001.01', message: 'Service Unavailable' } : ACK),
  });
  const state = await run(d, async (q) => {
    const h = await start(q);
    await env.sleep(5 * MINUTE);
    await until(h, (s) => s.phase === 'waiting');
    await h.signal(refundResultSignal, result('refunded'));
    return h.result();
  });
  assert.equal(d.sends.length, 3);
  const gaps = [d.sends[1].at - d.sends[0].at, d.sends[2].at - d.sends[1].at];
  assert.ok(gaps[0] >= SEND_RETRY_FIRST_MS && gaps[1] >= 2 * SEND_RETRY_FIRST_MS, `sent again after ${gaps.join(', ')} ms`);
  assert.deepEqual(d.moves, ['pending@workflow', 'paid@provider']);
  assert.equal(state.sends, 3);
});

test('the provider takes none of MAX_SENDS requests: the refund fails, saying so', { timeout: 60_000 }, async () => {
  const d = refundDouble({ reverse: () => ({ kind: 'unavailable', code: '503.001.01', message: 'Service Unavailable' }) });
  const state = await run(d, async (q) => (await start(q)).result());
  assert.equal(d.sends.length, MAX_SENDS);
  assert.deepEqual(d.moves, ['pending@workflow', 'failed@provider']);
  assert.match(d.applied.at(-1)!.lastError ?? '', new RegExp(`503.001.01: Service Unavailable \\(the provider took none of ${MAX_SENDS}`));
  assert.equal(state.state, 'failed');
});

test(
  'an unanswered reversal (timeout) is never sent again; its result, named by our reference, settles it',
  { timeout: 60_000 },
  async () => {
    const d = refundDouble({ reverse: () => ({ kind: 'unknown', code: 'timeout', message: 'no answer within 10000 ms' }) });
    const state = await run(d, async (q) => {
      const h = await start(q);
      const waiting = await until(h, (s) => s.phase === 'waiting');
      assert.equal(waiting.providerRef, null);
      assert.equal(waiting.sent, 'unknown');
      await env.sleep(3 * HOUR);
      await h.signal(refundResultSignal, result('refunded', 'AG_20261127_late'));
      return h.result();
    });
    assert.equal(d.sends.length, 1, 'a reversal that may have been made is not made again');
    assert.deepEqual(d.moves, ['pending@workflow', 'paid@provider']);
    assert.equal(state.providerRef, 'AG_20261127_late');
  },
);

test('a reversal activity that fails (the worker died mid-call) counts as unanswered: not sent again', { timeout: 60_000 }, async () => {
  const d = refundDouble();
  d.activities.reverseRefund = async (input) => {
    d.sends.push({ input, at: await env.currentTimeMs() });
    throw new Error('socket hang up');
  };
  const state = await run(d, async (q) => {
    const h = await start(q);
    await until(h, (s) => s.phase === 'waiting');
    await h.signal(refundResultSignal, result('failed'));
    return h.result();
  });
  assert.equal(d.sends.length, 1);
  assert.equal(state.sent, 'unknown');
  assert.deepEqual(d.moves, ['pending@workflow', 'failed@provider']);
});

test('no result ever: the durable bound expires the refund, and a late result is recorded as refused', { timeout: 60_000 }, async () => {
  const d = refundDouble();
  let begun = 0;
  const state = await run(d, async (q) => {
    // Read once the worker runs: the test server may skip time while a worker starts on a loaded machine.
    begun = await env.currentTimeMs();
    const h = await start(q);
    await env.sleep(RESULT_WAIT_MS + MINUTE);
    await until(h, (s) => s.phase === 'settled');
    await h.signal(refundResultSignal, result('refunded'));
    await until(h, (s) => s.refusals.length === 1);
    return h.result();
  });
  assert.deepEqual(d.moves, ['pending@workflow', 'expired@expiry']);
  assert.deepEqual(d.refused, ['expired→paid@provider']);
  const after = (d.moveTimes.expired - begun) / HOUR;
  assert.ok(after >= RESULT_WAIT_MS / HOUR && after < RESULT_WAIT_MS / HOUR + 0.01, `expired after ${after} h`);
  assert.match(d.applied.at(-1)!.lastError ?? '', /^no_result: .*check at the provider before refunding again/);
  assert.equal(state.state, 'expired');
  assert.ok(LINGER_MS > 0);
});

test('a refund cancelled before its workflow ran is never sent', { timeout: 30_000 }, async () => {
  const d = refundDouble({ state: 'cancelled' });
  const state = await run(d, async (q) => (await start(q)).result());
  assert.equal(d.sends.length, 0);
  assert.deepEqual(d.refused, ['cancelled→pending@workflow']);
  assert.equal(state.state, 'cancelled');
  assert.equal(state.phase, 'done');
});
