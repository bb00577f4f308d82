import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { openOrm } from '../../entities/orm.js';
import { many, one } from '../../entities/db.js';
import { admin, api, eventually, newTenant, sim, uniquePhone } from '../support/stack.js';

// Orders arriving as the chat provider's `order` message: the simulator's inbound control posts the
// signed Cloud API webhook, the service stores the message and makes the order of the shop whose
// provider catalogue it names. Shops and products are written with SQL (their REST operations are
// tested in their own files).
const orm = await openOrm(process.env.DATABASE_URL!, 2);
after(() => orm.close());
const db = () => orm.em.fork();
let seq = 0;

async function waTenant() {
  const t = await newTenant();
  const phoneNumberId = `30${t.accountId}${Date.now() % 100000}`;
  const number = `+2553${String(t.accountId).padStart(4, '0')}${String(Date.now() % 10000).padStart(4, '0')}`;
  await admin('POST', `/accounts/${t.accountId}/phone-numbers`, {
    number,
    capabilities: ['whatsapp'],
    provider_phone_number_id: phoneNumberId,
    business_account_id: `WABA${t.accountId}`,
  });
  return { ...t, phoneNumberId };
}

/** A shop with a provider catalogue id and two products: TEA-1 counted (10 in stock), CUP-1 not counted. */
async function shopOf(accountId: number) {
  const metaCatalogueId = `8${accountId}${process.pid % 1000}${++seq}${Date.now() % 10000}`;
  const shop = await one<{ id: number }>(
    db(),
    `insert into catalogues (account_id, name, default_currency, meta_catalogue_id, channels, sku_prefix, stock_policy, created_at, updated_at)
     values (?, ?, 'USD', ?, '["whatsapp"]'::jsonb, 'TST', 'svc', now(), now()) returning id`,
    [accountId, `Chat shop ${process.pid}-${seq}`, metaCatalogueId],
  );
  await many(
    db(),
    `insert into products (account_id, catalogue_id, sku, name, price, currency, availability, inventory, created_at, updated_at)
     values (?, ?, 'TEA-1', 'Green tea', 1250, 'USD', 'in stock', 10, now(), now()),
            (?, ?, 'CUP-1', 'Cup', 700, 'USD', 'in stock', null, now(), now()) returning id`,
    [accountId, shop!.id, accountId, shop!.id],
  );
  return { id: shop!.id, metaCatalogueId };
}

const orderMessage = (
  t: { phoneNumberId: string },
  from: string,
  catalogId: string,
  items: Array<[string, number, number]>,
  extra: Record<string, unknown> = {},
) =>
  sim('POST', '/_sim/whatsapp/inbound', {
    from: from.replace('+', ''),
    phone_number_id: t.phoneNumberId,
    type: 'order',
    order: {
      catalog_id: catalogId,
      text: 'please gift wrap',
      product_items: items.map(([id, quantity, price]) => ({ product_retailer_id: id, quantity, item_price: price, currency: 'USD' })),
    },
    ...extra,
  });

interface OrderRow {
  id: string;
  account_id: number;
  catalogue_id: number;
  status: string;
  platform: string;
  customer_handle: string;
  provider_message_id: string;
  product_items: Array<{ product_retailer_id: string; quantity: number; item_price: number; currency: string; stock: string }>;
  total_amount: string;
  total_currency: string;
  needs_attention: boolean;
  note: string | null;
}
const ordersOf = (accountId: number) => many<OrderRow>(db(), 'select * from orders where account_id = ? order by id', [accountId]);
const inboundOf = (accountId: number) =>
  many<{ uid: string; gateway_message_id: string; body: string; metadata: Record<string, any>; sender: string }>(
    db(),
    `select uid, gateway_message_id, body, metadata, sender from messages where account_id = ? and direction = 'inbound' order by id`,
    [accountId],
  );

