import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { openOrm } from '../../entities/orm.js';
import { exec, many, one } from '../../entities/db.js';
import { API_URL, admin, api, eventually, http, newTenant, type Tenant } from '../support/stack.js';

// Inventory pushes, the inventory list, the stock ledger, low-stock notices and account notices
// (issue 12, point 6). Shops and products are written with SQL here: this file tests stock, not
// product writes.
const orm = await openOrm(process.env.DATABASE_URL!, 4);
after(() => orm.close());
const em = () => orm.em.fork();

interface ShopOpts {
  channels?: string[];
  lowStockThreshold?: number | null;
  allowBackorders?: boolean;
}
async function newShop(t: Tenant, o: ShopOpts = {}): Promise<number> {
  const row = await one<{ id: number }>(
    em(),
    `insert into catalogues (account_id, name, channels, sku_prefix, low_stock_threshold, allow_backorders, created_at, updated_at)
     values (?, 'Shop', ?::jsonb, 'SHOP', ?, ?, now(), now()) returning id`,
    [t.accountId, JSON.stringify(o.channels ?? []), o.lowStockThreshold ?? null, o.allowBackorders ?? false],
  );
  return row!.id;
}

interface ProductOpts {
  sku: string;
  inventory?: number | null;
  reserved?: number;
  availability?: string;
  explicit?: boolean;
  retired?: boolean;
}
async function addProducts(t: Tenant, shop: number, products: ProductOpts[]): Promise<Record<string, number>> {
  const rows = await many<{ id: string; sku: string }>(
    em(),
    `insert into products (account_id, catalogue_id, sku, name, price, currency, availability, availability_explicit, inventory, reserved,
                           retired_at, created_at, updated_at)
     select ?, ?, x.sku, 'Product ' || x.sku, 1000, 'USD', x.availability, x.explicit, x.inventory, x.reserved,
            case when x.retired then now() end, now(), now()
       from jsonb_to_recordset(?::jsonb) as x(sku text, availability text, explicit boolean, inventory int, reserved int, retired boolean)
     returning id, sku`,
    [
      t.accountId,
      shop,
      JSON.stringify(
        products.map((p) => ({
          sku: p.sku,
          availability: p.availability ?? (p.inventory === 0 ? 'out of stock' : 'in stock'),
          explicit: p.explicit ?? false,
          inventory: p.inventory === undefined ? 10 : p.inventory,
          reserved: p.reserved ?? 0,
          retired: p.retired ?? false,
        })),
      ),
    ],
  );
  return Object.fromEntries(rows.map((r) => [r.sku, Number(r.id)]));
}

const push = (t: Tenant, shop: number, levels: unknown, token = t.token) =>
  api('POST', `/api/v3/catalogues/${shop}/inventory`, token, { levels });
const inventory = (t: Tenant, shop: number, query = '', token = t.token) =>
  api('GET', `/api/v3/catalogues/${shop}/inventory${query}`, token);
const movements = (t: Tenant, shop: number, sku: string, query = '', token = t.token) =>
  api('GET', `/api/v3/catalogues/${shop}/products/by-sku/${encodeURIComponent(sku)}/movements${query}`, token);
const productRow = async (id: number) =>
  (await one<{ inventory: number | null; reserved: number; availability: string; availability_explicit: boolean; revision: number }>(
    em(),
    'select inventory, reserved, availability, availability_explicit, revision from products where id = ?',
    [id],
  ))!;

