import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { Client, Connection } from '@temporalio/client';
import { Client as McpClient, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import pino from 'pino';
import { openOrm } from '../../entities/orm.js';
import { exec, many, one } from '../../entities/db.js';
import { loadConfig } from '../../config.js';
import { createOrder, startOrderHoldAfterCommit, type CreateOrderInput } from '../../services/orders/index.js';
import { startOwedOrderHolds } from '../../services/orders/holds.js';
import { setHoldTtlUnitSeconds } from '../../services/orders/ttl.js';
import { orderHoldQuery } from '../../workflows/orders/order-hold.js';
import { orderHoldWorkflowId } from '../../temporal/ids.js';
import { DomainError } from '../../services/platform/errors.js';
import { API_URL, admin, api, eventually, newTenant, type Tenant } from '../support/stack.js';
import { privateStack } from '../support/private-stack.js';

// Orders and stock holds (issue 13, points 1-4 and 9): creation holds stock with guarded updates,
// status moves commit or release each hold once, the TTL workflow releases what is left. Orders are
// created in this process (the chat and shop doors call the same createOrder) with a TTL unit of one
// second, so `reservation_ttl_hours: 2` lapses in two seconds.
const orm = await openOrm(process.env.DATABASE_URL!, 8);
const connection = await Connection.connect({ address: process.env.TEMPORAL_ADDRESS ?? '127.0.0.1:7233' });
const temporal = new Client({ connection });
after(async () => {
  await orm.close();
  await connection.close();
});
const em = () => orm.em.fork();
const log = pino({ level: 'silent' });
setHoldTtlUnitSeconds(1);
const mainQueue = loadConfig().taskQueue;

async function newShop(t: Tenant, o: { policy?: 'svc' | 'external'; ttlHours?: number; backorders?: boolean } = {}): Promise<number> {
  const row = await one<{ id: number }>(
    em(),
    `insert into catalogues (account_id, name, channels, sku_prefix, stock_policy, reservation_ttl_hours, allow_backorders, default_currency, created_at, updated_at)
     values (?, 'Shop', '[]'::jsonb, 'SHOP', ?, ?, ?, 'USD', now(), now()) returning id`,
    [t.accountId, o.policy ?? 'svc', o.ttlHours ?? 3600, o.backorders ?? false],
  );
  return row!.id;
}
async function addProduct(t: Tenant, shop: number, sku: string, inventory: number | null, price = 1000, salePrice: number | null = null) {
  const row = await one<{ id: string }>(
    em(),
    `insert into products (account_id, catalogue_id, sku, name, price, sale_price, currency, availability, inventory, reserved, created_at, updated_at)
     values (?, ?, ?, ?, ?, ?, 'USD', 'in stock', ?, 0, now(), now()) returning id`,
    [t.accountId, shop, sku, `Product ${sku}`, price, salePrice, inventory],
  );
  return Number(row!.id);
}
const stock = async (id: number) =>
  (await one<{ inventory: number | null; reserved: number }>(em(), 'select inventory, reserved from products where id = ?', [id]))!;
const holds = (orderId: number) =>
  many<{ product_id: string; quantity: number; status: string }>(
    em(),
    'select product_id, quantity, status from stock_holds where order_id = ? order by product_id',
    [orderId],
  );
const movements = (productId: number) =>
  many<{ kind: string; quantity: number; inventory_after: number | null; reserved_after: number; cause: Record<string, unknown> }>(
    em(),
    'select kind, quantity, inventory_after, reserved_after, cause from stock_movements where product_id = ? order by id',
    [productId],
  );

type Lines = CreateOrderInput['lines'];
async function order(t: Tenant, shop: number, lines: Lines, o: Partial<CreateOrderInput> & { queue?: string; start?: boolean } = {}) {
  const { queue, start, ...extra } = o;
  const created = await em().transactional((tx) =>
    createOrder(tx, { accountId: t.accountId, catalogueId: shop, platform: 'manual', customerHandle: '+15550001', lines, ...extra }),
  );
  if (start !== false) await startOrderHoldAfterCommit({ temporal, config: { taskQueue: queue ?? mainQueue }, orm, log }, created);
  return created;
}
const setStatus = (t: Tenant, id: number, status: string, token = t.token) =>
  api('PUT', `/api/v3/catalogues/orders/${id}/status`, token, { status });

test('creation sums lines per product, holds whole or not at all, and flags short and unknown lines', async () => {
  const t = await newTenant();
  const shop = await newShop(t);
  const a = await addProduct(t, shop, 'A', 5, 1000, 800);
  const b = await addProduct(t, shop, 'B', 3);
  const u = await addProduct(t, shop, 'U', null, 250);
  const created = await order(t, shop, [
    { retailerId: 'A', quantity: 2 },
    { retailerId: 'B', quantity: 2 },
    { retailerId: 'A', quantity: 3 },
    { retailerId: 'B', quantity: 2, unitPriceMinor: 999 },
    { retailerId: 'U', quantity: 7 },
    { retailerId: 'NOPE', quantity: 1 },
  ]);
  assert.equal(created.created, true);
  assert.ok(created.holdExpiresAt);
  assert.deepEqual(await stock(a), { inventory: 5, reserved: 5 }, 'A: 2 + 3 held together');
  assert.deepEqual(await stock(b), { inventory: 3, reserved: 0 }, 'B: 4 wanted of 3: nothing held');
  assert.deepEqual(await stock(u), { inventory: null, reserved: 0 }, 'untracked: nothing held');
  assert.deepEqual(await holds(created.orderId), [{ product_id: String(a), quantity: 5, status: 'held' }]);

  const r = await api('GET', `/api/v3/catalogues/orders/${created.orderId}`, t.token);
  assert.equal(r.status, 200, r.text);
  const o = r.body.data;
  assert.deepEqual(
    o.product_items.map((l: { stock: string; item_price: number }) => [l.stock, l.item_price]),
    [
      ['held', 800],
      ['stock_short', 1000],
      ['held', 800],
      ['stock_short', 999],
      ['untracked', 250],
      ['unresolved', 0],
    ],
  );
  assert.equal(o.needs_attention, true);
  assert.equal(o.status, 'pending');
  assert.equal(o.total_amount, 2 * 800 + 2 * 1000 + 3 * 800 + 2 * 999 + 7 * 250);
  assert.equal(o.customer_wa_id, '+15550001');

  const mv = await movements(a);
  assert.equal(mv.length, 1);
  assert.equal(mv[0].kind, 'reserve');
  assert.equal(mv[0].quantity, 5);
  assert.equal(mv[0].reserved_after, 5);
  assert.equal(mv[0].cause.order_id, created.orderId);

  const ev = await one<{ payload: Record<string, unknown> }>(
    em(),
    "select payload from events where account_id = ? and kind = 'order.received'",
    [t.accountId],
  );
  assert.equal(ev!.payload.id, created.orderId);
  assert.equal(ev!.payload.needs_attention, true);
  assert.equal(ev!.payload.total_amount, o.total_amount);
});

test('concurrent orders never oversell: 30 orders of 1 against 10 units hold exactly 10', async () => {
  const t = await newTenant();
  const shop = await newShop(t);
  const p = await addProduct(t, shop, 'HOT', 10);
  const results = await Promise.all(
    Array.from({ length: 30 }, () => order(t, shop, [{ retailerId: 'HOT', quantity: 1 }], { start: false })),
  );
  assert.equal(results.filter((r) => !r.needsAttention).length, 10);
  assert.deepEqual(await stock(p), { inventory: 10, reserved: 10 });
  const n = await one<{ n: string }>(em(), "select count(*) as n from stock_holds where product_id = ? and status = 'held'", [p]);
  assert.equal(Number(n!.n), 10);
});

test('a redelivered provider message id answers the same order and holds nothing more', async () => {
  const t = await newTenant();
  const shop = await newShop(t);
  const p = await addProduct(t, shop, 'A', 10);
  const [one1, two] = await Promise.all([
    order(t, shop, [{ retailerId: 'A', quantity: 2 }], { providerMessageId: 'wamid.same', start: false }),
    order(t, shop, [{ retailerId: 'A', quantity: 2 }], { providerMessageId: 'wamid.same', start: false }),
  ]);
  assert.equal(one1.orderId, two.orderId);
  assert.deepEqual([one1.created, two.created].sort(), [false, true]);
  assert.deepEqual(await stock(p), { inventory: 10, reserved: 2 });
});

test('bad input: zero, negative or fractional quantities refuse the order and write nothing', async () => {
  const t = await newTenant();
  const shop = await newShop(t);
  const p = await addProduct(t, shop, 'A', 10);
  for (const quantity of [0, -1, 1.5]) {
    await assert.rejects(
      order(t, shop, [
        { retailerId: 'A', quantity: 1 },
        { retailerId: 'A', quantity },
      ]),
      (e: unknown) => e instanceof DomainError && e.kind === 'invalid' && Boolean(e.detail.errors?.['lines.1.quantity']),
    );
  }
  await assert.rejects(order(t, shop, []), (e: unknown) => e instanceof DomainError && e.kind === 'invalid');
  const other = await newTenant();
  await assert.rejects(
    order(other, shop, [{ retailerId: 'A', quantity: 1 }]),
    (e: unknown) => e instanceof DomainError && e.kind === 'not_found',
  );
  assert.deepEqual(await stock(p), { inventory: 10, reserved: 0 });
  const n = await one<{ n: string }>(em(), 'select count(*) as n from orders where catalogue_id = ?', [shop]);
  assert.equal(Number(n!.n), 0);
});

test('status moves: confirm commits once under svc (a real decrement), however often and concurrently it changes', async () => {
  const t = await newTenant();
  const shop = await newShop(t, { policy: 'svc' });
  const p = await addProduct(t, shop, 'A', 10);
  const o = await order(t, shop, [{ retailerId: 'A', quantity: 3 }]);
  const moves = await Promise.all(
    ['confirmed', 'cancelled', 'shipped', 'refunded', 'confirmed', 'delivered', 'cancelled', 'processing'].map((s) =>
      setStatus(t, o.orderId, s),
    ),
  );
  for (const m of moves) assert.equal(m.status, 200, m.text);
  const kinds = (await movements(p)).map((m) => m.kind);
  assert.equal(kinds.filter((k) => k === 'reserve').length, 1);
  assert.ok(kinds.filter((k) => k === 'commit').length <= 1, kinds.join(','));
  assert.ok(kinds.filter((k) => k === 'release').length <= 1, kinds.join(','));
  const [h] = await holds(o.orderId);
  assert.deepEqual(await stock(p), h.status === 'committed' ? { inventory: 7, reserved: 0 } : { inventory: 10, reserved: 0 });
  // Whatever came first, another round commits at most once more (a released hold is re-committed under svc) and never twice.
  for (const st of ['pending', 'confirmed', 'cancelled', 'confirmed']) assert.equal((await setStatus(t, o.orderId, st)).status, 200);
  assert.deepEqual(await stock(p), { inventory: 7, reserved: 0 });
  assert.equal((await movements(p)).filter((m) => m.kind === 'commit').length, 1);
});

test('confirm under svc decrements; cancel after a commit leaves inventory; external commit releases the hold', async () => {
  const t = await newTenant();
  const svc = await newShop(t, { policy: 'svc' });
  const p = await addProduct(t, svc, 'A', 10);
  const o = await order(t, svc, [{ retailerId: 'A', quantity: 4 }]);
  const r = await setStatus(t, o.orderId, 'confirmed');
  assert.equal(r.status, 200, r.text);
  assert.equal(r.body.data.status, 'confirmed');
  assert.deepEqual(await stock(p), { inventory: 6, reserved: 0 });
  const [m] = (await movements(p)).slice(-1);
  assert.equal(m.kind, 'commit');
  assert.equal(m.quantity, -4);
  assert.equal((await setStatus(t, o.orderId, 'cancelled')).status, 200);
  assert.deepEqual(await stock(p), { inventory: 6, reserved: 0 }, 'a cancel after the commit returns nothing by itself');

  const ext = await newShop(t, { policy: 'external' });
  const q = await addProduct(t, ext, 'B', 10);
  const o2 = await order(t, ext, [{ retailerId: 'B', quantity: 4 }]);
  assert.deepEqual(await stock(q), { inventory: 10, reserved: 4 });
  assert.equal((await setStatus(t, o2.orderId, 'shipped')).status, 200);
  assert.deepEqual(await stock(q), { inventory: 10, reserved: 0 });
  const [m2] = (await movements(q)).slice(-1);
  assert.equal(m2.kind, 'release');
  assert.equal(m2.cause.committed_under, 'external');
  assert.equal((await holds(o2.orderId))[0].status, 'committed');
});

test('cancel releases; a confirmation after it takes the units again under svc, or flags the order when they are gone', async () => {
  const t = await newTenant();
  const shop = await newShop(t, { policy: 'svc' });
  const p = await addProduct(t, shop, 'A', 5);
  const o = await order(t, shop, [{ retailerId: 'A', quantity: 3 }]);
  assert.equal((await setStatus(t, o.orderId, 'cancelled')).status, 200);
  assert.deepEqual(await stock(p), { inventory: 5, reserved: 0 });
  assert.equal((await holds(o.orderId))[0].status, 'released');
  const o2 = await order(t, shop, [{ retailerId: 'A', quantity: 3 }]);
  const r = await setStatus(t, o.orderId, 'confirmed');
  assert.equal(r.body.data.needs_attention, true, 'only 2 available: the re-commit comes up short');
  assert.deepEqual(await stock(p), { inventory: 5, reserved: 3 });
  assert.equal((await setStatus(t, o2.orderId, 'cancelled')).status, 200);
  const again = await setStatus(t, o.orderId, 'confirmed');
  assert.equal(again.status, 200);
  assert.deepEqual(await stock(p), { inventory: 2, reserved: 0 });
  assert.equal((await holds(o.orderId))[0].status, 'committed');
});

test('reads: list filters and pages (default 25), unknown status 422, another tenant’s order 404', async () => {
  const t = await newTenant();
  const shop = await newShop(t);
  await addProduct(t, shop, 'A', null);
  const ids: number[] = [];
  for (let i = 0; i < 27; i++)
    ids.push((await order(t, shop, [{ retailerId: 'A', quantity: 1 }], { platform: i % 2 ? 'whatsapp' : 'manual' })).orderId);
  const all = await api('GET', '/api/v3/catalogues/orders', t.token);
  assert.equal(all.status, 200, all.text);
  assert.equal(all.body.data.orders.length, 25);
  assert.equal(all.body.data.pagination.total, 27);
  const wa = await api('GET', `/api/v3/catalogues/orders?platform=whatsapp&catalogue_id=${shop}&limit=100`, t.token);
  assert.equal(wa.body.data.orders.length, 13);
  assert.equal((await setStatus(t, ids[0], 'confirmed')).status, 200);
  const conf = await api('GET', '/api/v3/catalogues/orders?status=confirmed', t.token);
  assert.deepEqual(
    conf.body.data.orders.map((o: { id: number }) => o.id),
    [ids[0]],
  );
  const since = await api(
    'GET',
    `/api/v3/catalogues/orders?updated_since=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}`,
    t.token,
  );
  assert.equal(since.body.data.orders.length, 0);
  assert.equal((await setStatus(t, ids[1], 'lost')).status, 422);
  assert.equal((await api('GET', '/api/v3/catalogues/orders?status=lost', t.token)).status, 422);
  assert.equal((await api('PUT', `/api/v3/catalogues/orders/${ids[1]}/status`, t.token, {})).status, 422);

  const other = await newTenant();
  assert.equal((await api('GET', `/api/v3/catalogues/orders/${ids[1]}`, other.token)).status, 404);
  assert.equal((await setStatus(other, ids[1], 'cancelled')).status, 404);
  assert.equal((await api('GET', '/api/v3/catalogues/orders', other.token)).body.data.orders.length, 0);
  assert.equal((await api('GET', '/api/v3/catalogues/orders/abc', t.token)).status, 404);
  const untouched = await api('GET', `/api/v3/catalogues/orders/${ids[1]}`, t.token);
  assert.equal(untouched.body.data.status, 'pending');
});

test('the TTL: a pending order’s hold is released by its workflow (release, cause ttl); confirmation before it wins', async () => {
  const t = await newTenant();
  const shop = await newShop(t, { ttlHours: 3 });
  const p = await addProduct(t, shop, 'A', 10);
  const lapsing = await order(t, shop, [{ retailerId: 'A', quantity: 2 }]);
  const kept = await order(t, shop, [{ retailerId: 'A', quantity: 3 }]);
  assert.equal((await setStatus(t, kept.orderId, 'confirmed')).status, 200);
  const handle = temporal.workflow.getHandle(orderHoldWorkflowId(t.accountId, lapsing.orderId));
  assert.equal((await handle.query(orderHoldQuery)).phase, 'waiting');
  const done = (await handle.result()) as { phase: string; released: { holds: number; units: number } };
  assert.equal(done.phase, 'expired');
  assert.deepEqual(done.released, { holds: 1, units: 2 });
  assert.deepEqual(await stock(p), { inventory: 7, reserved: 0 });
  assert.equal((await holds(lapsing.orderId))[0].status, 'expired');
  const last = (await movements(p)).slice(-1)[0];
  assert.equal(last.kind, 'release');
  assert.equal(last.cause.kind, 'ttl');
  const keptRun = (await temporal.workflow.getHandle(orderHoldWorkflowId(t.accountId, kept.orderId)).result()) as { phase: string };
  assert.equal(keptRun.phase, 'moved_on');
  const desc = await handle.describe();
  assert.equal(desc.searchAttributes.ResourceType?.[0], 'order_hold');
});

test('holds waiting while the worker is killed are released once after it returns; a lost start is made by the reconciler pass', async () => {
  const stack = await privateStack();
  try {
    const t = await newTenant();
    const shop = await newShop(t, { ttlHours: 4 });
    const p = await addProduct(t, shop, 'A', 100);
    const started = await Promise.all(
      Array.from({ length: 10 }, () => order(t, shop, [{ retailerId: 'A', quantity: 1 }], { queue: stack.taskQueue })),
    );
    const lost = await order(t, shop, [{ retailerId: 'A', quantity: 5 }], { queue: stack.taskQueue, start: false });
    await stack.killWorker();
    assert.deepEqual(await stock(p), { inventory: 100, reserved: 15 });
    // The reconciler's pass (run here against the private queue, without its 30 s grace).
    assert.ok((await startOwedOrderHolds(em(), { temporal, config: { taskQueue: stack.taskQueue } }, 0)) >= 1);
    await new Promise((r) => setTimeout(r, 5000));
    assert.deepEqual(await stock(p), { inventory: 100, reserved: 15 }, 'no worker: nothing expires yet');
    stack.startWorker();
    const s = await eventually(
      () => stock(p),
      (v) => v.reserved === 0,
      60_000,
    );
    assert.deepEqual(s, { inventory: 100, reserved: 0 });
    for (const o of [...started, lost]) assert.equal((await holds(o.orderId))[0].status, 'expired');
    const releases = (await movements(p)).filter((m) => m.kind === 'release');
    assert.equal(releases.length, 11, 'each hold released exactly once');
  } finally {
    await stack.stop();
  }
});

test('MCP: the orders server lists the order tools and answers them as REST does', async () => {
  const t = await newTenant();
  const shop = await newShop(t, { policy: 'svc' });
  const p = await addProduct(t, shop, 'A', 4);
  const o = await order(t, shop, [{ retailerId: 'A', quantity: 1 }]);
  const cred = await admin('POST', `/accounts/${t.accountId}/mcp-credentials`, { name: 'assistant', user_id: t.userId });
  assert.equal(cred.status, 201, cred.text);
  const c = new McpClient({ name: 'orders-test', version: '1.0.0' });
  await c.connect(
    new StreamableHTTPClientTransport(new URL(`${API_URL}/mcp/v1/orders`), {
      requestInit: { headers: { Authorization: `Bearer ${cred.body.data.token}` } },
    }),
  );
  try {
    const names = (await c.listTools()).tools.map((x) => x.name);
    for (const name of ['list_orders', 'get_order', 'set_order_status']) assert.ok(names.includes(name), name);
    const listed = (await c.callTool({ name: 'list_orders', arguments: {} })) as { structuredContent: { orders: Array<{ id: number }> } };
    assert.deepEqual(
      listed.structuredContent.orders.map((x) => x.id),
      [o.orderId],
    );
    const moved = (await c.callTool({ name: 'set_order_status', arguments: { order: String(o.orderId), status: 'delivered' } })) as {
      structuredContent: { status: string };
    };
    assert.equal(moved.structuredContent.status, 'delivered');
    assert.deepEqual(await stock(p), { inventory: 3, reserved: 0 });
  } finally {
    await c.close();
  }
});

test('the availability word follows what is left to buy: held to 0 is out of stock (available for order with backorders), released is back in stock', async () => {
  const t = await newTenant();
  const shop = await newShop(t);
  const p = await addProduct(t, shop, 'LAST', 2);
  const word = async (id: number) =>
    (await one<{ availability: string }>(em(), 'select availability from products where id = ?', [id]))!.availability;
  const first = await order(t, shop, [{ retailerId: 'LAST', quantity: 2 }]);
  assert.equal(await word(p), 'out of stock', 'both units held');
  assert.equal((await setStatus(t, first.orderId, 'cancelled')).status, 200);
  assert.equal(await word(p), 'in stock', 'the release puts them back on sale');
  const backorders = await newShop(t, { backorders: true });
  const q = await addProduct(t, backorders, 'BACK', 1);
  await order(t, backorders, [{ retailerId: 'BACK', quantity: 1 }]);
  assert.equal(await word(q), 'available for order');
  const kept = await addProduct(t, shop, 'PRE', 1);
  await exec(em(), "update products set availability = 'preorder' where id = ?", [kept]);
  await order(t, shop, [{ retailerId: 'PRE', quantity: 1 }]);
  assert.equal(await word(kept), 'preorder', 'preorder is a choice, not a count');
});
