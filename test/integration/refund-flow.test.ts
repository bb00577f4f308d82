import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { Client, Connection } from '@temporalio/client';
import { admin, api, eventually, newTenant, sim, uniquePhone, API_URL } from '../support/stack.js';
import { paidAtProvider, paymentsOf, paymentsOrm } from '../support/payments.js';
import { many, one } from '../../entities/db.js';
import { loadConfig } from '../../config.js';
import { startRefundAfterCommit } from '../../services/payments/index.js';
import { paymentStateQuery } from '../../workflows/payments/payment.js';
import { refundStateQuery } from '../../workflows/payments/refund.js';
import { paymentWorkflowId, refundWorkflowId } from '../../temporal/ids.js';
import { signCallback } from '../../providers/mpesa-daraja/signature.js';
import { PAYMENT_REFUND_RESULT_PATH } from '../../providers/mpesa-daraja/webhook.js';
import { TEST_SECRETS } from '../../scripts/secrets.js';

// Refunds end to end (issue 26 points 4, 9, 10): the operator refunds a payment paid at the simulated
// M-Pesa, the refund's workflow reverses the payment's receipt there, the simulator posts the signed
// reversal result to the API, and the refund settles (the parent partly_refunded, then refunded) or
// fails (its amount refundable again). Replayed results change nothing twice; a payment settled by a
// status query alone has no receipt and its refund fails saying so, unless its callback comes after
// all (the receipt is then kept); a refund cancelled in draft is never sent.
const orm = await paymentsOrm(2);
const connection = await Connection.connect({ address: process.env.TEMPORAL_ADDRESS ?? '127.0.0.1:7233' });
const temporal = new Client({ connection });
after(async () => {
  await orm.close();
  await connection.close();
});

const pay = paymentsOf(orm);
const P = (account: number) => `/accounts/${account}/payments`;
const read = async (account: number, id: string) => {
  const r = await admin('GET', `${P(account)}/${id}`);
  assert.equal(r.status, 200, r.text);
  return r.body.data;
};
const refund = (account: number, payment: string, body: Record<string, unknown>) => admin('POST', `${P(account)}/${payment}/refunds`, body);
const settled = (account: number, id: string, state: string, what: string) =>
  eventually(
    () => read(account, id),
    (p) => p.state === state,
    30_000,
    200,
    what,
  );
const steps = (p: { timeline: { old_state: string | null; new_state: string; source: string }[] }) =>
  p.timeline.map((e) => `${e.old_state}→${e.new_state}@${e.source}`);
const reversalsFor = async (reference: string) =>
  (
    (await sim('GET', '/_sim/payments/reversals')).body.reversals as {
      occasion: string;
      transactionId: string;
      amount: number;
      conversationId: string;
    }[]
  ).filter((v) => v.occasion === reference);

/** Per payment and per ledger account of the tenant, debits equal credits. */
async function ledgerNets(accountId: number) {
  const legs = await many<{ payment_id: string; direction: string; account: string; amount_minor: string }>(
    orm.em.fork(),
    'select payment_id, direction, account, amount_minor from ledger_entries where account_id = ?',
    [accountId],
  );
  const perPayment = new Map<string, number>();
  const perAccount: Record<string, number> = {};
  for (const l of legs) {
    const signed = (l.direction === 'debit' ? 1 : -1) * Number(l.amount_minor);
    perPayment.set(l.payment_id, (perPayment.get(l.payment_id) ?? 0) + signed);
    perAccount[l.account] = (perAccount[l.account] ?? 0) + signed;
  }
  for (const [id, n] of perPayment) assert.equal(n, 0, `payment ${id} balances`);
  return perAccount;
}

