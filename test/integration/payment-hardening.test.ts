import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { ApplicationFailure } from '@temporalio/activity';
import { Client, Connection, WorkflowNotFoundError } from '@temporalio/client';
import { admin, api, eventually, newTenant, sim } from '../support/stack.js';
import { paidAtProvider, paymentsOf, paymentsOrm } from '../support/payments.js';
import { loadConfig } from '../../config.js';
import { createLogger } from '../../logger.js';
import { exec, many, one } from '../../entities/db.js';
import { createProviderRegistry } from '../../providers/index.js';
import { createPaymentActivities, type PushInput } from '../../activities/payments/payment.js';
import { recordMove, startPaymentAfterCommit } from '../../services/payments/index.js';
import { paymentStateQuery } from '../../workflows/payments/payment.js';
import { refundStateQuery } from '../../workflows/payments/refund.js';
import { paymentWorkflowId, refundWorkflowId } from '../../temporal/ids.js';

// What keeps payments right when the world misbehaves (issue 26 points 3, 5, 9; docs/payments.md):
// an operator's cancel reaches the running workflow; a paid result for another amount is refused on
// the timeline; a push whose worker died mid-call is not pushed again by the activity's retry; a
// payment or refund whose workflow start was lost is started by the worker's reconciler; the ledger refuses
// UPDATE and DELETE in the database; the callback's lookup by reference has its index.
const orm = await paymentsOrm(4);
const connection = await Connection.connect({ address: process.env.TEMPORAL_ADDRESS ?? '127.0.0.1:7233' });
const temporal = new Client({ connection });
after(async () => {
  await orm.close();
  await connection.close();
});
const pay = paymentsOf(orm);
const log = createLogger('test', 'error');
const deps = { temporal, config: { taskQueue: loadConfig().taskQueue }, log, orm };
let phoneSeq = 0;
const payer = () => `+2547${String(40_000_000 + process.pid * 17 + ++phoneSeq * 7919).slice(-8)}`;
const fault = async (kind: string, phone: string, extra: Record<string, unknown> = {}) => {
  const r = await sim('POST', '/_sim/faults', { provider: 'payment', kind, to: phone.slice(1), ...extra });
  assert.equal(r.status, 201, r.text);
};
const simPushes = async (phone: string) => (await sim('GET', `/_sim/payments?phone=${encodeURIComponent(phone)}`)).body.count as number;
const stop = (accountId: number, paymentId: string) =>
  temporal.workflow
    .getHandle(paymentWorkflowId(accountId, paymentId))
    .terminate('test done')
    .catch(() => undefined);
type TimelineRow = { old_state: string | null; new_state: string; source: string; message: string | null };

test('the operator’s cancel reaches the running workflow: it stops polling at once and settles (state query)', async () => {
  const t = await newTenant();
  const phone = payer();
  // Settled at the provider without a callback: only a poll (first after 30 s) could tell the workflow anything.
  await fault('no_callback', phone);
  const p = await pay.request(t.accountId, {
    amountMinor: 150_000,
    currency: 'KES',
    payer: phone,
    expiresAt: new Date(Date.now() + 10 * 60_000),
  });
  assert.equal(await startPaymentAfterCommit(deps, p, t.accountId), true);
  const h = temporal.workflow.getHandle(paymentWorkflowId(t.accountId, p.id));
  try {
    const waiting = await eventually(
      () => h.query(paymentStateQuery),
      (s) => s.phase === 'waiting' && s.state === 'pending',
      30_000,
      200,
      'pushed and waiting',
    );
    assert.equal(waiting.polls, 0);

    const cancel = await admin('POST', `/accounts/${t.accountId}/payments/${p.id}/cancel`, { reason: 'customer changed their mind' });
    assert.equal(cancel.status, 200, cancel.text);
    assert.equal(cancel.body.data.state, 'cancelled');
    const settled = await eventually(
      () => h.query(paymentStateQuery),
      (s) => s.phase !== 'waiting',
      20_000,
      200,
      'the workflow leaves its waiting phase',
    );
    assert.equal(settled.phase, 'settled');
    assert.equal(settled.state, 'cancelled');
    assert.deepEqual(settled.refusals, [], 'told by the signal, not by a refused move');
    assert.equal(settled.polls, 0, 'no poll after the cancel');
    const d = (await api('GET', `/api/v3/payments/${p.id}`, t.token)).body.data;
    assert.deepEqual(
      d.timeline.map((e: TimelineRow) => `${e.old_state}→${e.new_state}@${e.source}`),
      ['null→draft@test', 'draft→pending@provider', 'pending→cancelled@operator'],
    );
  } finally {
    await stop(t.accountId, p.id);
  }

  // A payment with no running workflow is cancelled all the same (nothing to tell).
  const alone = await pay.request(t.accountId, { amountMinor: 5_000, currency: 'KES' });
  const quiet = await admin('POST', `/accounts/${t.accountId}/payments/${alone.id}/cancel`, {});
  assert.equal(quiet.status, 200, quiet.text);
  assert.equal(quiet.body.data.state, 'cancelled');
});

