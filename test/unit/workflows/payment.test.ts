import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { WorkflowBundle } from '@temporalio/worker';
import type { PaymentActivities, PaymentMoveInput, PaymentMoved, PushOutcome } from '../../../activities/payments/payment.js';
import type { PaymentStatus } from '../../../providers/index.js';
import { canMove, type PaymentState } from '../../../domain/payments/index.js';
import {
  paymentCancelledSignal,
  paymentResultSignal,
  paymentStateQuery,
  LINGER_MS,
  POLL_FIRST_MS,
  PROMPT_LIFE_MS,
  type paymentWorkflow,
  type PaymentResultSignal,
  type PaymentWorkflowState,
} from '../../../workflows/payments/payment.js';
import { timeSkippingEnv, untilQueried, withQueueWorker } from '../../support/workflow-env.js';

// The payment workflow on the time-skipping server, with a payment double that keeps recordMove's
// rule (the contract's state table; a refused move is recorded, never applied) and a provider
// double whose push and status answers each test sets.
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
  /** Refused moves, `from→to@source`. */
  refused: string[];
  pushes: number;
  /** The push number each push carried (the mark a retried attempt finds). */
  pushNumbers: (number | undefined)[];
  polls: number[];
  /** When each push was made (the test server's clock): the polls' backoff counts from the first. */
  pushedAt: number[];
  activities: PaymentActivities;
}

function paymentDouble(o: { push?: (n: number) => PushOutcome; status?: (n: number) => PaymentStatus['state'] } = {}): Double {
  const d: Double = {
    state: 'draft',
    moves: [],
    refused: [],
    pushes: 0,
    pushNumbers: [],
    polls: [],
    pushedAt: [],
    activities: {
      async movePayment(m: PaymentMoveInput): Promise<PaymentMoved> {
        if (!canMove(d.state, m.to) || m.to === 'refunded' || m.to === 'partly_refunded') {
          d.refused.push(`${d.state}→${m.to}@${m.source}`);
          return { applied: false, state: d.state, refusal: `Refused: ${d.state} → ${m.to}` };
        }
        // recordMove's amount rule: a paid result for another amount than the payment's (150,000) is refused.
        if (m.to === 'paid' && m.reported && m.reported.amountMinor !== null && m.reported.amountMinor !== 150000) {
          d.refused.push(`${d.state}→${m.to}@${m.source}:${m.reported.amountMinor}`);
          return { applied: false, state: d.state, refusal: `Refused: ${m.reported.amountMinor} is not 150000` };
        }
        d.state = m.to;
        d.moves.push(`${m.to}@${m.source}`);
        return { applied: true, state: d.state };
      },
      async pushPayment(i) {
        d.pushes++;
        d.pushNumbers.push(i.push);
        d.pushedAt.push(await env.currentTimeMs());
        return o.push ? o.push(d.pushes) : { kind: 'acknowledged', providerRef: `ws_CO_${d.pushes}`, message: 'Success. Request accepted' };
      },
      async paymentStatus() {
        d.polls.push(await env.currentTimeMs());
        const state = o.status ? o.status(d.polls.length) : 'pending';
        return { state, reason: null, providerCode: state === 'paid' ? '0' : null, message: state };
      },
    },
  };
  return d;
}

const run = <T>(d: Double, fn: (taskQueue: string) => Promise<T>) => withQueueWorker(env, bundle, 'payment', d.activities, fn);

const start = async (taskQueue: string, o: { expiresInMs?: number | null; payer?: string | null } = {}) =>
  env.client.workflow.start<typeof paymentWorkflow>('paymentWorkflow', {
    taskQueue,
    workflowId: `payment-${Math.random()}`,
    args: [
      {
        accountId: 1,
        paymentId: '6b1f0c1e-0000-4000-8000-000000000001',
        reference: 'PAY-20261127-00000001',
        state: 'draft',
        amountMinor: 150000,
        currency: 'KES',
        payer: o.payer === undefined ? '+254708374149' : o.payer,
        provider: null,
        expiresAt: o.expiresInMs === null ? null : new Date((await env.currentTimeMs()) + (o.expiresInMs ?? 2 * HOUR)).toISOString(),
      },
    ],
  });

const result = (outcome: PaymentResultSignal['outcome'], providerRef = 'ws_CO_1'): PaymentResultSignal => ({
  eventId: `${providerRef}:${outcome}`,
  providerRef,
  outcome,
  reason: null,
  providerCode: outcome === 'paid' ? '0' : '1',
  message: 'The service request is processed successfully.',
  receipt: outcome === 'paid' ? 'NLJ7RT61SV' : null,
  amountMinor: 150000,
});

/** Waits (in skipped time) until the workflow's state passes `ok`. */
const until = (h: Parameters<typeof untilQueried<PaymentWorkflowState>>[0], ok: (s: PaymentWorkflowState) => boolean) =>
  untilQueried(h, paymentStateQuery, ok);

