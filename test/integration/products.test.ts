import { test } from 'node:test';
import assert from 'node:assert/strict';
import { admin, api, eventually, http, newTenant, sim, type Tenant } from '../support/stack.js';
import { createEndpoint } from '../support/webhooks.js';
import { startReceiver } from '../support/receiver.js';

// Products of a shop: create (issued skus, defaults, derived availability), list, read, PUT, by sku,
// delete; platform refusals (502, nothing half-written); events; bad input; tenant isolation.

const C = '/api/v3/catalogues';
const IMG = 'https://cdn.example.com/p.jpg';

async function createShop(t: Tenant, body: Record<string, unknown> = {}) {
  const r = await api('POST', C, t.token, { name: 'Test shop', ...body });
  assert.equal(r.status, 201, r.text);
  return r.body.data;
}
async function create(t: Tenant, shop: { id: number }, body: Record<string, unknown>) {
  const r = await api('POST', `${C}/${shop.id}/products`, t.token, body);
  assert.equal(r.status, 201, r.text);
  return r.body.data;
}
const count = async (t: Tenant, shop: { id: number }) =>
  (await api('GET', `${C}/${shop.id}/products`, t.token)).body.data.pagination.total as number;
const settled = (t: Tenant, shop: { id: number }, id: number) =>
  eventually(
    () => api('GET', `${C}/${shop.id}/products/${id}`, t.token),
    (r) => r.body.data.sync_status !== 'pending' && r.body.data.sync_status !== 'syncing',
    30_000,
    200,
    `product ${id} past pending and syncing`,
  );

test('create in a shop on no platform: issued skus, defaults, derived availability, brand and category; synced with no listings', async () => {
  const t = await newTenant();
  const shop = await createShop(t, { name: 'Kiosk', sku_prefix: 'KI', default_currency: 'TZS', channels: [] });
  const a = await create(t, shop, { name: 'Chai', price: 1500 });
  assert.deepEqual(
    [a.sku, a.retailer_id, a.currency, a.availability, a.inventory, a.reserved, a.available],
    ['KI-000001', 'KI-000001', 'TZS', 'in stock', null, 0, null],
  );
  assert.deepEqual([a.listings, a.sync_status, a.visibility, a.catalogue_id], [[], 'synced', 'published', shop.id]);
  // A caller-chosen sku that looks issued is skipped by the counter.
  await create(t, shop, { name: 'Chosen', price: 100, sku: 'KI-000002' });
  const b = await create(t, shop, { name: 'Mandazi', price: 300, inventory: 0, brand: ' Mama ', category: 'Snacks', currency: 'usd' });
  assert.deepEqual(
    [b.sku, b.availability, b.brand, b.category, b.currency, b.available],
    ['KI-000003', 'out of stock', 'Mama', 'Snacks', 'USD', 0],
  );
  const c = await create(t, shop, {
    name: 'Juice',
    price: 800,
    inventory: 0,
    availability: 'preorder',
    retailer_id: 'JUICE-1',
    brand: 'Mama',
  });
  assert.deepEqual([c.sku, c.retailer_id, c.availability, c.brand], ['JUICE-1', 'JUICE-1', 'preorder', 'Mama'], 'explicit wins');
  const d = await create(t, shop, {
    name: 'Full',
    price: 0,
    sale_price: 0,
    description: 'd'.repeat(5000),
    image_url: 'https://cdn.example.com/' + 'a'.repeat(2000),
    condition: 'refurbished',
    inventory: 7,
    visibility: 'staging',
    product_type: 't'.repeat(750),
    brand: 'b'.repeat(255),
    category: 'c'.repeat(255),
  });
  assert.deepEqual([d.condition, d.visibility, d.inventory, d.available, d.product_type.length], ['refurbished', 'staging', 7, 7, 750]);

  const backorders = await createShop(t, { name: 'Backorders', channels: [], allow_backorders: true });
  assert.equal((await create(t, backorders, { name: 'Later', price: 1, inventory: 0 })).availability, 'available for order');
  // Without a shop currency the account's currency applies.
  assert.equal((await create(t, backorders, { name: 'Cur', price: 1 })).currency, 'USD');
});