test('a push applies absolute counts: derived rows, unknown skus, unchanged ones counted and not written again', async () => {
  const t = await newTenant();
  const shop = await newShop(t);
  const ids = await addProducts(t, shop, [
    { sku: 'A', inventory: 10 },
    { sku: 'B', inventory: 5, reserved: 2 },
    { sku: 'C', inventory: 7 },
  ]);
  const r = await push(t, shop, [
    { sku: 'B', inventory: 8 },
    { sku: 'NOPE', inventory: 1 },
    { sku: 'A', inventory: 10 },
    { sku: 'C', inventory: 0 },
  ]);
  assert.equal(r.status, 200, r.text);
  assert.deepEqual(r.body.data, {
    derived: [
      { sku: 'B', product_id: ids.B, inventory: 8, reserved: 2, available: 6, availability: 'in stock' },
      { sku: 'C', product_id: ids.C, inventory: 0, reserved: 0, available: 0, availability: 'out of stock' },
    ],
    unknown_skus: ['NOPE'],
    unchanged: 1,
    push_id: null,
  });
  assert.equal((await productRow(ids.A)).revision, 1, 'an unchanged level is not republished');
  assert.equal((await productRow(ids.B)).revision, 2);

  const again = await push(t, shop, [
    { sku: 'B', inventory: 8 },
    { sku: 'C', inventory: 0 },
  ]);
  assert.deepEqual(
    again.body.data,
    { derived: [], unknown_skus: [], unchanged: 2, push_id: null },
    'absolute counts: a replay changes nothing',
  );
  assert.equal((await productRow(ids.B)).revision, 2);

  const m = await movements(t, shop, 'B');
  assert.equal(m.status, 200, m.text);
  assert.equal(m.body.data.movements.length, 1, 'one movement per change, none for the replay');
  const [mv] = m.body.data.movements;
  assert.deepEqual(
    {
      kind: mv.kind,
      quantity: mv.quantity,
      inventory_after: mv.inventory_after,
      reserved_after: mv.reserved_after,
      available_after: mv.available_after,
    },
    { kind: 'sync', quantity: 3, inventory_after: 8, reserved_after: 2, available_after: 6 },
  );
  assert.equal(mv.cause.kind, 'inventory_push');
  assert.match(mv.cause.actor, /^api_key:\d+$/);
  assert.match(mv.cause.push_id, /^inventory-[0-9a-f-]{36}$/);
  assert.ok(!Number.isNaN(Date.parse(mv.created_at)));
  assert.equal((await movements(t, shop, 'A')).body.data.movements.length, 0);
});

test('availability follows the count unless backorders; discontinued and preorder are never put back on sale', async () => {
  const t = await newTenant();
  const shop = await newShop(t);
  const ids = await addProducts(t, shop, [
    { sku: 'derived', inventory: 4 },
    { sku: 'chosen-in', inventory: 4, availability: 'in stock', explicit: true },
    { sku: 'paused', inventory: 0, availability: 'out of stock', explicit: true },
    { sku: 'gone', inventory: 0, availability: 'discontinued', explicit: true },
    { sku: 'soon', inventory: 0, availability: 'preorder', explicit: true },
    { sku: 'held', inventory: 6, reserved: 4 },
  ]);
  const r = await push(t, shop, [
    { sku: 'derived', inventory: 0 },
    { sku: 'chosen-in', inventory: 0 },
    { sku: 'paused', inventory: 9 },
    { sku: 'gone', inventory: 50 },
    { sku: 'soon', inventory: 50 },
    { sku: 'held', inventory: 4 },
  ]);
  assert.equal(r.status, 200, r.text);
  const by = Object.fromEntries(r.body.data.derived.map((d: { sku: string; availability: string }) => [d.sku, d.availability]));
  assert.deepEqual(by, {
    derived: 'out of stock',
    'chosen-in': 'out of stock',
    paused: 'in stock',
    gone: 'discontinued',
    soon: 'preorder',
    held: 'out of stock',
  });
  assert.equal((await productRow(ids['chosen-in'])).availability_explicit, false, 'a value that follows the count is no longer a choice');
  assert.equal((await productRow(ids.gone)).availability_explicit, true);
  const recovered = await push(t, shop, [{ sku: 'derived', inventory: 3 }]);
  assert.equal(recovered.body.data.derived[0].availability, 'in stock', 'recovery lifts to in stock');

  const backorders = await newShop(t, { allowBackorders: true });
  await addProducts(t, backorders, [{ sku: 'X', inventory: 2 }]);
  const zero = await push(t, backorders, [{ sku: 'X', inventory: 0 }]);
  assert.equal(zero.body.data.derived[0].availability, 'available for order', 'backorders: 0 keeps it buyable');
  assert.equal((await push(t, backorders, [{ sku: 'X', inventory: 1 }])).body.data.derived[0].availability, 'in stock');
});

