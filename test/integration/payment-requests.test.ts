import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { many, one } from '../../entities/db.js';
import { admin, api, eventually, newTenant, sim, uniquePhone } from '../support/stack.js';
import { openShop, tea as teaBody, form } from '../support/shop.js';
import { paidAtProvider, paymentsOf, paymentsOrm } from '../support/payments.js';
import { cli } from '../support/admin-cli.js';

// Where payments come from (issue 26, points 2 and 4): the operator requests, refunds, cancels,
// lists and reads an account's payments over HTTP and the CLI; the shop page's checkout and a chat
// order each request one payment for the order's total. A payment refunded here is paid at the
// simulated provider first (paidAtProvider), since each refund's workflow reverses its receipt there;
// one paid through the services alone has no receipt, and its refund fails (the CLI test shows it).

const orm = await paymentsOrm(4);
after(() => orm.close());
const pay = paymentsOf(orm);
const db = () => orm.em.fork();

const P = (account: number | string) => `/accounts/${account}/payments`;
const request = (account: number | string, body: Record<string, unknown>) => admin('POST', P(account), body);

test('the operator requests a payment for any subject; bad input is 422 naming the field and writes nothing', async () => {
  const t = await newTenant();
  const made = await request(t.accountId, {
    subject_type: 'invoice',
    subject_id: 'INV-7',
    amount_minor: 1_200_000,
    currency: 'TZS',
    payer: '+255 712 345 678',
    method: 'mobile_money',
    expires_at: new Date(Date.now() + 3_600_000).toISOString(),
  });
  assert.equal(made.status, 201, made.text);
  const p = made.body.data;
  assert.equal(p.state, 'draft');
  assert.equal(p.amount, 'TZS 12,000');
  assert.equal(p.payer, '+255712345678', 'the payer in E.164');
  assert.deepEqual([p.subject_type, p.subject_id, p.method], ['invoice', 'INV-7', 'mobile_money']);

  // The account's own read shows it, created by the operator, its first timeline row the operator's.
  const read = await api('GET', `/api/v3/payments/${p.reference.toLowerCase()}`, t.token);
  assert.equal(read.status, 200, read.text);
  assert.equal(read.body.data.created_by, 'operator');
  // Its workflow, started once the request committed, may already have pushed it (draft → pending).
  assert.deepEqual(
    read.body.data.timeline.slice(0, 1).map((e: any) => [e.old_state, e.new_state, e.source]),
    [[null, 'draft', 'operator']],
  );

  const bad: Array<[Record<string, unknown>, string]> = [
    [{ amount_minor: 0, currency: 'TZS' }, 'amount_minor'],
    [{ amount_minor: -5, currency: 'TZS' }, 'amount_minor'],
    [{ amount_minor: 10.5, currency: 'TZS' }, 'amount_minor'],
    [{ amount_minor: '100', currency: 'TZS' }, 'amount_minor'],
    [{ amount_minor: 100, currency: 'XYZ' }, 'currency'],
    [{ amount_minor: 100, currency: 'tzs' }, 'currency'],
    [{ amount_minor: 100, currency: 'TZS', payer: '0712345678' }, 'payer'],
    [{ amount_minor: 100, currency: 'TZS', payer: 'not a phone' }, 'payer'],
    [{ amount_minor: 100, currency: 'TZS', expires_at: '2001-01-01T00:00:00Z' }, 'expires_at'],
    [{ currency: 'TZS' }, 'amount_minor'],
  ];
  for (const [body, field] of bad) {
    const r = await request(t.accountId, body);
    assert.equal(r.status, 422, `${JSON.stringify(body)}: ${r.text}`);
    assert.match(r.text, new RegExp(field), `${JSON.stringify(body)} names ${field}: ${r.text}`);
  }
  const all = await api('GET', '/api/v3/payments', t.token);
  assert.equal(all.body.meta.total, 1, 'no refused request wrote a payment');

  // Another account's operator path does not see it; an unknown account is 404.
  const other = await newTenant();
  assert.equal((await admin('GET', `${P(other.accountId)}/${p.id}`)).status, 404);
  assert.equal((await admin('POST', `${P(other.accountId)}/${p.id}/cancel`, {})).status, 404);
  assert.equal((await admin('POST', `${P(other.accountId)}/${p.id}/refunds`, { reason: 'x' })).status, 404);
  assert.equal((await request(999_999_999, { amount_minor: 100, currency: 'TZS' })).status, 404);
});