test('list: sorted by name, search over name and retailer_id in any case, availability filter, listings on each, pages of 25', async () => {
  const t = await newTenant();
  const shop = await createShop(t, { channels: [] });
  for (const [name, sku, inventory] of [
    ['banana', 'FR-2', 5],
    ['Apple', 'FR-1', 0],
    ['cherry', 'XX-9', null],
    ['Date 50%', 'FR-3', 1],
  ] as const)
    await create(t, shop, { name, sku, price: 100, inventory });
  const list = await api('GET', `${C}/${shop.id}/products`, t.token);
  assert.equal(list.status, 200);
  assert.deepEqual(
    list.body.data.products.map((p: any) => p.name),
    ['Apple', 'Date 50%', 'banana', 'cherry'].sort((x, y) => (x < y ? -1 : x > y ? 1 : 0)),
    'sorted by name (the database collation decides case)',
  );
  assert.ok(list.body.data.products.every((p: any) => Array.isArray(p.listings) && p.sync_status === 'synced'));
  assert.deepEqual(list.body.data.pagination, { current_page: 1, per_page: 25, last_page: 1, total: 4, has_more_pages: false });
  const names = async (q: string) =>
    (await api('GET', `${C}/${shop.id}/products?${q}`, t.token)).body.data.products.map((p: any) => p.name);
  assert.deepEqual(await names('search=APPLE'), ['Apple']);
  assert.deepEqual(await names('search=xx-'), ['cherry'], 'retailer_id, any case');
  assert.deepEqual(await names('search=50%25'), ['Date 50%'], 'wildcards are text');
  assert.deepEqual(await names(`availability=${encodeURIComponent('out of stock')}`), ['Apple']);
  assert.equal((await api('GET', `${C}/${shop.id}/products?availability=sold`, t.token)).status, 422);
  assert.equal((await api('GET', `${C}/${shop.id}/products?limit=2&per_page=3`, t.token)).body.data.products.length, 2);
  assert.equal((await api('GET', `${C}/${shop.id}/products?limit=0`, t.token)).body.data.pagination.per_page, 25);
  assert.equal((await api('GET', `${C}/${shop.id}/products?per_page=500`, t.token)).body.data.pagination.per_page, 100);
});

test('duplicates and sku rules: duplicate sku or retailer_id is 422 naming the field; sku and retailer_id must agree', async () => {
  const t = await newTenant();
  const shop = await createShop(t, { channels: [] });
  await create(t, shop, { name: 'One', price: 1, sku: 'DUP-1' });
  const bySku = await api('POST', `${C}/${shop.id}/products`, t.token, { name: 'Two', price: 1, sku: 'DUP-1' });
  assert.equal(bySku.status, 422);
  assert.ok(bySku.body.errors.sku, bySku.text);
  const byRetailer = await api('POST', `${C}/${shop.id}/products`, t.token, { name: 'Two', price: 1, retailer_id: 'DUP-1' });
  assert.equal(byRetailer.status, 422);
  assert.ok(byRetailer.body.errors.retailer_id, byRetailer.text);
  const mismatch = await api('POST', `${C}/${shop.id}/products`, t.token, { name: 'Two', price: 1, sku: 'A', retailer_id: 'B' });
  assert.equal(mismatch.status, 422);
  assert.ok(mismatch.body.errors.retailer_id);
  // Concurrent creates of one sku: one wins, the others are 422, never 500.
  const racing = await Promise.all(
    Array.from({ length: 6 }, () => api('POST', `${C}/${shop.id}/products`, t.token, { name: 'Race', price: 1, sku: 'RACE' })),
  );
  assert.deepEqual(racing.map((r) => r.status).sort(), [201, 422, 422, 422, 422, 422]);
  // Concurrent issued skus are all distinct.
  const issued = await Promise.all(Array.from({ length: 8 }, (_, i) => create(t, shop, { name: `Issued ${i}`, price: 1 })));
  assert.equal(new Set(issued.map((p) => p.sku)).size, 8);
  assert.equal(await count(t, shop), 10);
  // Another shop may use the same sku.
  const other = await createShop(t, { channels: [] });
  assert.equal((await create(t, other, { name: 'Same sku', price: 1, sku: 'DUP-1' })).sku, 'DUP-1');
});