test('a first count starts tracking an untracked product (movement of the whole count); GET inventory filters and pages', async () => {
  const t = await newTenant();
  const shop = await newShop(t);
  const skus = Array.from({ length: 30 }, (_, i) => `P${String(i).padStart(2, '0')}`);
  await addProducts(t, shop, [...skus.map((sku) => ({ sku, inventory: null })), { sku: 'OLD', inventory: 3, retired: true }]);
  const r = await push(t, shop, [
    { sku: 'P01', inventory: 7 },
    { sku: 'P02', inventory: 0 },
    { sku: 'OLD', inventory: 1 },
  ]);
  assert.deepEqual(
    r.body.data.derived.map((d: { sku: string; inventory: number }) => [d.sku, d.inventory]),
    [
      ['P01', 7],
      ['P02', 0],
    ],
  );
  assert.deepEqual(r.body.data.unknown_skus, ['OLD'], 'a retired product is not the shop’s any more');
  const mv = (await movements(t, shop, 'P01')).body.data.movements[0];
  assert.deepEqual([mv.quantity, mv.inventory_after, mv.available_after], [7, 7, 7]);
  assert.equal((await movements(t, shop, 'OLD')).status, 404);

  const first = await inventory(t, shop);
  assert.equal(first.status, 200, first.text);
  assert.equal(first.body.data.inventory.length, 25, 'default 25 a page');
  assert.deepEqual(first.body.data.pagination, { current_page: 1, per_page: 25, last_page: 2, total: 30, has_more_pages: true });
  assert.deepEqual(first.body.data.inventory[0], {
    sku: 'P00',
    product_id: first.body.data.inventory[0].product_id,
    inventory: null,
    reserved: 0,
    available: null,
    availability: 'in stock',
  });
  assert.equal((await inventory(t, shop, '?limit=500&per_page=2')).body.data.pagination.per_page, 100, 'limit wins, capped at 100');
  assert.equal((await inventory(t, shop, '?per_page=2&page=2')).body.data.inventory[0].sku, 'P02');

  const tracked = await inventory(t, shop, '?tracked_only=true');
  assert.deepEqual(
    tracked.body.data.inventory.map((x: { sku: string; available: number }) => [x.sku, x.available]),
    [
      ['P01', 7],
      ['P02', 0],
    ],
  );
  const pick = async (q: string) => (await inventory(t, shop, q)).body.data.inventory.map((x: { sku: string }) => x.sku);
  assert.deepEqual(await pick('?sku[]=P05&sku[]=P03&sku[]=nope'), ['P03', 'P05']);
  assert.deepEqual(await pick('?sku=P07'), ['P07']);
  assert.deepEqual(await pick('?sku[]=P07'), ['P07']);
  assert.deepEqual(await pick('?sku=P07&sku=P08'), ['P07', 'P08']);
  assert.deepEqual(await pick('?sku[]=P01&sku[]=P09&tracked_only=true'), ['P01']);
  assert.equal((await inventory(t, shop, '?tracked_only=maybe')).status, 422);
});