test('an order message becomes an order: lines and total frozen in hundredths, unknown codes unresolved, order.received', async () => {
  const t = await waTenant();
  const shop = await shopOf(t.accountId);
  const customer = uniquePhone('2554');
  const sent = await orderMessage(t, customer, shop.metaCatalogueId, [
    ['TEA-1', 2, 19.99],
    ['CUP-1', 1, 5],
    ['NOPE-9', 1, 3],
  ]);
  assert.equal(sent.status, 200, sent.text);
  assert.equal(sent.body.delivered, true, JSON.stringify(sent.body));
  const wamid = sent.body.wamid as string;

  const [order] = await eventually(
    () => ordersOf(t.accountId),
    (l) => l.length === 1,
  );
  assert.ok(order, 'the order is recorded');
  assert.equal(order.platform, 'whatsapp');
  assert.equal(order.status, 'pending');
  assert.equal(order.catalogue_id, shop.id);
  assert.equal(order.customer_handle, customer);
  assert.equal(order.provider_message_id, wamid);
  assert.equal(order.note, 'please gift wrap');
  assert.deepEqual(
    order.product_items.map((l) => [l.product_retailer_id, l.quantity, l.item_price, l.stock]),
    [
      ['TEA-1', 2, 1999, 'held'],
      ['CUP-1', 1, 500, 'untracked'],
      ['NOPE-9', 1, 300, 'unresolved'],
    ],
    'the customer’s prices (major units) are frozen as hundredths; the unknown code is unresolved',
  );
  assert.equal(Number(order.total_amount), 2 * 1999 + 500 + 300);
  assert.equal(order.total_currency, 'USD');
  assert.equal(order.needs_attention, true);

  // The message is stored like any inbound (the window opens) and names its order.
  const [msg] = await inboundOf(t.accountId);
  assert.equal(msg.gateway_message_id, wamid);
  assert.equal(msg.body, 'please gift wrap');
  assert.equal(msg.sender, customer);
  assert.equal(msg.metadata.type, 'order');
  assert.equal(Number(msg.metadata.order_id), Number(order.id));
  const window = await one(db(), 'select 1 from conversation_windows where account_id = ? and customer = ?', [t.accountId, customer]);
  assert.ok(window, 'the customer service window is open');

  const events = await many<{ kind: string; payload: Record<string, any> }>(
    db(),
    `select kind, payload from events where account_id = ? and kind in ('order.received', 'message.received') order by occurred_at`,
    [t.accountId],
  );
  const received = events.find((e) => e.kind === 'order.received');
  assert.ok(received, 'order.received is emitted');
  assert.ok(events.some((e) => e.kind === 'message.received'));
  assert.equal(Number(received!.payload.id), Number(order.id));

  // The order reads through the API with both names of the customer identifier.
  const read = await api('GET', `/api/v3/catalogues/orders/${order.id}`, t.token);
  assert.equal(read.status, 200, read.text);
  assert.equal(read.body.data.customer_handle, customer);
  assert.equal(read.body.data.customer_wa_id, customer);
  assert.equal(read.body.data.total_amount, 2 * 1999 + 500 + 300);
  // Stock: two TEA-1 units held for the order.
  const tea = await one<{ reserved: number }>(db(), `select reserved from products where catalogue_id = ? and sku = 'TEA-1'`, [shop.id]);
  assert.equal(tea!.reserved, 2);
});

test('a redelivered order webhook stores nothing new and makes no second order', async () => {
  const t = await waTenant();
  const shop = await shopOf(t.accountId);
  const customer = uniquePhone('2554');
  const first = await orderMessage(t, customer, shop.metaCatalogueId, [['TEA-1', 1, 12.5]]);
  assert.equal(first.body.delivered, true, JSON.stringify(first.body));
  await eventually(
    () => ordersOf(t.accountId),
    (l) => l.length === 1,
  );
  const again = await orderMessage(t, customer, shop.metaCatalogueId, [['TEA-1', 1, 12.5]], { id: first.body.wamid });
  assert.equal(again.body.delivered, true, 'the redelivery is answered 200');
  assert.equal(again.body.wamid, first.body.wamid);
  const orders = await ordersOf(t.accountId);
  assert.equal(orders.length, 1);
  assert.equal((await inboundOf(t.accountId)).length, 1);
  const tea = await one<{ reserved: number }>(db(), `select reserved from products where catalogue_id = ? and sku = 'TEA-1'`, [shop.id]);
  assert.equal(tea!.reserved, 1, 'held once');
  const events = await many(db(), `select 1 from events where account_id = ? and kind = 'order.received'`, [t.accountId]);
  assert.equal(events.length, 1);
});

test('tenant isolation: an order naming another tenant’s catalogue makes no order for either; the message is still stored', async () => {
  const a = await waTenant();
  const b = await waTenant();
  await shopOf(a.accountId);
  const bShop = await shopOf(b.accountId);
  const customer = uniquePhone('2554');
  // Sent to A's number, naming B's provider catalogue.
  const sent = await orderMessage(a, customer, bShop.metaCatalogueId, [['TEA-1', 1, 1]]);
  assert.equal(sent.body.delivered, true, JSON.stringify(sent.body));
  const [msg] = await eventually(
    () => inboundOf(a.accountId),
    (l) => l.length === 1,
  );
  assert.equal(msg.metadata.order_status, 'not_created');
  assert.equal(msg.metadata.order_reason, 'unknown_catalogue');
  assert.equal((await ordersOf(a.accountId)).length, 0);
  assert.equal((await ordersOf(b.accountId)).length, 0);
  assert.equal((await inboundOf(b.accountId)).length, 0, 'nothing reaches the catalogue’s owner');
  const bTea = await one<{ reserved: number }>(db(), `select reserved from products where catalogue_id = ? and sku = 'TEA-1'`, [bShop.id]);
  assert.equal(bTea!.reserved, 0);
  // Neither tenant reads the other's orders through the API.
  const own = await orderMessage(b, customer, bShop.metaCatalogueId, [['TEA-1', 1, 1]]);
  assert.equal(own.body.delivered, true);
  const [bOrder] = await eventually(
    () => ordersOf(b.accountId),
    (l) => l.length === 1,
  );
  const foreign = await api('GET', `/api/v3/catalogues/orders/${bOrder.id}`, a.token);
  assert.ok([403, 404].includes(foreign.status), `another tenant's order: ${foreign.status}`);
});