test('refunds: partial, then the rest; over-refunds, zero and fractions refused; a refund is not refunded; cancel', async () => {
  const t = await newTenant();
  // Not paid yet: nothing to refund.
  const unpaid = (await request(t.accountId, { subject_type: 'order', subject_id: 'o-0', amount_minor: 10_000, currency: 'KES' })).body
    .data;
  const early = await admin('POST', `${P(t.accountId)}/${unpaid.id}/refunds`, { amount_minor: 100, reason: 'early' });
  assert.equal(early.status, 409, early.text);
  const made = await paidAtProvider(t.accountId, { amountMinor: 10_000, subjectId: 'o-1' });

  const refund = (body: Record<string, unknown>, id = made.id) => admin('POST', `${P(t.accountId)}/${id}/refunds`, body);
  for (const amount of [0, -1, 2.5, 10_001]) {
    const r = await refund({ amount_minor: amount, reason: 'no' });
    assert.equal(r.status, 422, `${amount}: ${r.text}`);
    assert.match(r.text, /amount_minor/);
  }
  assert.equal((await refund({ amount_minor: 100 })).status, 422, 'a reason is required');

  const part = await refund({ amount_minor: 2_500, reason: 'one item was missing' });
  assert.equal(part.status, 201, part.text);
  assert.equal(part.body.data.is_refund, true);
  assert.equal(part.body.data.refund_of, made.id);
  assert.equal(part.body.data.reason, 'one item was missing');
  assert.equal(part.body.data.state, 'draft', 'its workflow sends it to the provider after the answer');
  const over = await refund({ amount_minor: 7_501, reason: 'too much' });
  assert.equal(over.status, 422, over.text);
  assert.match(over.body.message + JSON.stringify(over.body), /7500/);
  assert.equal((await refund({ amount_minor: 10, reason: 'x' }, part.body.data.id)).status, 409, 'a refund is not refunded');

  // The rest, by leaving the amount out.
  const rest = await refund({ reason: 'order cancelled' });
  assert.equal(rest.status, 201, rest.text);
  assert.equal(rest.body.data.amount_minor, 7_500);
  const parent = (await admin('GET', `${P(t.accountId)}/${made.id}`)).body.data;
  assert.deepEqual([parent.refunded_minor, parent.refundable_minor], [10_000, 0]);
  assert.deepEqual(
    parent.refunds.map((r: any) => r.amount_minor),
    [7_500, 2_500],
  );
  assert.equal((await refund({ reason: 'again' })).status, 409, 'nothing left to refund');
  assert.equal((await refund({ amount_minor: 1, reason: 'again' })).status, 422);
  // Both refunds reversed at the provider and settled: the parent is refunded.
  await eventually(
    () => admin('GET', `${P(t.accountId)}/${made.id}`),
    (r) => r.body?.data?.state === 'refunded',
    30_000,
    200,
    'the parent is refunded',
  );

  // Cancel: an open payment is cancelled; a settled one is 409 and the refusal is on its timeline.
  const open = (await request(t.accountId, { amount_minor: 500, currency: 'KES' })).body.data;
  const cancelled = await admin('POST', `${P(t.accountId)}/${open.id}/cancel`, { reason: 'customer changed their mind' });
  assert.equal(cancelled.status, 200, cancelled.text);
  assert.equal(cancelled.body.data.state, 'cancelled');
  const again = await admin('POST', `${P(t.accountId)}/${open.reference}/cancel`, {});
  assert.equal(again.status, 409, again.text);
  const timeline = (await admin('GET', `${P(t.accountId)}/${open.id}`)).body.data.timeline;
  assert.deepEqual(
    timeline.map((e: any) => [e.old_state, e.new_state, e.source]),
    [
      [null, 'draft', 'operator'],
      ['draft', 'cancelled', 'operator'],
      ['cancelled', 'cancelled', 'operator'],
    ],
  );
  assert.match(timeline[1].message, /changed their mind/);
  assert.equal((await admin('POST', `${P(t.accountId)}/${made.id}/cancel`, {})).status, 409);

  // Every move is in the account's business events, declared live=false (clients reconcile by polling
  // the payments list); a refund tells through its parent's payment.refunded, a refused move not at all.
  const events = (await api('GET', '/api/v3/automations/events?limit=100', t.token)).body.data.events as any[];
  const ofPayment = (id: string) =>
    events
      .filter((e) => e.data.payment_id === id)
      .reverse()
      .map((e) => [e.type, e.live, e.data.state, e.data.refunded_minor]);
  // refunded_minor counts the refunds requested and not failed: the second may or may not have been
  // requested when the first settled.
  const told = ofPayment(made.id);
  assert.deepEqual(
    told.map(([type, live, state]) => [type, live, state]),
    [
      ['payment.pending', false, 'pending'],
      ['payment.paid', false, 'paid'],
      ['payment.refunded', false, 'partly_refunded'],
      ['payment.refunded', false, 'refunded'],
    ],
  );
  assert.deepEqual(
    told.map((e) => e[3]),
    [0, 0, told[2]![3], 10_000],
  );
  assert.ok([2_500, 10_000].includes(told[2]![3]), `refunded_minor when the first settled: ${told[2]![3]}`);
  assert.deepEqual(ofPayment(open.id), [['payment.cancelled', false, 'cancelled', 0]]);
  assert.equal(
    events.filter((e) => [part.body.data.id, rest.body.data.id].includes(e.data.payment_id)).length,
    0,
    'refunds tell through the parent',
  );
});