test('bad input is a 422 naming the row, never a 500, and nothing is applied', async () => {
  const t = await newTenant();
  const shop = await newShop(t);
  const ids = await addProducts(t, shop, [
    { sku: 'A', inventory: 1 },
    { sku: 'B', inventory: 1 },
  ]);
  const cases: Array<[unknown, string]> = [
    [
      [
        { sku: 'A', inventory: 2 },
        { sku: 'B', inventory: -1 },
      ],
      'levels.1.inventory',
    ],
    [[{ sku: 'A', inventory: 2.5 }], 'levels.0.inventory'],
    [[{ sku: 'A', inventory: '3' }], 'levels.0.inventory'],
    [[{ sku: 'A', inventory: null }], 'levels.0.inventory'],
    [[{ sku: 'A', inventory: 2_000_000_001 }], 'levels.0.inventory'],
    [[{ sku: 'A', inventory: 1e300 }], 'levels.0.inventory'],
    [[{ sku: 'A' }], 'levels.0.inventory'],
    [[{ inventory: 1 }], 'levels.0.sku'],
    [[{ sku: '', inventory: 1 }], 'levels.0.sku'],
    [[{ sku: 'x'.repeat(101), inventory: 1 }], 'levels.0.sku'],
    [
      [
        { sku: 'A', inventory: 2 },
        { sku: 'B', inventory: 2 },
        { sku: 'A', inventory: 3 },
      ],
      'levels.2.sku',
    ],
    [[], 'levels'],
    [{ sku: 'A', inventory: 2 }, 'levels'],
    [Array.from({ length: 5001 }, (_, i) => ({ sku: i === 0 ? 'A' : `S${i}`, inventory: 2 })), 'levels'],
  ];
  for (const [levels, field] of cases) {
    const r = await push(t, shop, levels);
    assert.equal(r.status, 422, `${field}: ${r.text.slice(0, 200)}`);
    assert.equal(r.body.status, 'error');
    assert.ok(r.body.errors?.[field], `${field}: ${JSON.stringify(r.body.errors).slice(0, 200)}`);
  }
  assert.equal((await api('POST', `/api/v3/catalogues/${shop}/inventory`, t.token, {})).status, 422);
  const raw = await http('POST', `/api/v3/catalogues/${shop}/inventory`, {
    token: t.token,
    raw: '{"levels": [',
    headers: { 'content-type': 'application/json' },
  });
  assert.ok(raw.status >= 400 && raw.status < 500, raw.text);
  assert.equal((await productRow(ids.A)).inventory, 1, 'nothing applied');
  assert.equal((await productRow(ids.A)).revision, 1);
  assert.equal(
    Number((await one<{ n: string }>(em(), 'select count(*) as n from stock_movements where account_id = ?', [t.accountId]))!.n),
    0,
  );

  const full = Array.from({ length: 5000 }, (_, i) => ({ sku: i === 0 ? 'A' : `S${i}`, inventory: 2_000_000_000 }));
  const max = await push(t, shop, full);
  assert.equal(max.status, 200, max.text.slice(0, 200));
  assert.deepEqual([max.body.data.derived.length, max.body.data.unknown_skus.length, max.body.data.unchanged], [1, 4999, 0]);
  for (const bad of ['0', 'abc', '99999999999']) {
    assert.equal((await push(t, bad as unknown as number, [{ sku: 'A', inventory: 1 }])).status, 404, bad);
  }
  assert.equal((await movements(t, shop, 'missing')).status, 404);
  assert.equal((await inventory(t, shop, '?page=0')).status, 422);
});

test('tenant isolation: another account’s key finds neither the shop, its stock nor its movements, and cannot move them', async () => {
  const [t, other] = [await newTenant(), await newTenant()];
  const shop = await newShop(t);
  const ids = await addProducts(t, shop, [{ sku: 'A', inventory: 1 }]);
  const otherShop = await newShop(other);
  await addProducts(other, otherShop, [{ sku: 'A', inventory: 1 }]);
  assert.equal((await push(other, shop, [{ sku: 'A', inventory: 9 }])).status, 404);
  assert.equal((await inventory(other, shop)).status, 404);
  assert.equal((await movements(other, shop, 'A')).status, 404);
  assert.equal((await productRow(ids.A)).inventory, 1);
  // The same sku in the caller's own shop is the caller's product, never the other's.
  const own = await push(other, otherShop, [{ sku: 'A', inventory: 9 }]);
  assert.equal(own.body.data.derived[0].inventory, 9);
  assert.equal((await productRow(ids.A)).inventory, 1);
  assert.equal((await inventory(t, shop)).body.data.inventory[0].inventory, 1);
});