test('an order the order rules refuse (over 100 lines) is undone; the message is kept and says why', async () => {
  const t = await waTenant();
  const shop = await shopOf(t.accountId);
  const lines = Array.from({ length: 101 }, (_, i): [string, number, number] => [i === 0 ? 'TEA-1' : `X-${i}`, 1, 1]);
  const sent = await orderMessage(t, uniquePhone('2554'), shop.metaCatalogueId, lines);
  assert.equal(sent.body.delivered, true, JSON.stringify(sent.body).slice(0, 300));
  const [msg] = await eventually(
    () => inboundOf(t.accountId),
    (l) => l.length === 1,
  );
  assert.equal(msg.metadata.order_reason, 'invalid');
  assert.equal((await ordersOf(t.accountId)).length, 0);
  const tea = await one<{ reserved: number }>(db(), `select reserved from products where catalogue_id = ? and sku = 'TEA-1'`, [shop.id]);
  assert.equal(tea!.reserved, 0, 'nothing held');
});

test("a suspended account's shop takes no chat order: the message is kept, no order, nothing held; reinstated it sells again", async () => {
  const t = await waTenant();
  const shop = await shopOf(t.accountId);
  const customer = uniquePhone('2554');
  const tea = async () =>
    (await one<{ inventory: number; reserved: number }>(
      db(),
      `select inventory, reserved from products where catalogue_id = ? and sku = 'TEA-1'`,
      [shop.id],
    ))!;

  assert.equal((await admin('PATCH', `/accounts/${t.accountId}`, { status: 'suspended' })).status, 200);
  // The shop's own door is shut by its keys: a shop link is refused before anything is written.
  const link = await api('POST', '/api/v3/shop-links', t.token, { catalogue_id: shop.id, items: [{ sku: 'TEA-1', quantity: 1 }] });
  assert.equal(link.status, 403, link.text);
  assert.equal((await many(db(), 'select 1 from carts where account_id = ?', [t.accountId])).length, 0, 'no basket opened');

  const sent = await orderMessage(t, customer, shop.metaCatalogueId, [
    ['TEA-1', 3, 12.5],
    ['CUP-1', 1, 7],
  ]);
  assert.equal(sent.status, 200, sent.text);
  assert.equal(sent.body.delivered, true, 'the webhook is accepted');
  const [msg] = await eventually(
    () => inboundOf(t.accountId),
    (l) => l.length === 1,
  );
  // The customer's message is data: stored as received, the cart as sent on it, and why no order was made.
  assert.equal(msg.gateway_message_id, sent.body.wamid);
  assert.equal(msg.sender, customer);
  assert.equal(msg.metadata.order_status, 'not_created');
  assert.equal(msg.metadata.order_reason, 'shop_closed');
  assert.equal(msg.metadata.order_id, undefined);
  assert.deepEqual(
    msg.metadata.order.product_items.map((i: any) => [i.product_retailer_id, i.quantity]),
    [
      ['TEA-1', 3],
      ['CUP-1', 1],
    ],
  );
  assert.equal((await ordersOf(t.accountId)).length, 0, 'no order placed');
  assert.deepEqual(await tea(), { inventory: 10, reserved: 0 }, 'no unit held');
  assert.equal((await many(db(), 'select 1 from stock_holds where account_id = ?', [t.accountId])).length, 0);
  assert.equal((await many(db(), `select 1 from events where account_id = ? and kind = 'order.received'`, [t.accountId])).length, 0);

  assert.equal((await admin('PATCH', `/accounts/${t.accountId}`, { status: 'active' })).status, 200);
  // Reinstated, the shop reads what the customer asked for while it was closed.
  const read = await api('GET', `/api/v3/whatsapp/${msg.uid}`, t.token);
  assert.equal(read.status, 200, read.text);
  assert.equal(read.body.data.metadata.order_reason, 'shop_closed');

  const again = await orderMessage(t, customer, shop.metaCatalogueId, [['TEA-1', 2, 12.5]]);
  assert.equal(again.body.delivered, true, JSON.stringify(again.body));
  const [order] = await eventually(
    () => ordersOf(t.accountId),
    (l) => l.length === 1,
  );
  assert.equal(order.status, 'pending');
  assert.equal(order.provider_message_id, again.body.wamid);
  assert.deepEqual(
    order.product_items.map((l) => [l.product_retailer_id, l.quantity, l.stock]),
    [['TEA-1', 2, 'held']],
  );
  assert.deepEqual(await tea(), { inventory: 10, reserved: 2 });
  assert.equal((await inboundOf(t.accountId)).length, 2);
});

test('the simulator refuses a malformed order control (nothing is delivered)', async () => {
  const t = await waTenant();
  const r = await sim('POST', '/_sim/whatsapp/inbound', {
    from: uniquePhone('2554').replace('+', ''),
    phone_number_id: t.phoneNumberId,
    type: 'order',
    order: { catalog_id: '1', product_items: [{ product_retailer_id: 'A', quantity: 1, item_price: 1 }] },
  });
  assert.equal(r.status, 400);
  assert.match(r.body.error, /currency/);
});