test('the operator refunds part, then the rest: reversed at the simulator, settled by the signed result, the parent refunded', async () => {
  const t = await newTenant();
  const p = await paidAtProvider(t.accountId, { amountMinor: 150_000 });
  // The payment keeps the provider's receipt from its result: what the reversal names.
  const stored = await one<{ provider_receipt: string | null }>(orm.em.fork(), 'select provider_receipt from payments where id = ?', [
    p.id,
  ]);
  const pushes = (await sim('GET', `/_sim/payments?phone=${encodeURIComponent(p.payer)}`)).body.payments;
  assert.equal(pushes.length, 1);
  assert.equal(stored?.provider_receipt, pushes[0].receipt);
  assert.match(stored!.provider_receipt!, /^[A-Z0-9]{10}$/);

  const part = await refund(t.accountId, p.id, { amount_minor: 40_000, reason: 'one item was missing' });
  assert.equal(part.status, 201, part.text);
  assert.equal(part.body.data.state, 'draft', 'answered before anything is sent');
  const r1 = await settled(t.accountId, part.body.data.id, 'paid', 'the first refund settles');
  assert.deepEqual(steps(r1), ['null→draft@operator', 'draft→pending@workflow', 'pending→paid@provider']);
  assert.deepEqual(
    r1.ledger.map((l: { kind: string; direction: string; account: string; amount_minor: number }) => [
      l.kind,
      l.direction,
      l.account,
      l.amount_minor,
    ]),
    [
      ['refund', 'debit', 'customer_payments', 40_000],
      ['refund', 'credit', 'provider_clearing', 40_000],
    ],
  );
  const [reversal] = await reversalsFor(r1.reference);
  assert.deepEqual([reversal?.transactionId, reversal?.amount], [stored!.provider_receipt, 400], 'the receipt, in whole shillings');
  let parent = await read(t.accountId, p.id);
  assert.equal(parent.state, 'partly_refunded');
  assert.deepEqual([parent.refunded_minor, parent.refundable_minor], [40_000, 110_000]);

  // The simulator's result posted again, byte for byte with its signature: dropped as seen.
  const [cb] = (
    await sim('GET', `/_sim/callbacks?provider=payment&kind=payment.reversal&messageId=${encodeURIComponent(reversal!.conversationId)}`)
  ).body.callbacks;
  assert.ok(cb, 'the reversal result was posted');
  const replay = await fetch(cb.url, { method: 'POST', headers: cb.headers, body: cb.rawBody });
  assert.equal(replay.status, 200, await replay.text());
  const wf = temporal.workflow.getHandle(refundWorkflowId(t.accountId, r1.id));
  const state = await eventually(
    () => wf.query(refundStateQuery),
    (s) => s.duplicates >= 1,
    20_000,
    200,
    'the replay is seen as a duplicate',
  );
  assert.equal(state.state, 'paid');
  assert.equal(state.sends, 1);
  const again = await read(t.accountId, r1.id);
  assert.deepEqual([again.timeline.length, again.ledger.length], [3, 2], 'the replay changed nothing');
  assert.equal((await read(t.accountId, p.id)).timeline.length, parent.timeline.length);

  // The rest, by leaving the amount out: the parent is refunded.
  const rest = await refund(t.accountId, p.reference, { reason: 'order cancelled' });
  assert.equal(rest.status, 201, rest.text);
  assert.equal(rest.body.data.amount_minor, 110_000);
  await settled(t.accountId, rest.body.data.id, 'paid', 'the second refund settles');
  parent = await settled(t.accountId, p.id, 'refunded', 'the parent is refunded');
  assert.deepEqual([parent.refunded_minor, parent.refundable_minor, parent.amount_minor], [150_000, 0, 150_000]);
  assert.deepEqual(steps(parent).slice(-2), ['paid→partly_refunded@refund', 'partly_refunded→refunded@refund']);
  assert.deepEqual(await ledgerNets(t.accountId), { provider_clearing: 0, customer_payments: 0 }, 'everything collected was given back');
  for (const wfId of [r1.id, rest.body.data.id])
    await temporal.workflow.getHandle(refundWorkflowId(t.accountId, wfId)).terminate('test done');
});