test('permissions: reads need catalogue.view, pushes catalogue.manage, and a key without an issuer is refused', async () => {
  const owner = await newTenant();
  const shop = await newShop(owner);
  await addProducts(owner, shop, [{ sku: 'A', inventory: 1 }]);
  const viewer = await admin('POST', `/accounts/${owner.accountId}/users`, {
    email: `viewer-${Date.now()}@example.com`,
    name: 'Viewer',
    permissions: ['communications.catalogue.view'],
  });
  const viewKey = (await admin('POST', `/accounts/${owner.accountId}/keys`, { name: 'view', user_id: viewer.body.data.id })).body.data
    .token;
  assert.equal((await inventory(owner, shop, '', viewKey)).status, 200);
  assert.equal((await movements(owner, shop, 'A', '', viewKey)).status, 200);
  const refused = await push(owner, shop, [{ sku: 'A', inventory: 2 }], viewKey);
  assert.equal(refused.status, 403);
  assert.equal(refused.body.reason, 'permission_denied');
  for (const r of [
    await push(owner, shop, [{ sku: 'A', inventory: 2 }], owner.legacyToken),
    await inventory(owner, shop, '', owner.legacyToken),
    await movements(owner, shop, 'A', '', owner.legacyToken),
  ]) {
    assert.equal(r.status, 403);
    assert.equal(r.body.reason, 'issuer_required');
  }
  assert.deepEqual((await inventory(owner, shop)).body.data.inventory[0].inventory, 1, 'the refused pushes applied nothing');
});

test('low stock: one notice a day per product when available reaches the threshold (event + account notice)', async () => {
  const t = await newTenant();
  const shop = await newShop(t, { lowStockThreshold: 3 });
  const ids = await addProducts(t, shop, [
    { sku: 'A', inventory: 10 },
    { sku: 'B', inventory: 10, reserved: 6 },
    { sku: 'C', inventory: null },
  ]);
  await push(t, shop, [
    { sku: 'A', inventory: 4 },
    { sku: 'B', inventory: 9 },
    { sku: 'C', inventory: 50 },
  ]);
  const events = () =>
    many<{ payload: { sku: string; available: number; threshold: number; product_id: number; catalogue_id: number } }>(
      em(),
      `select payload from events where account_id = ? and kind = 'product.low_stock' order by id`,
      [t.accountId],
    );
  assert.deepEqual(
    (await events()).map((e) => [e.payload.sku, e.payload.available, e.payload.threshold]),
    [['B', 3, 3]],
    'B reached the threshold (9 on hand, 6 held); A and C did not',
  );
  await push(t, shop, [
    { sku: 'A', inventory: 3 },
    { sku: 'B', inventory: 7 },
  ]);
  assert.deepEqual(
    (await events()).map((e) => [e.payload.sku, e.payload.available]),
    [
      ['B', 3],
      ['A', 3],
    ],
    'A reaches it now; B was noticed today already',
  );
  const e = (await events())[1].payload;
  assert.deepEqual([e.product_id, e.catalogue_id], [ids.A, shop]);

  const notices = await api('GET', '/api/v3/notices', t.legacyToken);
  assert.equal(notices.status, 200, notices.text);
  assert.deepEqual(
    notices.body.data.notices.map((n: { kind: string; data: { sku: string } }) => [n.kind, n.data.sku]),
    [
      ['product.low_stock', 'A'],
      ['product.low_stock', 'B'],
    ],
    'newest first; any valid key of the account reads them',
  );
  assert.match(notices.body.data.notices[0].message, /^A \(Product A\) is low on stock: 3 available, threshold 3\.$/);
  assert.equal(notices.body.data.notices[0].read_at, null);
  assert.equal(notices.body.data.pagination.total, 2);

  // The next day (the mark moved back) a change that leaves it low notices it again, once.
  await exec(em(), `update products set low_stock_noticed_on = low_stock_noticed_on - 1 where id = ?`, [ids.B]);
  await exec(em(), `update account_notices set dedupe_key = dedupe_key || ':yesterday' where account_id = ? and data->>'sku' = 'B'`, [
    t.accountId,
  ]);
  await Promise.all([push(t, shop, [{ sku: 'B', inventory: 8 }]), push(t, shop, [{ sku: 'B', inventory: 6 }])]);
  assert.equal((await events()).filter((x) => x.payload.sku === 'B').length, 2, 'racing changes notice it once');

  const operator = await admin('GET', `/accounts/${t.accountId}/notices?kind=product.low_stock&limit=1`);
  assert.equal(operator.status, 200, operator.text);
  assert.equal(operator.body.data.notices.length, 1);
  assert.equal(operator.body.data.pagination.total, 3);
  assert.equal((await admin('GET', `/accounts/999999999/notices`)).status, 404);

  const stranger = await newTenant();
  assert.equal((await api('GET', '/api/v3/notices', stranger.token)).body.data.notices.length, 0, 'notices are the account’s own');
});

