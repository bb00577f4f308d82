import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { Client, Connection } from '@temporalio/client';
import pino from 'pino';
import { many, one } from '../../entities/db.js';
import { admin, api, eventually, newTenant, sim, uniquePhone, type Tenant } from '../support/stack.js';
import { paymentsOf, paymentsOrm } from '../support/payments.js';
import { createEndpoint } from '../support/webhooks.js';
import { receiversOfThisFile } from '../support/receiver.js';
import { loadConfig } from '../../config.js';
import { createOrder, startOrderHoldAfterCommit } from '../../services/orders/index.js';
import { afterPaymentRequested, recordMove, requestOrderPayment, type PaymentSummary } from '../../services/payments/index.js';
import { orderPaid } from '../../services/orders/index.js';
import { setHoldTtlUnitSeconds } from '../../services/orders/ttl.js';
import { orderHoldQuery, type OrderHoldState } from '../../workflows/orders/order-hold.js';
import { paymentStateQuery } from '../../workflows/payments/payment.js';
import { orderHoldWorkflowId, paymentWorkflowId } from '../../temporal/ids.js';

// Paying an order's payment settles the order (issue 26, points 3 and 6): the payment's workflow
// pushes the prompt to the simulated M-Pesa, the simulator's signed callback comes in through the
// API, the move into paid confirms the pending order in the same transaction (its held stock
// committed, its TTL workflow told) and order.paid reaches the account's webhook endpoint once,
// however often the provider repeats itself. A failed or expired payment releases nothing: the
// order's hold keeps its own TTL. Orders are made through the chat door, or in this process with
// their payment in the same transaction (as the doors do) and a TTL unit of one second.

const orm = await paymentsOrm(6);
const connection = await Connection.connect({ address: process.env.TEMPORAL_ADDRESS ?? '127.0.0.1:7233' });
const temporal = new Client({ connection });
after(async () => {
  await orm.close();
  await connection.close();
});
const db = () => orm.em.fork();
const pay = paymentsOf(orm);
const receiver = receiversOfThisFile();
const log = pino({ level: 'silent' });
const deps = { temporal, config: { taskQueue: loadConfig().taskQueue }, orm, log };
setHoldTtlUnitSeconds(1);
let seq = 0;

/** A KES shop (stock counted by us) with TEA at KES 1,500 (150000 hundredths), 10 in stock; chat orders name it by `metaCatalogueId`. */
async function kesShop(t: Tenant, ttlHours = 48) {
  const metaCatalogueId = `7${t.accountId}${process.pid % 1000}${++seq}${Date.now() % 10000}`;
  const shop = await one<{ id: number }>(
    db(),
    `insert into catalogues (account_id, name, default_currency, meta_catalogue_id, channels, sku_prefix, stock_policy, reservation_ttl_hours, created_at, updated_at)
     values (?, ?, 'KES', ?, '["whatsapp"]'::jsonb, 'PAID', 'svc', ?, now(), now()) returning id`,
    [t.accountId, `Paid shop ${process.pid}-${seq}`, metaCatalogueId, ttlHours],
  );
  const product = await one<{ id: string }>(
    db(),
    `insert into products (account_id, catalogue_id, sku, name, price, currency, availability, inventory, reserved, created_at, updated_at)
     values (?, ?, 'TEA', 'Chai', 150000, 'KES', 'in stock', 10, 0, now(), now()) returning id`,
    [t.accountId, shop!.id],
  );
  return { id: shop!.id, metaCatalogueId, productId: Number(product!.id) };
}

const stock = async (productId: number) =>
  (await one<{ inventory: number; reserved: number }>(db(), 'select inventory, reserved from products where id = ?', [productId]))!;
const holds = (orderId: number) =>
  many<{ quantity: number; status: string }>(db(), 'select quantity, status from stock_holds where order_id = ? order by product_id', [
    orderId,
  ]);