test('the operator cancels a refund only in draft: one sent to the provider is 409 (Stripe’s rule), recorded on its timeline', async () => {
  const t = await newTenant();
  const p = await pay.inState(t.accountId, 'paid', { amountMinor: 10_000, currency: 'KES' });
  // Sent: its workflow moved it to pending before asking the provider (the test stands in for it).
  const sent = await pay.refund(t.accountId, p.id, 4_000, 'sent already');
  assert.equal(sent.state, 'pending');
  assert.deepEqual(sent.next_states, ['authorised', 'paid', 'failed', 'expired'], 'no cancel offered once sent');
  const refused = await admin('POST', `${P(t.accountId)}/${sent.id}/cancel`, { reason: 'changed my mind' });
  assert.equal(refused.status, 409, refused.text);
  assert.match(refused.body.message, /a refund can be cancelled only in draft, before it is sent to the provider; PAY-\S+ is pending/);
  assert.match(refused.body.message, /its reversal may already be made at the provider/);
  const after = (await admin('GET', `${P(t.accountId)}/${sent.id}`)).body.data;
  assert.equal(after.state, 'pending', 'not moved');
  const last = after.timeline.at(-1);
  assert.deepEqual([last.old_state, last.new_state, last.source], ['pending', 'pending', 'operator']);
  assert.match(last.message, /cancelled only in draft.*\(changed my mind\)$/);
  assert.deepEqual(
    [(await admin('GET', `${P(t.accountId)}/${p.id}`)).body.data.refundable_minor],
    [6_000],
    'its amount still held for the reversal',
  );
  // A failed refund gave its amount back already: not cancelled either.
  await pay.move(t.accountId, sent.id, 'failed', 'provider', 'reversal refused');
  assert.equal((await admin('POST', `${P(t.accountId)}/${sent.id}/cancel`, {})).status, 409);

  // In draft it was surely never sent: cancelled, and its amount is refundable again.
  const draft = await pay.requestRefund(t.accountId, p.id, 3_000, 'not sent yet');
  assert.deepEqual(draft.next_states, ['pending', 'cancelled', 'expired']);
  const cancelled = await admin('POST', `${P(t.accountId)}/${draft.reference}/cancel`, { reason: 'kept the goods' });
  assert.equal(cancelled.status, 200, cancelled.text);
  assert.deepEqual([cancelled.body.data.state, cancelled.body.data.next_states], ['cancelled', []]);
  assert.equal((await admin('GET', `${P(t.accountId)}/${p.id}`)).body.data.refundable_minor, 10_000);
});

