import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { Client, Connection } from '@temporalio/client';
import { api, eventually, newTenant, sim, API_URL } from '../support/stack.js';
import { paymentsOf, paymentsOrm } from '../support/payments.js';
import { loadConfig } from '../../config.js';
import { startPaymentAfterCommit } from '../../services/payments/index.js';
import { paymentStateQuery } from '../../workflows/payments/payment.js';
import { paymentWorkflowId } from '../../temporal/ids.js';
import { signCallback } from '../../providers/mpesa-daraja/signature.js';
import { PAYMENT_RESULT_PATH } from '../../providers/mpesa-daraja/webhook.js';
import { TEST_SECRETS } from '../../scripts/secrets.js';
import { createLogger } from '../../logger.js';

// A payment end to end (issue 26 points 2, 3): requested through the service, its workflow pushes
// the prompt to the simulated M-Pesa, the simulator posts the signed result to the API's callback,
// the workflow moves it to paid, and the detail shows it with a balanced ledger. A forged or unsigned
// callback is refused (403); a signed one for no payment we know is accepted and ignored.
const orm = await paymentsOrm(4);
const connection = await Connection.connect({ address: process.env.TEMPORAL_ADDRESS ?? '127.0.0.1:7233' });
const temporal = new Client({ connection });
after(async () => {
  await orm.close();
  await connection.close();
});
const pay = paymentsOf(orm);
const deps = { temporal, config: { taskQueue: loadConfig().taskQueue }, log: createLogger('test', 'warn') };
let phoneSeq = 0;
const payer = () => `+2547${String(20_000_000 + process.pid * 13 + ++phoneSeq * 7919).slice(-8)}`;

const resultBody = (checkoutRequestId: string) =>
  JSON.stringify({
    Body: {
      stkCallback: {
        MerchantRequestID: '29115-34620561-1',
        CheckoutRequestID: checkoutRequestId,
        ResultCode: 0,
        ResultDesc: 'The service request is processed successfully.',
        CallbackMetadata: {
          Item: [
            { Name: 'Amount', Value: 1500 },
            { Name: 'MpesaReceiptNumber', Value: 'NLJ7RT61SV' },
            { Name: 'TransactionDate', Value: 20261127103000 },
            { Name: 'PhoneNumber', Value: 254708374149 },
          ],
        },
      },
    },
  });

const postCallback = (body: string, signature: string | null, ref = '') =>
  fetch(`${API_URL}${PAYMENT_RESULT_PATH}${ref ? `?ref=${encodeURIComponent(ref)}` : ''}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(signature ? { 'x-callback-signature': signature } : {}) },
    body,
  });

test('requested, pushed, the signed callback arrives through the API: paid, with a balanced ledger', { timeout: 120_000 }, async () => {
  const t = await newTenant();
  const phone = payer();
  const p = await pay.request(t.accountId, {
    amountMinor: 150_000,
    currency: 'KES',
    payer: phone,
    subjectId: 'order-1',
    subjectType: 'order',
    expiresAt: new Date(Date.now() + 10 * 60_000),
  });
  assert.equal(p.state, 'draft');
  assert.equal(await startPaymentAfterCommit(deps, p, t.accountId), true);
  assert.equal(await startPaymentAfterCommit(deps, p, t.accountId), false, 'a second start is refused by the id policy');

  const detail = await eventually(
    () => api('GET', `/api/v3/payments/${p.reference.toLowerCase()}`, t.token),
    (r) => r.body?.data?.state === 'paid',
    60_000,
    250,
    'the payment reads paid',
  );
  const d = detail.body.data;
  assert.equal(d.id, p.id);
  assert.equal(d.attempts, 1);
  assert.ok(d.settled_at);
  assert.deepEqual(
    d.timeline.map((e: { old_state: string | null; new_state: string; source: string }) => `${e.old_state}→${e.new_state}@${e.source}`),
    ['null→draft@test', 'draft→pending@provider', 'pending→paid@provider'],
  );
  const debit = d.ledger
    .filter((l: { direction: string }) => l.direction === 'debit')
    .reduce((n: number, l: { amount_minor: number }) => n + l.amount_minor, 0);
  const credit = d.ledger
    .filter((l: { direction: string }) => l.direction === 'credit')
    .reduce((n: number, l: { amount_minor: number }) => n + l.amount_minor, 0);
  assert.equal(d.ledger.length, 2);
  assert.equal(debit, 150_000);
  assert.equal(credit, debit, 'debits equal credits');

  // The simulator's record of the push, and its callback replayed byte for byte: the workflow drops it.
  const pushes = await sim('GET', `/_sim/payments?phone=${encodeURIComponent(phone)}`);
  assert.equal(pushes.status, 200, pushes.text);
  assert.equal(pushes.body.count, 1, 'one prompt on the payer’s phone');
  const checkout = pushes.body.payments[0].checkoutRequestId;
  const replay = await sim('POST', `/_sim/payments/${checkout}/callback`);
  assert.ok(replay.status < 300, replay.text);
  const handle = temporal.workflow.getHandle(paymentWorkflowId(t.accountId, p.id));
  const state = await eventually(
    () => handle.query(paymentStateQuery),
    (s) => s.duplicates >= 1,
    20_000,
    200,
    'the replay is seen as a duplicate',
  );
  assert.equal(state.state, 'paid');
  const again = await api('GET', `/api/v3/payments/${p.id}`, t.token);
  assert.equal(again.body.data.timeline.length, 3, 'the replayed callback changed nothing');
  assert.equal(again.body.data.ledger.length, 2);
  await handle.terminate('test done');
});

test('forged, tampered and unsigned callbacks are 403; a signed one for no payment we know is accepted and ignored', async () => {
  const body = resultBody('ws_CO_nobody');
  const now = Math.floor(Date.now() / 1000);
  const secret = TEST_SECRETS.PAYMENT_CALLBACK_SECRET;
  assert.equal((await postCallback(body, null)).status, 403, 'unsigned');
  assert.equal((await postCallback(body, signCallback('not-the-secret', body, now))).status, 403, 'forged');
  assert.equal((await postCallback(body.replace('1500', '1'), signCallback(secret, body, now))).status, 403, 'tampered');
  assert.equal((await postCallback(body, signCallback(secret, body, now - 3600))).status, 403, 'stale');
  const unknown = await postCallback(body, signCallback(secret, body, now), 'PAY-20261127-00000000');
  assert.equal(unknown.status, 200, await unknown.text());
  const garbage = '{"Body":';
  const bad = await postCallback(garbage, signCallback(secret, garbage, now));
  assert.ok(bad.status >= 400 && bad.status < 500, `malformed: ${bad.status}`);
});