test('concurrent pushes of the same counts change each product once (one movement, one revision)', async () => {
  const t = await newTenant();
  const shop = await newShop(t);
  const skus = Array.from({ length: 50 }, (_, i) => `K${i}`);
  const ids = await addProducts(
    t,
    shop,
    skus.map((sku) => ({ sku, inventory: 1 })),
  );
  const levels = skus.map((sku) => ({ sku, inventory: 40 }));
  const answers = await Promise.all(Array.from({ length: 4 }, (_, i) => push(t, shop, i % 2 ? [...levels].reverse() : levels)));
  for (const a of answers) assert.equal(a.status, 200, a.text);
  assert.equal(
    answers.reduce((n, a) => n + a.body.data.derived.length, 0),
    50,
    'each product derived by exactly one push',
  );
  assert.equal(
    answers.reduce((n, a) => n + a.body.data.unchanged, 0),
    150,
  );
  const counts = await many<{ product_id: string; n: string }>(
    em(),
    'select product_id, count(*) as n from stock_movements where account_id = ? group by product_id',
    [t.accountId],
  );
  assert.equal(counts.length, 50);
  assert.ok(counts.every((c) => Number(c.n) === 1));
  assert.equal((await productRow(ids.K7)).revision, 2);
});

test('a shop on platforms owes one push of the changed products, started after the commit', async () => {
  const t = await newTenant();
  const shop = await newShop(t, { channels: ['storefront'] });
  const ids = await addProducts(t, shop, [
    { sku: 'A', inventory: 1 },
    { sku: 'B', inventory: 1 },
    { sku: 'C', inventory: 1 },
  ]);
  const r = await push(t, shop, [
    { sku: 'A', inventory: 2 },
    { sku: 'B', inventory: 1 },
    { sku: 'C', inventory: 0 },
  ]);
  assert.equal(r.status, 200, r.text);
  assert.match(r.body.data.push_id, /^inventory-[0-9a-f-]{36}$/);
  const request = await eventually(
    () =>
      one<{ product_ids: number[]; started_at: Date | null; catalogue_id: number; cause: { kind: string } }>(
        em(),
        'select product_ids, started_at, catalogue_id, cause from product_push_requests where push_id = ?',
        [r.body.data.push_id],
      ),
    (x) => x?.started_at != null,
  );
  assert.ok(request?.started_at, 'started');
  assert.deepEqual(
    [...request!.product_ids].sort((a, b) => a - b),
    [ids.A, ids.C].sort((a, b) => a - b),
    'only the changed products',
  );
  assert.equal(request!.cause.kind, 'inventory_push');
  const none = await push(t, shop, [{ sku: 'A', inventory: 2 }]);
  assert.equal(none.body.data.push_id, null, 'nothing changed, nothing republished');
});