test('bad input: malformed rows, bad prices, unknown fields, wrong content types: a clear 4xx, never a 500, never a half-written product', async () => {
  const t = await newTenant();
  const shop = await createShop(t, { channels: [] });
  const P = `${C}/${shop.id}/products`;
  const cases: Array<[unknown, string]> = [
    [{ price: 100 }, 'name'],
    [{ name: 'x' }, 'price'],
    [{ name: '', price: 1 }, 'name'],
    [{ name: '   ', price: 1 }, 'name'],
    [{ name: 'n'.repeat(101), price: 1 }, 'name'],
    [{ name: 'A', price: -1 }, 'price'],
    [{ name: 'A', price: 12.5 }, 'price'],
    [{ name: 'A', price: 'abc' }, 'price'],
    [{ name: 'A', price: '100' }, 'price'],
    [{ name: 'A', price: null }, 'price'],
    [{ name: 'A', price: 1e300 }, 'price'],
    [{ name: 'A', price: 1, sale_price: -5 }, 'sale_price'],
    [{ name: 'A', price: 1, sale_price: 1.25 }, 'sale_price'],
    [{ name: 'A', price: 1, inventory: -1 }, 'inventory'],
    [{ name: 'A', price: 1, inventory: 2.5 }, 'inventory'],
    [{ name: 'A', price: 1, currency: 'US' }, 'currency'],
    [{ name: 'A', price: 1, availability: 'sold out' }, 'availability'],
    [{ name: 'A', price: 1, condition: 'broken' }, 'condition'],
    [{ name: 'A', price: 1, visibility: 'hidden' }, 'visibility'],
    [{ name: 'A', price: 1, image_url: 'not a url' }, 'image_url'],
    [{ name: 'A', price: 1, image_url: 'https://x.example/' + 'a'.repeat(2048) }, 'image_url'],
    [{ name: 'A', price: 1, description: 'd'.repeat(5001) }, 'description'],
    [{ name: 'A', price: 1, brand: 'b'.repeat(256) }, 'brand'],
    [{ name: 'A', price: 1, category: 'c'.repeat(256) }, 'category'],
    [{ name: 'A', price: 1, product_type: 't'.repeat(751) }, 'product_type'],
    [{ name: 'A', price: 1, sku: 's'.repeat(101) }, 'sku'],
    [{ name: 'A', price: 1, retailer_id: 'r'.repeat(101) }, 'retailer_id'],
    [{ name: 'A', price: 1, colour: 'red' }, 'colour'],
    [{ name: 'A\u0000', price: 1 }, 'name'],
  ];
  for (const [body, field] of cases) {
    const r = await api('POST', P, t.token, body);
    assert.equal(r.status, 422, `${JSON.stringify(body).slice(0, 80)} → ${r.status} ${r.text.slice(0, 200)}`);
    assert.equal(r.body.status, 'error');
    assert.ok(r.body.errors?.[field], `${field}: ${r.text.slice(0, 300)}`);
  }
  const raw = (raw: string, type: string) => http('POST', P, { token: t.token, raw, headers: { 'content-type': type } });
  assert.equal((await raw('name=A&price=1', 'application/x-www-form-urlencoded')).status, 415);
  assert.equal((await raw('name,price\nA,1', 'text/csv')).status, 415);
  assert.equal((await raw('{"name":"A","price":', 'application/json')).status, 400);
  assert.equal((await raw('[{"name":"A","price":1}]', 'application/json')).status, 400);
  assert.equal((await raw('"A"', 'application/json')).status, 400);
  assert.equal(await count(t, shop), 0, 'nothing was written');

  const p = await create(t, shop, { name: 'Kept', price: 100, sku: 'KEPT' });
  for (const [body, field] of [
    [{ price: -1 }, 'price'],
    [{ price: 'abc' }, 'price'],
    [{ retailer_id: 'NEW' }, 'retailer_id'],
    [{ product_type: 'x' }, 'product_type'],
    [{ visibility: 'staging' }, 'visibility'],
    [{ name: 'Ok', unknown: 1 }, 'unknown'],
  ] as const) {
    const r = await api('PUT', `${P}/${p.id}`, t.token, body);
    assert.equal(r.status, 422, JSON.stringify(body));
    assert.ok(r.body.errors[field], r.text);
  }
  assert.deepEqual((await api('GET', `${P}/${p.id}`, t.token)).body.data, p, 'untouched by refused writes');
  for (const ref of ['abc', '0', '99999999999999999999', '1.5']) assert.equal((await api('GET', `${P}/${ref}`, t.token)).status, 404, ref);
  assert.equal((await api('GET', `${P}/by-sku/${'s'.repeat(101)}`, t.token)).status, 404);
});