test('reversal_fails: the refund fails with the provider’s code, and its amount is refundable again', async () => {
  const t = await newTenant();
  const p = await paidAtProvider(t.accountId, { amountMinor: 90_000 });
  const armed = await sim('POST', '/_sim/faults', { provider: 'payment', kind: 'reversal_fails', to: p.payer.slice(1) });
  assert.equal(armed.status, 201, armed.text);
  const made = await refund(t.accountId, p.id, { amount_minor: 50_000, reason: 'damaged' });
  assert.equal(made.status, 201, made.text);
  const failed = await settled(t.accountId, made.body.data.id, 'failed', 'the refund fails');
  assert.match(failed.last_error, /2001/);
  assert.deepEqual(steps(failed), ['null→draft@operator', 'draft→pending@workflow', 'pending→failed@provider']);
  assert.equal(failed.ledger.length, 0, 'no money moved');
  let parent = await read(t.accountId, p.id);
  assert.equal(parent.state, 'paid');
  assert.deepEqual([parent.refunded_minor, parent.refundable_minor], [0, 90_000], 'the headroom is back');

  // The fault is spent: a refund of all of it now settles.
  const whole = await refund(t.accountId, p.id, { reason: 'damaged, again' });
  assert.equal(whole.status, 201, whole.text);
  assert.equal(whole.body.data.amount_minor, 90_000);
  await settled(t.accountId, whole.body.data.id, 'paid', 'the second refund settles');
  parent = await settled(t.accountId, p.id, 'refunded', 'the parent is refunded');
  assert.equal(parent.refunded_minor + parent.refundable_minor, parent.amount_minor);
  await ledgerNets(t.accountId);
});

test('concurrent refunds: three partial refunds taken and settled, a fourth refused; the parent refunded, ledgers balanced', async () => {
  const t = await newTenant();
  const p = await paidAtProvider(t.accountId, { amountMinor: 90_000, currency: 'TZS' });
  const answers = await Promise.all(
    Array.from({ length: 4 }, (_, i) => refund(t.accountId, p.id, { amount_minor: 30_000, reason: `part ${i}` })),
  );
  const taken = answers.filter((r) => r.status === 201);
  assert.equal(taken.length, 3, answers.map((r) => r.status).join(','));
  assert.deepEqual(
    answers.filter((r) => r.status !== 201).map((r) => r.status),
    [422],
  );
  for (const r of taken) await settled(t.accountId, r.body.data.id, 'paid', `refund ${r.body.data.reference} settles`);
  const parent = await settled(t.accountId, p.id, 'refunded', 'the parent is refunded');
  assert.deepEqual([parent.refunded_minor, parent.refundable_minor], [90_000, 0]);
  assert.equal(parent.refunds.length, 3);
  assert.deepEqual(
    steps(parent).filter((s) => s.endsWith('@refund')),
    ['paid→partly_refunded@refund', 'partly_refunded→partly_refunded@refund', 'partly_refunded→refunded@refund'],
  );
  const reversed = (await Promise.all(taken.map((r) => reversalsFor(r.body.data.reference)))).flat();
  assert.deepEqual(
    reversed.map((v) => v.amount),
    [300, 300, 300],
    'one reversal each, never more',
  );
  assert.deepEqual(await ledgerNets(t.accountId), { provider_clearing: 0, customer_payments: 0 });
});

test('the provider down: the reversal is sent again once it takes it; an answer lost is never sent again, its result settles the refund', async () => {
  const t = await newTenant();
  const p = await paidAtProvider(t.accountId, { amountMinor: 100_000 });
  const stateOf = (id: string) => temporal.workflow.getHandle(refundWorkflowId(t.accountId, id)).query(refundStateQuery);

  // 503: nothing reversed, so the workflow sends it again (after 10 s).
  await sim('POST', '/_sim/faults', { provider: 'payment', kind: 'payment_unavailable', to: p.payer.slice(1) });
  const a = await refund(t.accountId, p.id, { amount_minor: 30_000, reason: 'provider down' });
  assert.equal(a.status, 201, a.text);
  await settled(t.accountId, a.body.data.id, 'paid', 'the refund sent again settles');
  assert.equal((await reversalsFor(a.body.data.reference)).length, 1, 'one reversal made');
  assert.deepEqual(await stateOf(a.body.data.id).then((s) => [s.sends, s.sent]), [2, 'acknowledged']);

  // The answer lost (the simulator made the reversal and answers after our patience): never sent again;
  // the result, naming the refund by our reference, settles it.
  await sim('POST', '/_sim/faults', { provider: 'payment', kind: 'payment_timeout', to: p.payer.slice(1) });
  const b = await refund(t.accountId, p.id, { amount_minor: 20_000, reason: 'answer lost' });
  assert.equal(b.status, 201, b.text);
  const paid = await settled(t.accountId, b.body.data.id, 'paid', 'the refund whose answer was lost settles by its result');
  assert.deepEqual(steps(paid), ['null→draft@operator', 'draft→pending@workflow', 'pending→paid@provider']);
  assert.equal((await reversalsFor(b.body.data.reference)).length, 1, 'one reversal made, never two');
  assert.deepEqual(await stateOf(b.body.data.id).then((s) => [s.sends, s.sent]), [1, 'unknown']);
  const parent = await read(t.accountId, p.id);
  assert.deepEqual([parent.state, parent.refunded_minor, parent.refundable_minor], ['partly_refunded', 50_000, 50_000]);
  await ledgerNets(t.accountId);
});