test('MCP: the shop server lists the stock tools and answers them as REST does; notices are on overview', async () => {
  const t = await newTenant();
  const shop = await newShop(t);
  await addProducts(t, shop, [{ sku: 'A', inventory: 1 }]);
  const cred = await admin('POST', `/accounts/${t.accountId}/mcp-credentials`, { name: 'assistant', user_id: t.userId });
  assert.equal(cred.status, 201, cred.text);
  const connect = async (path: string) => {
    const c = new Client({ name: 'inventory-test', version: '1.0.0' });
    await c.connect(
      new StreamableHTTPClientTransport(new URL(`${API_URL}${path}`), {
        requestInit: { headers: { Authorization: `Bearer ${cred.body.data.token}` } },
      }),
    );
    return c;
  };
  const c = await connect('/mcp/v1/shop');
  try {
    const names = (await c.listTools()).tools.map((x) => x.name);
    for (const name of ['push_inventory', 'list_inventory', 'list_stock_movements']) assert.ok(names.includes(name), name);
    // The SDK checks each structuredContent against the tool's output schema.
    const pushed = (await c.callTool({
      name: 'push_inventory',
      arguments: { catalogue: String(shop), levels: [{ sku: 'A', inventory: 5 }] },
    })) as {
      structuredContent: { derived: Array<{ inventory: number }> };
    };
    assert.equal(pushed.structuredContent.derived[0].inventory, 5);
    const listed = (await c.callTool({ name: 'list_inventory', arguments: { catalogue: String(shop), sku: ['A'] } })) as {
      structuredContent: { inventory: Array<{ available: number }> };
    };
    assert.equal(listed.structuredContent.inventory[0].available, 5);
    const moved = (await c.callTool({ name: 'list_stock_movements', arguments: { catalogue: String(shop), sku: 'A' } })) as {
      structuredContent: { movements: unknown[] };
    };
    assert.equal(moved.structuredContent.movements.length, 1);
  } finally {
    await c.close();
  }
  const o = await connect('/mcp/v1/overview');
  try {
    assert.ok((await o.listTools()).tools.some((x) => x.name === 'list_notices'));
  } finally {
    await o.close();
  }
});

test('movements: newest first with their figures, in pages', async () => {
  const t = await newTenant();
  const shop = await newShop(t);
  await addProducts(t, shop, [{ sku: 'A/1 x', inventory: 10, reserved: 2 }]);
  for (const n of [12, 5, 0, 7]) assert.equal((await push(t, shop, [{ sku: 'A/1 x', inventory: n }])).status, 200);
  const all = await movements(t, shop, 'A/1 x');
  assert.equal(all.status, 200, all.text);
  assert.equal(all.body.data.sku, 'A/1 x');
  assert.deepEqual(
    all.body.data.movements.map((m: { quantity: number; inventory_after: number; available_after: number }) => [
      m.quantity,
      m.inventory_after,
      m.available_after,
    ]),
    [
      [7, 7, 5],
      [-5, 0, -2],
      [-7, 5, 3],
      [2, 12, 10],
    ],
  );
  const page = await movements(t, shop, 'A/1 x', '?limit=3&page=2');
  assert.deepEqual(page.body.data.pagination, { current_page: 2, per_page: 3, last_page: 2, total: 4, has_more_pages: false });
  assert.equal(page.body.data.movements[0].quantity, 2);
});

test('a push whose start was lost (recorded, never started) is started by the worker’s reconciler', { timeout: 60_000 }, async () => {
  const t = await newTenant();
  const shop = await newShop(t, { channels: ['storefront'] });
  const ids = await addProducts(t, shop, [{ sku: 'A', inventory: 1 }]);
  const pushId = `inventory-lost-${Date.now()}`;
  await exec(
    em(),
    `insert into product_push_requests (account_id, catalogue_id, push_id, product_ids, cause, created_at)
     values (?, ?, ?, ?::jsonb, '{"kind":"inventory_push"}'::jsonb, now() - interval '1 minute')`,
    [t.accountId, shop, pushId, JSON.stringify([ids.A])],
  );
  const row = await eventually(
    () => one<{ started_at: Date | null }>(em(), 'select started_at from product_push_requests where push_id = ?', [pushId]),
    (x) => x?.started_at != null,
    45_000,
    500,
  );
  assert.ok(row?.started_at, 'the reconciler started it');
});