test('concurrent operator refunds never give back more than was paid', async () => {
  const t = await newTenant();
  // Paid at the provider, so every refund taken is reversed there and none gives its amount back mid-race.
  const made = await paidAtProvider(t.accountId, { amountMinor: 10_000, currency: 'TZS' });
  const answers = await Promise.all(
    Array.from({ length: 20 }, () => admin('POST', `${P(t.accountId)}/${made.id}/refunds`, { amount_minor: 700, reason: 'race' })),
  );
  const statuses = answers.map((r) => r.status).sort();
  assert.equal(statuses.filter((s) => s === 201).length, 14, statuses.join(','));
  assert.equal(statuses.filter((s) => s === 422).length, 6, statuses.join(','));
  const parent = (await admin('GET', `${P(t.accountId)}/${made.id}`)).body.data;
  assert.deepEqual([parent.refunded_minor, parent.refundable_minor, parent.refunds.length], [9_800, 200, 14]);
});

test('the CLI: payments:request, :list, :show, :refund, :cancel, answers as the HTTP operations give them', async () => {
  const t = await newTenant();
  const account = String(t.accountId);
  const made = await cli(
    'payments:request',
    '--account',
    account,
    '--subject-type',
    'order',
    '--subject-id',
    'cli-1',
    '--amount-minor',
    '5000',
    '--currency',
    'TZS',
  );
  assert.equal(made.code, 0, made.stderr);
  const p = made.json.data;
  assert.equal(p.amount_minor, 5000);
  const listed = await cli('payments:list', '--account', t.accountUid, '--subject-id', 'cli-1');
  assert.equal(listed.code, 0, listed.stderr);
  assert.deepEqual(
    listed.json.data.map((x: any) => x.id),
    [p.id],
  );
  assert.deepEqual(listed.json.meta, { current_page: 1, per_page: 25, total: 1, last_page: 1 });
  const shown = await cli('payments:show', '--account', account, '--payment', p.reference);
  assert.equal(shown.code, 0, shown.stderr);
  assert.deepEqual(shown.json.data, (await api('GET', `/api/v3/payments/${p.id}`, t.token)).body.data);

  const refused = await cli('payments:refund', '--account', account, '--payment', p.id, '--amount-minor', '100', '--reason', 'x');
  assert.equal(refused.code, 1, 'a draft payment is not refunded');
  await pay.move(t.accountId, p.id, 'pending');
  await pay.move(t.accountId, p.id, 'paid');
  const refunded = await cli('payments:refund', '--account', account, '--payment', p.id, '--amount-minor', '1500', '--reason', 'broken');
  assert.equal(refunded.code, 0, refunded.stderr);
  assert.equal(refunded.json.data.amount_minor, 1500);
  // Paid through the services alone, the payment has no provider receipt: the reversal cannot be
  // asked for, the refund fails saying so and its amount is refundable again.
  const failed = await eventually(
    () => admin('GET', `${P(t.accountId)}/${refunded.json.data.id}`),
    (r) => r.body?.data?.state === 'failed',
    30_000,
    200,
    'the refund fails',
  );
  assert.match(failed.body.data.last_error, /^receipt_required: /);
  const over = await cli('payments:refund', '--account', account, '--payment', p.id, '--amount-minor', '5001', '--reason', 'more');
  assert.equal(over.code, 1);
  assert.match(JSON.stringify(over.json), /amount_minor/);

  const other = await cli('payments:request', '--account', account, '--amount-minor', '700', '--currency', 'TZS');
  const cancelled = await cli('payments:cancel', '--account', account, '--payment', other.json.data.id);
  assert.equal(cancelled.code, 0, cancelled.stderr);
  assert.equal(cancelled.json.data.state, 'cancelled');
  const foreign = await cli('payments:show', '--account', String((await newTenant()).accountId), '--payment', p.id);
  assert.equal(foreign.code, 1);
  assert.match(JSON.stringify(foreign.json), /not found/i);
});