test('PUT: fields sent change, the rest stay; availability re-derived unless explicit; the sku may change until the product is live', async () => {
  const t = await newTenant();
  const shop = await createShop(t, { channels: [] });
  const P = `${C}/${shop.id}/products`;
  const p = await create(t, shop, { name: 'Soap', price: 500, inventory: 3, brand: 'Clean', description: 'Bar' });
  const u = await api('PUT', `${P}/${p.id}`, t.token, { price: 550, inventory: 0, category: 'Home' });
  assert.equal(u.status, 200, u.text);
  assert.deepEqual(
    [u.body.data.price, u.body.data.inventory, u.body.data.availability, u.body.data.category, u.body.data.brand, u.body.data.description],
    [550, 0, 'out of stock', 'Home', 'Clean', 'Bar'],
  );
  const explicit = await api('PUT', `${P}/${p.id}`, t.token, { availability: 'discontinued', inventory: 10 });
  assert.equal(explicit.body.data.availability, 'discontinued');
  assert.equal((await api('PUT', `${P}/${p.id}`, t.token, { inventory: 4 })).body.data.availability, 'discontinued', 'explicit kept');
  assert.equal(
    (await api('PUT', `${P}/${p.id}`, t.token, { availability: null })).body.data.availability,
    'in stock',
    'null follows the count',
  );
  const cleared = await api('PUT', `${P}/${p.id}`, t.token, { brand: null, description: null, sale_price: 100 });
  assert.deepEqual([cleared.body.data.brand, cleared.body.data.description, cleared.body.data.sale_price], [null, null, 100]);
  const renamed = await api('PUT', `${P}/${p.id}`, t.token, { sku: 'SOAP-1' });
  assert.deepEqual(
    [renamed.status, renamed.body.data.sku, renamed.body.data.retailer_id],
    [200, 'SOAP-1', 'SOAP-1'],
    'not live anywhere yet',
  );
  await create(t, shop, { name: 'Other', price: 1, sku: 'TAKEN' });
  const taken = await api('PUT', `${P}/${p.id}`, t.token, { sku: 'TAKEN' });
  assert.equal(taken.status, 422);
  assert.ok(taken.body.errors.sku);
  const same = await api('PUT', `${P}/${p.id}`, t.token, { name: 'Soap' });
  assert.equal(same.status, 200, 'a PUT that changes nothing answers the product');
});

test('by sku: PUT creates when absent and touches only the fields sent; GET and DELETE; the body sku must equal the path', async () => {
  const t = await newTenant();
  const shop = await createShop(t, { channels: [] });
  const S = `${C}/${shop.id}/products/by-sku`;
  const missing = await api('PUT', `${S}/TEA-1`, t.token, { description: 'no name' });
  assert.equal(missing.status, 422);
  assert.deepEqual(Object.keys(missing.body.errors).sort(), ['name', 'price']);
  const made = await api('PUT', `${S}/TEA-1`, t.token, { name: 'Tea', price: 200, product_type: 'drink', visibility: 'staging' });
  assert.equal(made.status, 200, made.text);
  assert.deepEqual([made.body.data.sku, made.body.data.product_type, made.body.data.visibility], ['TEA-1', 'drink', 'staging']);
  const touched = await api('PUT', `${S}/TEA-1`, t.token, { price: 250, sku: 'TEA-1', retailer_id: 'TEA-1', visibility: 'staging' });
  assert.equal(touched.status, 200, touched.text);
  assert.deepEqual([touched.body.data.name, touched.body.data.price, touched.body.data.id], ['Tea', 250, made.body.data.id]);
  const otherSku = await api('PUT', `${S}/TEA-1`, t.token, { sku: 'TEA-2' });
  assert.equal(otherSku.status, 422, otherSku.text);
  assert.ok(otherSku.body.errors.sku);
  assert.equal((await api('PUT', `${S}/TEA-1`, t.token, { retailer_id: 'TEA-2' })).status, 422);
  assert.equal((await api('PUT', `${S}/TEA-1`, t.token, { product_type: 'food' })).status, 422, 'create only');
  assert.equal((await api('PUT', `${S}/TEA-1`, t.token, { visibility: 'published' })).status, 422, 'create only');
  assert.equal((await api('PUT', `${S}/${'s'.repeat(101)}`, t.token, { name: 'Long', price: 1 })).status, 422);
  const spaced = await api('PUT', `${S}/${encodeURIComponent('ICE CREAM/2')}`, t.token, { name: 'Ice', price: 1 });
  assert.equal(spaced.body?.data?.sku, 'ICE CREAM/2', spaced.text);
  assert.equal((await api('GET', `${S}/${encodeURIComponent('ICE CREAM/2')}`, t.token)).body.data.id, spaced.body.data.id);

  const read = await api('GET', `${S}/TEA-1`, t.token);
  assert.deepEqual(read.body.data, touched.body.data);
  assert.equal((await api('GET', `${S}/tea-1`, t.token)).status, 404, 'skus are exact');
  const del = await api('DELETE', `${S}/TEA-1`, t.token);
  assert.deepEqual([del.status, del.body.data], [200, { id: made.body.data.id, sku: 'TEA-1', deleted: true }]);
  assert.equal((await api('GET', `${S}/TEA-1`, t.token)).status, 404);
  assert.equal((await api('DELETE', `${S}/TEA-1`, t.token)).status, 404, 'a second delete is 404');
  const byId = await create(t, shop, { name: 'By id', price: 1 });
  assert.equal((await api('DELETE', `${C}/${shop.id}/products/${byId.id}`, t.token)).body.data.deleted, true);
  assert.equal((await api('GET', `${C}/${shop.id}/products/${byId.id}`, t.token)).status, 404);
});