test('a callback settles it: draft → pending on the push, pending → paid on the result', { timeout: 60_000 }, async () => {
  const d = paymentDouble();
  const state = await run(d, async (q) => {
    const h = await start(q);
    const waiting = await until(h, (s) => s.phase === 'waiting');
    assert.equal(waiting.state, 'pending');
    assert.equal(waiting.providerRef, 'ws_CO_1');
    await h.signal(paymentResultSignal, result('paid'));
    await until(h, (s) => s.phase === 'settled');
    return h.result();
  });
  assert.deepEqual(d.moves, ['pending@provider', 'paid@provider']);
  assert.deepEqual(d.refused, []);
  assert.equal(state.state, 'paid');
  assert.equal(state.receipt, 'NLJ7RT61SV');
  assert.equal(state.phase, 'done');
  assert.equal(d.pushes, 1);
});

test('a duplicate callback changes nothing twice, settled or not yet', { timeout: 60_000 }, async () => {
  const d = paymentDouble();
  const state = await run(d, async (q) => {
    const h = await start(q);
    await until(h, (s) => s.phase === 'waiting');
    await h.signal(paymentResultSignal, result('paid'));
    await h.signal(paymentResultSignal, result('paid'));
    await until(h, (s) => s.phase === 'settled');
    // Replayed later, while the workflow still takes late callbacks.
    await env.sleep(10 * MINUTE);
    await h.signal(paymentResultSignal, result('paid'));
    return h.result();
  });
  assert.deepEqual(d.moves, ['pending@provider', 'paid@provider']);
  assert.deepEqual(d.refused, [], 'a duplicate is dropped, not even asked for');
  assert.equal(state.duplicates, 2);
});

test('no callback: the status is polled on a backoff and the payment is paid by the poll', { timeout: 60_000 }, async () => {
  const d = paymentDouble({ status: (n) => (n < 3 ? 'pending' : 'paid') });
  const state = await run(d, async (q) => (await start(q)).result());
  assert.deepEqual(d.moves, ['pending@provider', 'paid@provider_poll']);
  assert.equal(state.polls, 3);
  // Counted from the push, not from before the worker started: on a loaded machine the test server
  // may skip time while the worker is still starting, which says nothing of the backoff.
  const at = d.polls.map((t) => Math.round((t - d.pushedAt[0]) / 1000));
  // 30 s, then +60 s, then +120 s.
  assert.ok(at[0] >= POLL_FIRST_MS / 1000 && at[0] < 40, `first poll at ${at[0]} s`);
  assert.ok(at[1] - at[0] >= 60 && at[2] - at[1] >= 120, `polls at ${at.join(', ')} s`);
});

test('unanswered: the durable timer expires it at expires_at (open → expired)', { timeout: 60_000 }, async () => {
  const d = paymentDouble();
  let begun = 0;
  let expiredAt = 0;
  const move = d.activities.movePayment;
  d.activities.movePayment = async (m) => {
    if (m.to === 'expired') expiredAt = await env.currentTimeMs();
    return move(m);
  };
  // Read once the worker runs: the test server may skip time while a worker starts on a loaded machine.
  const state = await run(d, async (q) => {
    begun = await env.currentTimeMs();
    return (await start(q, { expiresInMs: 2 * HOUR })).result();
  });
  assert.deepEqual(d.moves, ['pending@provider', 'expired@expiry']);
  assert.equal(state.state, 'expired');
  const after = (expiredAt - begun) / HOUR;
  assert.ok(after >= 2 && after < 2.01, `expired after ${after} h`);
  assert.ok(state.polls > 3, 'polled while waiting');
});

test('a draft without a payer pushes nothing and expires from draft', { timeout: 60_000 }, async () => {
  const d = paymentDouble();
  const state = await run(d, async (q) => (await start(q, { payer: null, expiresInMs: HOUR })).result());
  assert.equal(d.pushes, 0);
  assert.deepEqual(d.moves, ['expired@expiry']);
  assert.equal(state.state, 'expired');
});

test('an illegal move is refused and recorded, never applied: a paid callback after expiry', { timeout: 60_000 }, async () => {
  const d = paymentDouble();
  const state = await run(d, async (q) => {
    const h = await start(q, { expiresInMs: HOUR });
    await env.sleep(HOUR + MINUTE);
    await until(h, (s) => s.phase === 'settled');
    await h.signal(paymentResultSignal, result('paid'));
    await until(h, (s) => s.refusals.length === 1);
    return h.result();
  });
  assert.deepEqual(d.moves, ['pending@provider', 'expired@expiry']);
  assert.deepEqual(d.refused, ['expired→paid@provider']);
  assert.equal(state.state, 'expired');
  assert.equal(state.refusals.length, 1);
});

test('a refused push fails the payment', { timeout: 30_000 }, async () => {
  const refused = paymentDouble({ push: () => ({ kind: 'refused', code: 'invalid_amount', message: 'Cents are not charged.' }) });
  const s1 = await run(refused, async (q) => (await start(q)).result());
  assert.deepEqual(refused.moves, ['pending@provider', 'failed@provider']);
  assert.equal(s1.state, 'failed');
});