test('a shop-page checkout requests one payment for the order’s total, no payer known', async () => {
  const t = await newTenant();
  const { product } = await openShop(t, 'Pay Café');
  await product(teaBody);
  const link = await api('POST', '/api/v3/shop-links', t.token, { items: [{ sku: 'TEA', quantity: 3 }] });
  assert.equal(link.status, 201, link.text);
  const submitted = await form(link.body.data.link, '/submit', '');
  assert.equal(submitted.status, 303, submitted.text);
  const orderId = String((await api('GET', `/api/v3/carts/${link.body.data.cart.ref}`, t.token)).body.data.order_id);
  const order = (await api('GET', `/api/v3/catalogues/orders/${orderId}`, t.token)).body.data;
  const payments = await api('GET', `/api/v3/payments?subject_id=${orderId}`, t.token);
  assert.equal(payments.status, 200, payments.text);
  assert.equal(payments.body.data.length, 1, payments.text);
  const p = payments.body.data[0];
  assert.deepEqual(
    [p.subject_type, p.subject_id, p.state, p.amount_minor, p.currency, p.payer],
    ['order', orderId, 'draft', Number(order.total_amount), order.total_currency ?? order.currency, null],
  );
  assert.equal((await api('GET', '/api/v3/payments', t.token)).body.meta.total, 1, 'exactly one payment');
  const detail = (await api('GET', `/api/v3/payments/${p.id}`, t.token)).body.data;
  assert.deepEqual([detail.timeline[0].source, detail.created_by], ['checkout', 'system:shop-page']);
});

test('a chat order requests one payment for the order’s total from the customer’s number; a redelivery makes none', async () => {
  const t = await newTenant();
  const phoneNumberId = `31${t.accountId}${Date.now() % 100000}`;
  const number = `+2553${String(t.accountId).padStart(4, '0')}${String(Date.now() % 10000).padStart(4, '0')}`;
  const added = await admin('POST', `/accounts/${t.accountId}/phone-numbers`, {
    number,
    capabilities: ['whatsapp'],
    provider_phone_number_id: phoneNumberId,
    business_account_id: `WABA${t.accountId}`,
  });
  assert.equal(added.status, 201, added.text);
  const catalogId = `9${t.accountId}${process.pid % 1000}${Date.now() % 10000}`;
  const shop = await one<{ id: number }>(
    db(),
    `insert into catalogues (account_id, name, default_currency, meta_catalogue_id, channels, sku_prefix, stock_policy, created_at, updated_at)
     values (?, ?, 'USD', ?, '["whatsapp"]'::jsonb, 'PAY', 'svc', now(), now()) returning id`,
    [t.accountId, `Pay chat shop ${process.pid}`, catalogId],
  );
  await many(
    db(),
    `insert into products (account_id, catalogue_id, sku, name, price, currency, availability, inventory, created_at, updated_at)
     values (?, ?, 'TEA-1', 'Green tea', 1250, 'USD', 'in stock', 10, now(), now()) returning id`,
    [t.accountId, shop!.id],
  );
  const customer = uniquePhone('2554');
  const message = (extra: Record<string, unknown> = {}) =>
    sim('POST', '/_sim/whatsapp/inbound', {
      from: customer.replace('+', ''),
      phone_number_id: phoneNumberId,
      type: 'order',
      order: { catalog_id: catalogId, product_items: [{ product_retailer_id: 'TEA-1', quantity: 2, item_price: 19.99, currency: 'USD' }] },
      ...extra,
    });
  const sent = await message();
  assert.equal(sent.status, 200, sent.text);
  const [order] = await eventually(
    () => many<{ id: string; total_amount: string }>(db(), 'select id, total_amount from orders where account_id = ?', [t.accountId]),
    (l) => l.length === 1,
  );
  const payments = await api('GET', `/api/v3/payments?subject_id=${order!.id}`, t.token);
  assert.equal(payments.body.data.length, 1, payments.text);
  const p = payments.body.data[0];
  // Requested as a draft; its workflow (started after the commit) may have moved it on already.
  assert.deepEqual([p.subject_type, p.amount_minor, p.amount, p.currency, p.payer], ['order', 3998, 'USD 39.98', 'USD', customer]);
  const first = (await api('GET', `/api/v3/payments/${p.id}`, t.token)).body.data.timeline[0];
  assert.deepEqual([first.old_state, first.new_state], [null, 'draft']);
  assert.equal(Number(order!.total_amount), p.amount_minor, 'the order’s hundredths are the payment’s minor units');

  const again = await message({ id: sent.body.wamid });
  assert.equal(again.status, 200, again.text);
  assert.equal((await api('GET', '/api/v3/payments', t.token)).body.meta.total, 1, 'a redelivered order makes no second payment');
});