test('a paid callback for another amount is refused and recorded with both amounts; the payment stays pending', async () => {
  const t = await newTenant();
  const phone = payer();
  // The payer "pays" KES 1,400 against a prompt for KES 1,500.
  await fault('payment_result', phone, { code: 0, amount: 1400 });
  const p = await pay.request(t.accountId, {
    amountMinor: 150_000,
    currency: 'KES',
    payer: phone,
    expiresAt: new Date(Date.now() + 10 * 60_000),
  });
  assert.equal(await startPaymentAfterCommit(deps, p, t.accountId), true);
  const h = temporal.workflow.getHandle(paymentWorkflowId(t.accountId, p.id));
  try {
    const s = await eventually(
      () => h.query(paymentStateQuery),
      (x) => x.refusals.length > 0,
      30_000,
      200,
      'the mismatched result is refused',
    );
    assert.equal(s.state, 'pending');
    assert.equal(s.phase, 'waiting');
    const d = (await api('GET', `/api/v3/payments/${p.id}`, t.token)).body.data;
    assert.equal(d.state, 'pending');
    assert.equal(d.settled_at, null);
    assert.deepEqual(d.ledger, [], 'no money on the ledger');
    const refused = d.timeline.at(-1) as TimelineRow;
    assert.deepEqual([refused.old_state, refused.new_state, refused.source], ['pending', 'pending', 'provider']);
    assert.match(refused.message ?? '', /KES 1,400\.00 paid \(140000 minor units\); the payment is KES 1,500\.00 \(150000\)/);
  } finally {
    await stop(t.accountId, p.id);
  }
});

test('recordMove refuses a paid move whose reported currency or amount is not the payment’s, and applies a matching one', async () => {
  const t = await newTenant();
  const p = await pay.inState(t.accountId, 'pending', { amountMinor: 150_000, currency: 'KES' });
  const move = (reported: { amountMinor: number | null; currency?: string | null }) =>
    recordMove(pay.em(), { accountId: t.accountId, payment: p.id, to: 'paid', source: 'provider', reported });
  const currency = await move({ amountMinor: 150_000, currency: 'TZS' });
  assert.equal(currency.applied, false);
  assert.ok(!currency.applied && currency.mismatch);
  assert.match(!currency.applied ? currency.refusal : '', /reported a payment in TZS; the payment is in KES/);
  const amount = await move({ amountMinor: 150_001 });
  assert.ok(!amount.applied && amount.mismatch);
  const paid = await move({ amountMinor: 150_000, currency: 'kes' });
  assert.equal(paid.applied, true);
  assert.equal(paid.payment.state, 'paid');
  // A move the table does not have is refused as such, not as a mismatch.
  const again = await move({ amountMinor: 1 });
  assert.ok(!again.applied && !again.mismatch);
  const rows = await many<{ refused: string | null; source: string }>(
    pay.em(),
    'select refused, source from payment_events where payment_id = ? and refused is not null order by id',
    [p.id],
  );
  assert.deepEqual(
    rows.map((r) => `${r.refused}@${r.source}`),
    ['paid@provider', 'paid@provider', 'paid@provider'],
  );
});