test('a timed-out push is not repeated before the prompt’s life', { timeout: 30_000 }, async () => {
  const pushTimes: number[] = [];
  const timedOut = paymentDouble({
    push: (n) =>
      n === 1
        ? { kind: 'timed_out', message: 'no answer within 10000 ms' }
        : { kind: 'acknowledged', providerRef: 'ws_CO_2', message: 'ok' },
    status: () => 'paid',
  });
  const push = timedOut.activities.pushPayment;
  timedOut.activities.pushPayment = async (i) => {
    pushTimes.push(await env.currentTimeMs());
    return push(i);
  };
  const s2 = await run(timedOut, async (q) => (await start(q)).result());
  assert.equal(timedOut.pushes, 2);
  assert.ok(pushTimes[1] - pushTimes[0] >= PROMPT_LIFE_MS, 'the second push waits out the first prompt');
  assert.deepEqual(timedOut.moves, ['pending@provider', 'paid@provider_poll']);
  assert.equal(s2.providerRef, 'ws_CO_2');
});

test('a callback that arrives while the push timed out (no provider id yet) settles it', { timeout: 60_000 }, async () => {
  const d = paymentDouble({ push: () => ({ kind: 'timed_out', message: 'no answer' }) });
  const state = await run(d, async (q) => {
    const h = await start(q);
    await until(h, (s) => s.phase === 'waiting');
    await h.signal(paymentResultSignal, result('paid', 'ws_CO_late'));
    return h.result();
  });
  assert.equal(d.pushes, 1);
  assert.deepEqual(d.moves, ['pending@provider', 'paid@provider']);
  assert.equal(state.providerRef, 'ws_CO_late');
  assert.ok(LINGER_MS > 0);
});

test('the operator cancels while it waits: told by the signal, it stops polling at once and settles', { timeout: 60_000 }, async () => {
  const d = paymentDouble();
  const state = await run(d, async (q) => {
    const h = await start(q);
    await until(h, (s) => s.phase === 'waiting');
    // The operator's cancel: the row moves (recordMove in the request), then the workflow is told.
    d.state = 'cancelled';
    await h.signal(paymentCancelledSignal, { source: 'operator' });
    const settled = await until(h, (s) => s.phase === 'settled');
    assert.equal(settled.state, 'cancelled');
    // Polls would have come every 30 s to 10 minutes; the hour of lingering passes without one.
    await env.sleep(30 * MINUTE);
    return h.result();
  });
  assert.deepEqual(d.moves, ['pending@provider']);
  assert.deepEqual(d.polls, [], 'no poll after the cancel');
  assert.deepEqual(d.refused, [], 'learned from the signal, not from a refused move');
  assert.equal(state.state, 'cancelled');
  assert.deepEqual(state.refusals, []);
  assert.equal(d.pushes, 1);
});

test('cancelled while the push is out: no move after the push, no repush, no poll', { timeout: 60_000 }, async () => {
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  const d = paymentDouble({ push: () => ({ kind: 'timed_out', message: 'no answer' }) });
  const push = d.activities.pushPayment;
  d.activities.pushPayment = async (i) => {
    await held;
    return push(i);
  };
  const state = await run(d, async (q) => {
    const h = await start(q);
    await until(h, (s) => s.pushes === 1);
    d.state = 'cancelled';
    await h.signal(paymentCancelledSignal, { source: 'operator' });
    release();
    return h.result();
  });
  assert.deepEqual(d.moves, [], 'no draft → pending after the cancel');
  assert.deepEqual(d.refused, []);
  assert.equal(d.pushes, 1, 'not pushed again after the prompt’s life');
  assert.deepEqual(d.polls, []);
  assert.equal(state.state, 'cancelled');
});

test('a paid result for another amount is refused: the payment stays pending, then expires', { timeout: 60_000 }, async () => {
  const d = paymentDouble({ status: () => 'paid' });
  const state = await run(d, async (q) => {
    const h = await start(q, { expiresInMs: HOUR });
    await until(h, (s) => s.phase === 'waiting');
    await h.signal(paymentResultSignal, { ...result('paid'), amountMinor: 140000 });
    const refused = await until(h, (s) => s.refusals.length === 1);
    assert.equal(refused.state, 'pending');
    assert.equal(refused.phase, 'waiting');
    return h.result();
  });
  assert.deepEqual(d.refused, ['pending→paid@provider:140000']);
  // The poll's "paid" is the same attempt's result (same event id): dropped, so the query cannot pay it either.
  assert.deepEqual(d.moves, ['pending@provider', 'expired@expiry']);
  assert.equal(state.state, 'expired');
});

test('each push carries its number, the mark a retried attempt of it finds', { timeout: 30_000 }, async () => {
  const d = paymentDouble({
    push: (n) => (n < 3 ? { kind: 'timed_out', message: 'no answer' } : { kind: 'acknowledged', providerRef: 'ws_CO_3', message: 'ok' }),
    status: () => 'paid',
  });
  await run(d, async (q) => (await start(q)).result());
  assert.deepEqual(d.pushNumbers, [1, 2, 3]);
});