test('on the platforms: listings per channel, blocked without an image, synced once pushed; the sku frozen once live', async () => {
  const t = await newTenant();
  const shop = await createShop(t, { name: 'Live shop', channels: ['whatsapp', 'storefront'], sku_prefix: 'LV' });
  const p = await create(t, shop, { name: 'Kanga', price: 12000, image_url: IMG, inventory: 4 });
  assert.deepEqual(
    p.listings.map((l: any) => l.platform),
    ['storefront', 'whatsapp'],
  );
  const live = await settled(t, shop, p.id);
  assert.equal(live.body.data.sync_status, 'synced', JSON.stringify(live.body.data.listings));
  const items = await sim('GET', `/_sim/catalogue/catalogs/${shop.meta_catalogue_id}/items`);
  assert.ok(
    items.body.items.some((i: any) => i.retailer_id === p.sku),
    `the item is in the provider catalogue under its sku: ${items.text.slice(0, 500)} ${JSON.stringify(live.body.data)}`,
  );
  const frozen = await api('PUT', `${C}/${shop.id}/products/${p.id}`, t.token, { sku: 'LV-NEW' });
  assert.equal(frozen.status, 409, frozen.text);
  assert.equal(frozen.body.reason, 'sku_frozen');
  assert.ok(frozen.body.errors.sku);

  const noImage = await create(t, shop, { name: 'No picture', price: 500 });
  const blocked = await settled(t, shop, noImage.id);
  const wa = blocked.body.data.listings.find((l: any) => l.platform === 'whatsapp');
  assert.deepEqual([wa.state, blocked.body.data.sync_status], ['blocked', 'blocked']);
  assert.match(wa.problem, /image/);

  const changed = await api('PUT', `${C}/${shop.id}/products/${p.id}`, t.token, { price: 11000, name: 'Kanga (blue)' });
  assert.equal(changed.status, 200, changed.text);
  await settled(t, shop, p.id);
  const after = await sim('GET', `/_sim/catalogue/catalogs/${shop.meta_catalogue_id}/items`);
  const item = after.body.items.find((i: any) => i.retailer_id === p.sku);
  assert.equal(item.name, 'Kanga (blue)');

  const gone = await api('DELETE', `${C}/${shop.id}/products/by-sku/${p.sku}`, t.token);
  assert.equal(gone.status, 200, gone.text);
  const removed = await eventually(
    () => sim('GET', `/_sim/catalogue/catalogs/${shop.meta_catalogue_id}/items`),
    (r) => !r.body.items.some((i: any) => i.retailer_id === p.sku),
    20_000,
  );
  assert.ok(!removed.body.items.some((i: any) => i.retailer_id === p.sku), 'removed from the platform, then from the shop');
});