const orderOf = async (t: Tenant, orderId: number) => (await api('GET', `/api/v3/catalogues/orders/${orderId}`, t.token)).body.data;
const paymentOf = async (t: Tenant, id: string) => (await api('GET', `/api/v3/payments/${id}`, t.token)).body.data;
const paidEvents = async (accountId: number) =>
  (await admin('GET', `/accounts/${accountId}/events?kind=order.paid&limit=100`)).body.data as Array<Record<string, any>>;
const fault = async (kind: string, to: string) =>
  assert.equal((await sim('POST', '/_sim/faults', { provider: 'payment', kind, to })).status, 201, kind);
const payerPhone = () => uniquePhone('2547');

async function settled(t: Tenant, paymentId: string, states: string[] = ['paid']) {
  return eventually(
    () => paymentOf(t, paymentId),
    (p) => states.includes(p?.state),
    60_000,
    250,
    `payment ${paymentId} in ${states.join(' or ')}`,
  );
}

/** An order of `quantity` TEA made in this process with its payment in the same transaction, as the doors make them; its hold workflow started. */
async function orderWithPayment(t: Tenant, shop: { id: number }, quantity: number, payer: string | null) {
  const made = await db().transactional(async (tx) => {
    const created = await createOrder(tx, {
      accountId: t.accountId,
      catalogueId: shop.id,
      platform: 'manual',
      customerHandle: payer,
      lines: [{ retailerId: 'TEA', quantity }],
    });
    const payment = await requestOrderPayment(tx, {
      accountId: t.accountId,
      orderId: created.orderId,
      totalMinor: created.total!.minor,
      currency: created.total!.currency,
      customer: payer,
      source: 'chat_order',
      createdBy: 'system:test',
    });
    return { created, payment: payment! };
  });
  await startOrderHoldAfterCommit(deps, made.created);
  return { orderId: made.created.orderId, payment: made.payment };
}
const startPayment = (t: Tenant, p: PaymentSummary) => afterPaymentRequested(deps, p, t.accountId);
const paymentWorkflow = (t: Tenant, id: string) => temporal.workflow.getHandle(paymentWorkflowId(t.accountId, id));