test('a payment settled by the status query alone has no receipt: its refund fails saying so, and nothing is sent', async () => {
  const t = await newTenant();
  const payer = uniquePhone('2547');
  await sim('POST', '/_sim/faults', { provider: 'payment', kind: 'no_callback', to: payer.slice(1) });
  const made = await admin('POST', P(t.accountId), { amount_minor: 20_000, currency: 'KES', payer });
  assert.equal(made.status, 201, made.text);
  // The payment workflow's first poll is 30 s after the push.
  const p = await eventually(
    () => read(t.accountId, made.body.data.id),
    (x) => x.state === 'paid',
    60_000,
    500,
    'paid by the poll',
  );
  assert.equal(steps(p).at(-1), 'pending→paid@provider_poll');
  const r = await refund(t.accountId, p.id, { reason: 'no receipt' });
  assert.equal(r.status, 201, r.text);
  const failed = await settled(t.accountId, r.body.data.id, 'failed', 'the refund fails');
  assert.match(failed.last_error, /^receipt_required: /);
  assert.deepEqual(await reversalsFor(failed.reference), [], 'nothing was sent');
  assert.equal((await read(t.accountId, p.id)).refundable_minor, 20_000);
});

test('a receipt learnt late: a payment the status poll settled keeps the receipt of its callback that comes after; its refund reverses it', async () => {
  const t = await newTenant();
  const payer = uniquePhone('2547');
  const { lateCallbackMs } = (await sim('GET', '/_sim/payments/config')).body;
  // The poll comes 30 s after the push; the callback 45 s after the payer paid, so the poll settles it first.
  assert.equal((await sim('POST', '/_sim/payments/config', { lateCallbackMs: 45_000 })).status, 200);
  try {
    await sim('POST', '/_sim/faults', { provider: 'payment', kind: 'late_callback', to: payer.slice(1) });
    const made = await admin('POST', P(t.accountId), { amount_minor: 20_000, currency: 'KES', payer });
    assert.equal(made.status, 201, made.text);
    const p = await eventually(
      () => read(t.accountId, made.body.data.id),
      (x) => x.state === 'paid',
      60_000,
      500,
      'paid by the poll',
    );
    assert.equal(steps(p).at(-1), 'pending→paid@provider_poll');
    const receiptOf = async () =>
      (await one<{ provider_receipt: string | null }>(orm.em.fork(), 'select provider_receipt from payments where id = ?', [p.id]))!
        .provider_receipt;
    const [atSim] = (await sim('GET', `/_sim/payments?phone=${encodeURIComponent(payer)}`)).body.payments;
    assert.equal(atSim.callbacksSent, 0, 'the callback has not come yet');
    assert.equal(await receiptOf(), null, 'the poll gives no receipt');

    const kept = await eventually(receiptOf, (r) => r !== null, 60_000, 500, 'the late callback’s receipt kept');
    assert.equal(kept, atSim.receipt);
    // The callback repeated the poll's outcome: the workflow dropped it, nothing moved twice.
    const wf = await eventually(
      () => temporal.workflow.getHandle(paymentWorkflowId(t.accountId, p.id)).query(paymentStateQuery),
      (s) => s.duplicates >= 1,
      20_000,
      200,
      'the callback is a duplicate',
    );
    assert.deepEqual([wf.state, wf.polls > 0], ['paid', true]);
    const replay = await sim('POST', `/_sim/payments/${atSim.checkoutRequestId}/callback`);
    assert.equal(replay.status, 200, replay.text);
    const after = await read(t.accountId, p.id);
    assert.deepEqual([after.timeline.length, after.ledger.length], [p.timeline.length, p.ledger.length], 'nothing moved twice');
    assert.equal(await receiptOf(), atSim.receipt);

    const r = await refund(t.accountId, p.id, { amount_minor: 5_000, reason: 'receipt learnt late' });
    assert.equal(r.status, 201, r.text);
    const done = await settled(t.accountId, r.body.data.id, 'paid', 'the refund settles');
    const [reversal] = await reversalsFor(done.reference);
    assert.deepEqual([reversal?.transactionId, reversal?.amount], [atSim.receipt, 50]);
    assert.equal((await read(t.accountId, p.id)).state, 'partly_refunded');
    await temporal.workflow.getHandle(paymentWorkflowId(t.accountId, p.id)).terminate('test done');
  } finally {
    await sim('POST', '/_sim/payments/config', { lateCallbackMs });
  }
});