test('a platform refusal on create, update or delete is 502 in the v3 envelope, with nothing half-written', async () => {
  const t = await newTenant();
  const shop = await createShop(t, { name: 'Refusing shop', channels: ['whatsapp'] });
  const P = `${C}/${shop.id}/products`;
  const refuse = () =>
    sim('POST', '/_sim/catalogue/faults', {
      kind: 'refuse_batch',
      catalogId: shop.meta_catalogue_id,
      count: 1,
      message: 'Catalog is restricted',
    });

  await refuse();
  const r = await api('POST', P, t.token, { name: 'Refused', price: 100, image_url: IMG, sku: 'REF-1', brand: 'Only here' });
  assert.equal(r.status, 502, r.text);
  assert.deepEqual([r.body.status, r.body.reason], ['error', 'provider_refused']);
  assert.match(r.body.message, /refused/);
  assert.equal(await count(t, shop), 0, 'the product is not kept');
  assert.equal((await api('GET', `${P}/by-sku/REF-1`, t.token)).status, 404);

  const p = await create(t, shop, { name: 'Kept', price: 100, image_url: IMG, sku: 'REF-1' });
  assert.equal(p.sku, 'REF-1', 'the refused create left nothing behind: the sku is free');
  const before = (await settled(t, shop, p.id)).body.data;
  await refuse();
  const u = await api('PUT', `${P}/${p.id}`, t.token, { price: 999, name: 'Changed', brand: 'New brand' });
  assert.equal(u.status, 502, u.text);
  const now = (await api('GET', `${P}/${p.id}`, t.token)).body.data;
  assert.deepEqual(
    [now.name, now.price, now.brand, now.sync_status],
    [before.name, before.price, before.brand, before.sync_status],
    'the previous values are back',
  );
  const retried = await api('PUT', `${P}/${p.id}`, t.token, { price: 999, name: 'Changed' });
  assert.equal(retried.status, 200, `the same change goes through once the platform accepts: ${retried.text}`);
  assert.deepEqual([retried.body.data.name, retried.body.data.price], ['Changed', 999]);

  const byS = await api('PUT', `${P}/by-sku/REF-2`, t.token, { name: 'New by sku', price: 5, image_url: IMG });
  assert.equal(byS.status, 200);
  await refuse();
  const d = await api('DELETE', `${P}/${p.id}`, t.token);
  assert.equal(d.status, 502, d.text);
  assert.equal((await api('GET', `${P}/${p.id}`, t.token)).status, 200, 'the product is kept');
  // A delete sent in the instant the refused removal's workflow is finishing joins it and reads its answer; a moment later it runs anew.
  const again = await eventually(
    () => api('DELETE', `${P}/${p.id}`, t.token),
    (r) => r.status !== 502,
    5_000,
  );
  assert.equal(again.status, 200, `the next delete goes through: ${again.text}`);
});

test('events: product.created, product.updated (with the changed fields) and product.deleted, signed to the receiver', async () => {
  const t = await newTenant();
  const receiver = await startReceiver();
  try {
    await createEndpoint(t.accountId, receiver.url, ['product.*']);
    const shop = await createShop(t, { channels: [] });
    const p = await create(t, shop, { name: 'Evented', price: 10, sku: 'EV-1' });
    await api('PUT', `${C}/${shop.id}/products/${p.id}`, t.token, { price: 20 });
    await api('DELETE', `${C}/${shop.id}/products/${p.id}`, t.token);
    const got = await eventually(
      async () => receiver.got.map((g) => g.json),
      (list) => list.length >= 3,
      30_000,
    );
    const byKind = new Map(got.map((e: any) => [e.event, e]));
    const created = byKind.get('product.created');
    assert.deepEqual(
      [created.product_id, created.catalogue_id, created.sku, created.retailer_id, created.price],
      [p.id, shop.id, 'EV-1', 'EV-1', 10],
    );
    assert.deepEqual([byKind.get('product.updated').price, byKind.get('product.updated').changed], [20, ['price']]);
    assert.equal(byKind.get('product.deleted').product_id, p.id);
    for (const g of receiver.got) {
      assert.ok(g.headers['x-signature'] && g.headers['x-signature-v2'], 'signed');
      assert.match(g.json.event_id, /^evt_/);
    }
    const events = await admin('GET', `/accounts/${t.accountId}/events?kind=product.created`);
    assert.equal(events.body.data.length, 1);
  } finally {
    await receiver.close();
  }
});