test('a chat order paid by M-Pesa: confirmed, its hold committed, order.paid delivered once though the callback comes twice and is replayed', async () => {
  const t = await newTenant();
  const phoneNumberId = `32${t.accountId}${Date.now() % 100000}`;
  const number = `+2553${String(t.accountId).padStart(4, '0')}${String(Date.now() % 10000).padStart(4, '0')}`;
  const added = await admin('POST', `/accounts/${t.accountId}/phone-numbers`, {
    number,
    capabilities: ['whatsapp'],
    provider_phone_number_id: phoneNumberId,
    business_account_id: `WABA${t.accountId}`,
  });
  assert.equal(added.status, 201, added.text);
  const shop = await kesShop(t);
  const hook = await receiver();
  await createEndpoint(t.accountId, hook.url, ['order.paid']);
  const customer = payerPhone();
  await fault('duplicate_callback', customer);

  const sent = await sim('POST', '/_sim/whatsapp/inbound', {
    from: customer.replace('+', ''),
    phone_number_id: phoneNumberId,
    type: 'order',
    order: {
      catalog_id: shop.metaCatalogueId,
      product_items: [{ product_retailer_id: 'TEA', quantity: 2, item_price: 1500, currency: 'KES' }],
    },
  });
  assert.equal(sent.status, 200, sent.text);
  const [row] = await eventually(
    () => many<{ id: string }>(db(), 'select id from orders where account_id = ?', [t.accountId]),
    (l) => l.length === 1,
    30_000,
    200,
    'the chat order',
  );
  const orderId = Number(row!.id);
  const listed = (await api('GET', `/api/v3/payments?subject_id=${orderId}`, t.token)).body.data;
  assert.equal(listed.length, 1);
  assert.deepEqual([listed[0].amount_minor, listed[0].currency, listed[0].payer], [300_000, 'KES', customer]);

  const paid = await settled(t, listed[0].id);
  // The order moved in the payment's transaction: by the time the payment reads paid, the order is confirmed.
  const order = await orderOf(t, orderId);
  assert.equal(order.status, 'confirmed');
  assert.deepEqual(await holds(orderId), [{ quantity: 2, status: 'committed' }]);
  assert.deepEqual(await stock(shop.productId), { inventory: 8, reserved: 0 }, 'committed under svc: taken off inventory');
  const lastMove = await one<{ kind: string; cause: Record<string, unknown> }>(
    db(),
    'select kind, cause from stock_movements where product_id = ? order by id desc limit 1',
    [shop.productId],
  );
  assert.deepEqual([lastMove!.kind, lastMove!.cause.actor, lastMove!.cause.status], ['commit', `payment:${paid.reference}`, 'confirmed']);
  // The TTL workflow learns of it as it does of an operator's change.
  const holdRun = (await temporal.workflow.getHandle(orderHoldWorkflowId(t.accountId, orderId)).result()) as OrderHoldState;
  assert.deepEqual([holdRun.phase, holdRun.movedTo], ['moved_on', 'confirmed']);

  // order.paid, delivered to the endpoint: the order as it stands and the payment.
  const [delivered] = await hook.waitFor((got) => (got.length ? got : null), 'order.paid');
  const body = delivered!.json;
  assert.equal(body.event, 'order.paid');
  assert.deepEqual([body.id, body.status, body.total_amount, body.total_currency], [orderId, 'confirmed', 300_000, 'KES']);
  assert.deepEqual(body.payment, {
    id: paid.id,
    reference: paid.reference,
    amount_minor: 300_000,
    amount: paid.amount,
    currency: 'KES',
    method: paid.method,
    paid_at: paid.settled_at,
  });

  // The simulator posted its callback twice; replay it once more byte for byte. The workflow drops
  // both as seen, the payment's timeline does not grow, and no second order.paid is made.
  const pushes = await sim('GET', `/_sim/payments?phone=${encodeURIComponent(customer)}`);
  assert.equal(pushes.body.count, 1, pushes.text);
  assert.ok((await sim('POST', `/_sim/payments/${pushes.body.payments[0].checkoutRequestId}/callback`)).status < 300);
  const wf = paymentWorkflow(t, paid.id);
  await eventually(
    () => wf.query(paymentStateQuery),
    (s) => s.duplicates >= 2,
    30_000,
    200,
    'the duplicate and the replay seen',
  );
  assert.equal((await paymentOf(t, paid.id)).timeline.length, paid.timeline.length);
  const events = await paidEvents(t.accountId);
  assert.equal(events.length, 1, 'one order.paid');
  assert.equal(delivered!.headers['webhook-id'], events[0]!.event_id);
  const deliveries = await admin('GET', `/accounts/${t.accountId}/webhook-deliveries?event_id=${events[0]!.event_id}`);
  assert.equal(deliveries.body.data.length, 1, deliveries.text);
  assert.equal(hook.got.length, 1, 'the endpoint got order.paid once');
  await wf.terminate('test done');
});

test('a failed or an expired payment releases nothing: the order stays pending with its hold, which lapses by its own TTL', async () => {
  const t = await newTenant();
  // 20 "hours" of one second each: long enough for the payments to settle first, short enough to watch the TTL.
  const shop = await kesShop(t, 20);
  const failing = payerPhone();
  const expiring = payerPhone();
  await fault('insufficient_funds', failing);
  await fault('expiry', expiring);
  const a = await orderWithPayment(t, shop, 1, failing);
  const b = await orderWithPayment(t, shop, 2, expiring);
  await startPayment(t, a.payment);
  await startPayment(t, b.payment);
  assert.equal((await settled(t, a.payment.id, ['failed', 'expired', 'paid'])).state, 'failed');
  assert.equal((await settled(t, b.payment.id, ['failed', 'expired', 'paid'])).state, 'expired');

  for (const o of [a, b]) {
    assert.equal((await orderOf(t, o.orderId)).status, 'pending');
    assert.equal((await holds(o.orderId))[0]!.status, 'held');
    const hold = await temporal.workflow.getHandle(orderHoldWorkflowId(t.accountId, o.orderId)).query(orderHoldQuery);
    assert.equal(hold.phase, 'waiting', 'the TTL still runs');
  }
  assert.deepEqual(await stock(shop.productId), { inventory: 10, reserved: 3 });

  // The TTL, not the payment, releases the holds.
  for (const o of [a, b]) {
    const done = (await temporal.workflow.getHandle(orderHoldWorkflowId(t.accountId, o.orderId)).result()) as OrderHoldState;
    assert.equal(done.phase, 'expired');
    assert.equal((await holds(o.orderId))[0]!.status, 'expired');
    assert.equal((await orderOf(t, o.orderId)).status, 'pending');
  }
  assert.deepEqual(await stock(shop.productId), { inventory: 10, reserved: 0 });
  assert.equal((await paidEvents(t.accountId)).length, 0, 'no order.paid');
  for (const o of [a, b]) await paymentWorkflow(t, o.payment.id).terminate('test done');
});