test('a refund cancelled in draft is never sent: its workflow finds its move to pending refused', async () => {
  const t = await newTenant();
  const p = await paidAtProvider(t.accountId, { amountMinor: 30_000 });
  // Requested, its start not come yet (the commit answered; the workflow is started after it).
  const draft = await pay.requestRefund(t.accountId, p.id, 10_000, 'cancel me');
  const cancelled = await admin('POST', `${P(t.accountId)}/${draft.id}/cancel`, { reason: 'kept the goods' });
  assert.equal(cancelled.status, 200, cancelled.text);
  assert.equal(cancelled.body.data.state, 'cancelled');

  // Its workflow starts after all, with the refund as it was requested.
  const deps = { temporal, config: { taskQueue: loadConfig().taskQueue } };
  assert.equal(await startRefundAfterCommit(deps, draft, t.accountId), true);
  const result = await temporal.workflow.getHandle(refundWorkflowId(t.accountId, draft.id)).result();
  assert.deepEqual([result.state, result.sends, result.phase], ['cancelled', 0, 'done']);
  assert.match(result.refusals[0]!, /cancelled → pending is not a move/);
  assert.deepEqual(await reversalsFor(draft.reference), [], 'nothing was sent');
  const r = await read(t.accountId, draft.id);
  assert.deepEqual(steps(r), ['null→draft@operator', 'draft→cancelled@operator', 'cancelled→cancelled@workflow']);
  const parent = await read(t.accountId, p.id);
  assert.deepEqual([parent.state, parent.refundable_minor], ['paid', 30_000]);
});

test('bad input and other accounts: 4xx, nothing written; unsigned refund results 403; an unknown one 200 and ignored', async () => {
  const t = await newTenant();
  const other = await newTenant();
  const p = await paidAtProvider(t.accountId, { amountMinor: 10_000 });
  assert.equal((await refund(other.accountId, p.id, { amount_minor: 100, reason: 'not mine' })).status, 404, 'another account’s payment');
  assert.equal((await refund(other.accountId, p.reference, { reason: 'not mine' })).status, 404);
  for (const amount of [0, -100, 10_001, 2.5]) {
    const r = await refund(t.accountId, p.id, { amount_minor: amount, reason: 'no' });
    assert.equal(r.status, 422, `${amount}: ${r.text}`);
    assert.match(r.text, /amount_minor/);
  }
  assert.equal((await read(t.accountId, p.id)).refunds.length, 0, 'nothing written');
  assert.equal((await api('GET', '/api/v3/payments?state=all', other.token)).body.meta.total, 0);

  const body = JSON.stringify({
    Result: { ResultType: 0, ResultCode: 0, ResultDesc: 'ok', ConversationID: 'AG_20261127_nobody', TransactionID: 'RVSNOBODY1' },
  });
  const post = (signature: string | null) =>
    fetch(`${API_URL}${PAYMENT_REFUND_RESULT_PATH}?ref=PAY-20261127-00000000`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(signature ? { 'x-callback-signature': signature } : {}) },
      body,
    });
  const now = Math.floor(Date.now() / 1000);
  assert.equal((await post(null)).status, 403, 'unsigned');
  assert.equal((await post(signCallback('not-the-secret', body, now))).status, 403, 'forged');
  assert.equal((await post(signCallback(TEST_SECRETS.PAYMENT_CALLBACK_SECRET, body, now))).status, 200, 'unknown: accepted, ignored');
});