test('tenant isolation on every path: another account’s key finds neither the shop nor its products, and changes nothing', async () => {
  const owner = await newTenant();
  const other = await newTenant();
  const shop = await createShop(owner, { channels: [] });
  const p = await create(owner, shop, { name: 'Mine', price: 10, sku: 'MINE' });
  const P = `${C}/${shop.id}/products`;
  const calls: Array<[string, string, unknown?]> = [
    ['GET', `${C}/${shop.id}`],
    ['PATCH', `${C}/${shop.id}`, { name: 'x' }],
    ['GET', P],
    ['POST', P, { name: 'x', price: 1 }],
    ['GET', `${P}/${p.id}`],
    ['PUT', `${P}/${p.id}`, { price: 1 }],
    ['DELETE', `${P}/${p.id}`],
    ['GET', `${P}/by-sku/MINE`],
    ['PUT', `${P}/by-sku/MINE`, { price: 1 }],
    ['PUT', `${P}/by-sku/NEW`, { name: 'x', price: 1 }],
    ['DELETE', `${P}/by-sku/MINE`],
  ];
  for (const [method, path, body] of calls) {
    const r = await api(method, path, other.token, body);
    assert.equal(r.status, 404, `${method} ${path} → ${r.status}`);
    assert.equal(r.body.data, undefined);
  }
  // The other tenant's own shop cannot reach this product either.
  const theirs = await createShop(other, { channels: [] });
  assert.equal((await api('GET', `${C}/${theirs.id}/products/${p.id}`, other.token)).status, 404);
  assert.equal((await api('PUT', `${C}/${theirs.id}/products/${p.id}`, other.token, { price: 1 })).status, 404);
  assert.equal((await api('DELETE', `${C}/${theirs.id}/products/${p.id}`, other.token)).status, 404);
  assert.equal((await api('GET', `${C}/${theirs.id}/products/by-sku/MINE`, other.token)).status, 404);
  // A product of another shop of the same account is not found through this shop.
  const second = await createShop(owner, { channels: [] });
  assert.equal((await api('GET', `${C}/${second.id}/products/${p.id}`, owner.token)).status, 404);
  assert.deepEqual((await api('GET', `${P}/${p.id}`, owner.token)).body.data, p, 'unchanged');
  assert.equal(await count(owner, shop), 1);
  assert.equal((await api('GET', `${C}/${shop.id}/products`, owner.legacyToken)).status, 403, 'legacy keys are refused');
  const viewer = await newTenant({ permissions: ['communications.catalogue.view'] });
  assert.equal((await api('POST', `${C}/1/products`, viewer.token, { name: 'x', price: 1 })).status, 403, 'manage needed to write');
});

test('MCP: every catalogue operation is a tool of the shop server', async () => {
  const t = await newTenant();
  const cred = await admin('POST', `/accounts/${t.accountId}/mcp-credentials`, { name: 'shop assistant', user_id: t.userId });
  const rpc = (method: string, params: unknown) =>
    http('POST', '/mcp/v1/shop', {
      token: cred.body.data.token,
      raw: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' },
    });
  const listed = await rpc('tools/list', {});
  const names = listed.body.result.tools.map((x: any) => x.name);
  for (const n of [
    'list_catalogues',
    'create_catalogue',
    'get_catalogue',
    'update_catalogue',
    'list_products',
    'create_product',
    'get_product',
    'update_product',
    'delete_product',
    'get_product_by_sku',
    'put_product_by_sku',
    'delete_product_by_sku',
  ])
    assert.ok(names.includes(n), `${n} on the shop server`);
  const made = await rpc('tools/call', { name: 'create_catalogue', arguments: { name: 'Via MCP', channels: [] } });
  const shop = made.body.result.structuredContent;
  assert.equal(shop.name, 'Via MCP', JSON.stringify(made.body));
  const product = await rpc('tools/call', {
    name: 'put_product_by_sku',
    arguments: { catalogue: String(shop.id), product_sku: 'M-1', name: 'Tool', price: 5 },
  });
  assert.equal(product.body.result.structuredContent.sku, 'M-1', JSON.stringify(product.body));
  const bad = await rpc('tools/call', { name: 'create_product', arguments: { catalogue: String(shop.id), name: 'x', price: -1 } });
  assert.equal(bad.body.result.isError, true);
  const manifest = await http('GET', '/api-docs/mcp.json');
  const tool = manifest.body.tools.find((x: any) => x.name === 'create_product');
  assert.deepEqual([tool.permission, tool.scope, tool.elevation], ['communications.catalogue.manage', 'mcp:commerce', 'mcp:write']);
});