test('an order already confirmed keeps its status; a cancelled one is not revived: a notice says money arrived; order.paid for both', async () => {
  const t = await newTenant();
  const shop = await kesShop(t);
  const confirmed = await orderWithPayment(t, shop, 1, payerPhone());
  const cancelled = await orderWithPayment(t, shop, 2, payerPhone());
  const put = (id: number, status: string) => api('PUT', `/api/v3/catalogues/orders/${id}/status`, t.token, { status });
  assert.equal((await put(confirmed.orderId, 'shipped')).status, 200);
  assert.equal((await put(cancelled.orderId, 'cancelled')).status, 200);
  assert.deepEqual(await stock(shop.productId), { inventory: 9, reserved: 0 });

  // Their payments were requested before; the payers pay now.
  await startPayment(t, confirmed.payment);
  await startPayment(t, cancelled.payment);
  await settled(t, confirmed.payment.id);
  await settled(t, cancelled.payment.id);
  assert.equal((await orderOf(t, confirmed.orderId)).status, 'shipped');
  assert.equal((await orderOf(t, cancelled.orderId)).status, 'cancelled');
  assert.deepEqual(await holds(confirmed.orderId), [{ quantity: 1, status: 'committed' }]);
  assert.deepEqual(await holds(cancelled.orderId), [{ quantity: 2, status: 'released' }], 'the released hold is not taken again');
  assert.deepEqual(await stock(shop.productId), { inventory: 9, reserved: 0 }, 'no stock moved');

  const events = await paidEvents(t.accountId);
  assert.deepEqual(events.map((e) => [e.id, e.status, e.payment.id]).sort(), [
    [confirmed.orderId, 'shipped', confirmed.payment.id],
    [cancelled.orderId, 'cancelled', cancelled.payment.id],
  ]);
  const notices = (await api('GET', '/api/v3/notices?kind=order.paid', t.token)).body.data.notices as Array<Record<string, any>>;
  assert.equal(notices.length, 1, JSON.stringify(notices));
  assert.deepEqual(
    [notices[0]!.data.order_id, notices[0]!.data.status, notices[0]!.data.payment_id],
    [cancelled.orderId, 'cancelled', cancelled.payment.id],
  );
  assert.match(notices[0]!.message, new RegExp(`${cancelled.payment.reference}.*cancelled`));
  for (const o of [confirmed, cancelled]) await paymentWorkflow(t, o.payment.id).terminate('test done');
});

test('an order is paid when its payments cover its total: a part moves nothing, the rest confirms it, once', async () => {
  const t = await newTenant();
  const shop = await kesShop(t);
  // KES 4,500; the checkout's own payment stays in draft, the customer pays in two parts instead.
  const o = await orderWithPayment(t, shop, 3, null);
  const part = async (amountMinor: number) => {
    const p = await pay.request(t.accountId, {
      amountMinor,
      currency: 'KES',
      subjectType: 'order',
      subjectId: String(o.orderId),
      payer: payerPhone(),
    });
    await startPayment(t, p);
    await settled(t, p.id);
    return p;
  };
  const first = await part(100_000);
  assert.equal((await orderOf(t, o.orderId)).status, 'pending', 'KES 1,000 of 4,500');
  assert.equal((await holds(o.orderId))[0]!.status, 'held');
  assert.equal((await paidEvents(t.accountId)).length, 0);
  const rest = await part(350_000);
  assert.equal((await orderOf(t, o.orderId)).status, 'confirmed');
  assert.equal((await holds(o.orderId))[0]!.status, 'committed');
  const events = await paidEvents(t.accountId);
  assert.deepEqual(
    events.map((e) => e.payment.id),
    [rest.id],
  );
  // A third payment after it was paid in full changes nothing and tells nothing again.
  const extra = await part(10_000);
  assert.equal((await paidEvents(t.accountId)).length, 1);
  assert.equal((await orderOf(t, o.orderId)).status, 'confirmed');
  for (const p of [first, rest, extra]) await paymentWorkflow(t, p.id).terminate('test done');
});