test('a push whose worker died mid-call is not pushed again by the retry; a push that pushed nothing is', async () => {
  const t = await newTenant();
  // The activities as the worker builds them, on the stack's database and simulator; a short
  // provider timeout, as the simulator holds a timed-out push's answer for 30 s.
  const registry = createProviderRegistry(loadConfig(), { timeoutMs: 3_000 });
  const acts = createPaymentActivities({ orm, log, payments: (stored) => registry.payments(stored) });
  const phone = payer();
  const p = await pay.request(t.accountId, { amountMinor: 150_000, currency: 'KES', payer: phone });
  const push = (n: number): PushInput => ({
    accountId: t.accountId,
    paymentId: p.id,
    reference: p.reference,
    amountMinor: 150_000,
    currency: 'KES',
    payer: phone,
    provider: null,
    push: n,
  });

  // Attempt 1 of push 1 reaches the provider and hangs there (its worker "dies": its answer is never used).
  await fault('payment_timeout', phone);
  const dying = acts.pushPayment(push(1));
  await eventually(
    () => simPushes(phone),
    (n) => n === 1,
    10_000,
    100,
    'the first attempt reached the provider',
  );
  // Temporal retries the activity (attempt 2 of the same push): the payer is not prompted again.
  const retried = await acts.pushPayment(push(1));
  assert.equal(retried.kind, 'timed_out');
  assert.equal(await simPushes(phone), 1, 'one prompt on the payer’s phone');
  assert.equal((await dying).kind, 'timed_out');

  // The workflow's next push (after the prompt's life) is a new number: pushed, and its id stored.
  const second = await acts.pushPayment(push(2));
  assert.equal(second.kind, 'acknowledged');
  assert.equal(await simPushes(phone), 2);
  // A retry of an acknowledged push (its completion lost) answers the stored id, pushing nothing.
  const replayed = await acts.pushPayment(push(2));
  assert.deepEqual(replayed.kind === 'acknowledged' && replayed.providerRef, second.kind === 'acknowledged' && second.providerRef);
  assert.equal(await simPushes(phone), 2);
  const row = await one<{ pushes_started: number }>(pay.em(), 'select pushes_started from payments where id = ?', [p.id]);
  assert.equal(row?.pushes_started, 2);

  // 503: the provider pushed nothing, so the mark is put back and the retry pushes.
  const other = payer();
  const q = await pay.request(t.accountId, { amountMinor: 150_000, currency: 'KES', payer: other });
  await fault('payment_unavailable', other);
  const unavailable = { ...push(1), paymentId: q.id, reference: q.reference, payer: other };
  await assert.rejects(acts.pushPayment(unavailable), (err: unknown) => err instanceof ApplicationFailure && !err.nonRetryable);
  assert.equal(await simPushes(other), 0);
  assert.equal((await acts.pushPayment(unavailable)).kind, 'acknowledged');
  assert.equal(await simPushes(other), 1);
});

test('the reconciler starts the workflow of a payment whose start was lost, and expires one already past its expiry', async () => {
  const t = await newTenant();
  const owed = await pay.request(
    t.accountId,
    { amountMinor: 5_000, currency: 'KES', expiresAt: new Date(Date.now() + 3_600_000) },
    { owed: true },
  );
  const lapsed = await pay.request(
    t.accountId,
    { amountMinor: 5_000, currency: 'KES', expiresAt: new Date(Date.now() - 60_000) },
    { owed: true },
  );
  // Requested before the reconciler's grace, as a payment whose request committed and whose start never came.
  await exec(pay.em(), `update payments set created_at = now() - interval '5 minutes' where id in (?, ?)`, [owed.id, lapsed.id]);
  const h = temporal.workflow.getHandle(paymentWorkflowId(t.accountId, owed.id));
  try {
    const s = await eventually(
      () => h.query(paymentStateQuery).catch(() => null),
      (x) => x !== null,
      60_000,
      500,
      'the reconciler started its workflow',
    );
    assert.equal(s!.state, 'draft', 'no payer: nothing pushed, waiting');
    assert.equal(s!.phase, 'waiting');
    const marked = await one<{ started: boolean }>(
      pay.em(),
      'select workflow_started_at is not null as started from payments where id = ?',
      [owed.id],
    );
    assert.equal(marked?.started, true, 'recorded, so the next pass leaves it alone');

    const expired = await eventually(
      () => api('GET', `/api/v3/payments/${lapsed.id}`, t.token),
      (r) => r.body?.data?.state === 'expired',
      60_000,
      500,
      'the lapsed payment is expired',
    );
    assert.deepEqual(
      expired.body.data.timeline.map((e: TimelineRow) => `${e.old_state}→${e.new_state}@${e.source}`),
      ['null→draft@test', 'draft→expired@expiry'],
    );
    await assert.rejects(
      temporal.workflow.getHandle(paymentWorkflowId(t.accountId, lapsed.id)).describe(),
      WorkflowNotFoundError,
      'no workflow for a payment that can no longer be paid',
    );
  } finally {
    await stop(t.accountId, owed.id);
  }
});