test('tenants: a payment of another account naming this account’s order id settles nothing here; this account’s own does', async () => {
  const t = await newTenant();
  const other = await newTenant();
  const shop = await kesShop(t);
  const o = await orderWithPayment(t, shop, 1, payerPhone());
  const p = await pay.request(other.accountId, {
    amountMinor: 150_000,
    currency: 'KES',
    subjectType: 'order',
    subjectId: String(o.orderId),
    payer: payerPhone(),
  });
  await startPayment(other, p);
  await settled(other, p.id);
  assert.equal((await orderOf(t, o.orderId)).status, 'pending');
  assert.equal((await holds(o.orderId))[0]!.status, 'held');
  assert.equal((await paidEvents(t.accountId)).length, 0);
  assert.equal((await paidEvents(other.accountId)).length, 0);
  assert.equal((await api('GET', `/api/v3/catalogues/orders/${o.orderId}`, other.token)).status, 404, 'nor can it read it');

  // The order's own payment, in its own account, settles it: the same amount, the same subject id.
  await startPayment(t, o.payment);
  await settled(t, o.payment.id);
  assert.equal((await orderOf(t, o.orderId)).status, 'confirmed');
  assert.deepEqual(
    (await paidEvents(t.accountId)).map((e) => [e.account_id, e.id, e.payment.id]),
    [[t.accountId, o.orderId, o.payment.id]],
  );
  assert.equal((await paidEvents(other.accountId)).length, 0);
  for (const [who, id] of [
    [other, p.id],
    [t, o.payment.id],
  ] as const)
    await paymentWorkflow(who, id).terminate('test done');
});

test('the order step is part of the move into paid: a crash inside it undoes the move too; the retry does both, once', async () => {
  const t = await newTenant();
  const shop = await kesShop(t);
  const o = await orderWithPayment(t, shop, 1, null);
  await pay.move(t.accountId, o.payment.id, 'pending');
  const toPaid = { accountId: t.accountId, payment: o.payment.id, to: 'paid' as const, source: 'provider' };
  // The worker dies after the order moved and order.paid was written, before the commit.
  const dying = recordMove(db(), toPaid, {
    paidSubjects: {
      order: async (tx, paid) => {
        await orderPaid(tx, paid);
        throw new Error('worker died');
      },
    },
  });
  await assert.rejects(dying, /worker died/);
  const still = await paymentOf(t, o.payment.id);
  assert.deepEqual([still.state, still.ledger.length, still.timeline.length], ['pending', 0, 2], 'nothing of the move is left');
  assert.equal((await orderOf(t, o.orderId)).status, 'pending');
  assert.equal((await holds(o.orderId))[0]!.status, 'held');
  assert.equal((await paidEvents(t.accountId)).length, 0);

  // The activity's retry: the move and the order's settlement land together; a repeat is refused and tells nobody.
  const moved = await recordMove(db(), toPaid, { paidSubjects: { order: orderPaid } });
  assert.equal(moved.applied && moved.subject?.outcome, 'paid: confirmed');
  const again = await recordMove(db(), toPaid, { paidSubjects: { order: orderPaid } });
  assert.equal(again.applied, false);
  assert.equal((await orderOf(t, o.orderId)).status, 'confirmed');
  assert.equal((await holds(o.orderId))[0]!.status, 'committed');
  assert.equal((await paidEvents(t.accountId)).length, 1);
});