test('the reconciler starts the workflow of a refund whose start was lost: sent once, settled; a cancelled one is left alone', async () => {
  const t = await newTenant();
  const p = await paidAtProvider(t.accountId, { amountMinor: 20_000 });
  const owed = await pay.requestRefund(t.accountId, p.id, 5_000, 'start lost', { owed: true });
  const dropped = await pay.requestRefund(t.accountId, p.id, 3_000, 'cancelled before its start', { owed: true });
  const cancel = await admin('POST', `/accounts/${t.accountId}/payments/${dropped.id}/cancel`, {});
  assert.equal(cancel.status, 200, cancel.text);
  // Requested before the reconciler's grace, as refunds whose request committed and whose start never came.
  await exec(pay.em(), `update payments set created_at = now() - interval '5 minutes' where id in (?, ?)`, [owed.id, dropped.id]);
  const h = temporal.workflow.getHandle(refundWorkflowId(t.accountId, owed.id));
  try {
    const settled = await eventually(
      () => api('GET', `/api/v3/payments/${owed.id}`, t.token),
      (r) => r.body?.data?.state === 'paid',
      60_000,
      500,
      'the reconciler started its workflow, which reversed it',
    );
    assert.deepEqual(
      settled.body.data.timeline.map((e: TimelineRow) => `${e.old_state}→${e.new_state}@${e.source}`),
      ['null→draft@operator', 'draft→pending@workflow', 'pending→paid@provider'],
    );
    assert.equal((await h.query(refundStateQuery)).sends, 1);
    const reversals = (await sim('GET', '/_sim/payments/reversals')).body.reversals.filter(
      (v: { occasion: string }) => v.occasion === owed.reference,
    );
    assert.equal(reversals.length, 1, 'sent once');
    const marked = await many<{ id: string; started: boolean }>(
      pay.em(),
      'select id, workflow_started_at is not null as started from payments where id in (?, ?)',
      [owed.id, dropped.id],
    );
    assert.deepEqual(
      Object.fromEntries(marked.map((m) => [m.id, m.started])),
      { [owed.id]: true, [dropped.id]: false },
      'the start recorded; the cancelled refund owes none',
    );
    await assert.rejects(
      temporal.workflow.getHandle(refundWorkflowId(t.accountId, dropped.id)).describe(),
      WorkflowNotFoundError,
      'no workflow for a refund cancelled in draft',
    );
    const parent = (await api('GET', `/api/v3/payments/${p.id}`, t.token)).body.data;
    assert.deepEqual([parent.state, parent.refunded_minor], ['partly_refunded', 5_000]);
  } finally {
    await h.terminate('test done').catch(() => undefined);
  }
});

test('ledger_entries is append-only in the database: UPDATE and DELETE are refused', async () => {
  const t = await newTenant();
  const p = await pay.inState(t.accountId, 'paid', { amountMinor: 7_000, currency: 'KES' });
  const before = await many<{ entry_no: number; amount_minor: string }>(
    pay.em(),
    'select entry_no, amount_minor from ledger_entries where payment_id = ? order by entry_no',
    [p.id],
  );
  assert.equal(before.length, 2);
  await assert.rejects(
    exec(pay.em(), 'update ledger_entries set amount_minor = amount_minor + 1 where payment_id = ?', [p.id]),
    /ledger_entries is append-only: UPDATE refused/,
  );
  await assert.rejects(
    exec(pay.em(), 'delete from ledger_entries where payment_id = ?', [p.id]),
    /ledger_entries is append-only: DELETE refused/,
  );
  const afterwards = await many<{ entry_no: number; amount_minor: string }>(
    pay.em(),
    'select entry_no, amount_minor from ledger_entries where payment_id = ? order by entry_no',
    [p.id],
  );
  assert.deepEqual(afterwards, before);
});

test('the callback’s lookup by reference alone (?ref=) reads an index of its own', async () => {
  const t = await newTenant();
  const p = await pay.request(t.accountId, { amountMinor: 5_000, currency: 'KES' });
  const plan = await pay.em().transactional(async (tx) => {
    // The table is small in a test run; forbid the sequential scan to see which index the planner has.
    await exec(tx, 'set local enable_seqscan = off');
    return many<{ 'QUERY PLAN': string }>(tx, 'explain select id, account_id, state, is_refund from payments where reference = ? limit 2', [
      p.reference,
    ]);
  });
  const text = plan.map((r) => r['QUERY PLAN']).join('\n');
  assert.match(text, /payments_reference_index/, text);
});

test('the reconciler’s search for owed workflows and reconciliation’s lookup by receipt read their indexes', async () => {
  const explain = (sql: string, params: unknown[]) =>
    pay.em().transactional(async (tx) => {
      await exec(tx, 'set local enable_seqscan = off');
      const rows = await many<{ 'QUERY PLAN': string }>(tx, `explain ${sql}`, params);
      return rows.map((r) => r['QUERY PLAN']).join('\n');
    });
  // The statements of services/payments/store.ts paymentsOwingWorkflow and store/reconciliation.ts paymentsNamed.
  const owed = await explain(
    `select id from payments
      where workflow_started_at is null and state in ('draft', 'pending') and (not is_refund or state = 'draft')
        and created_at < now() - make_interval(secs => ?)
      order by created_at limit ?`,
    [30, 200],
  );
  assert.match(owed, /payments_workflow_owed_index/, owed);
  const byReceipt = await explain('select p.id from payments p where p.provider_receipt = any(?::text[])', [['SKR1AAAAAA', 'SKR1BBBBBB']]);
  assert.match(byReceipt, /payments_provider_receipt_index/, byReceipt);
});
