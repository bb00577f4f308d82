import { test } from 'node:test';
import assert from 'node:assert/strict';
import { api, eventually, http, newTenant, sim, type Tenant } from '../support/stack.js';

// Shops (the contract's catalogues): create with the chat provider's catalogue, list, read, settings.

const C = '/api/v3/catalogues';
async function createShop(t: Tenant, body: Record<string, unknown>) {
  const r = await api('POST', C, t.token, body);
  assert.equal(r.status, 201, r.text);
  return r.body.data;
}

test('create: defaults, the provider catalogue id stored in meta_catalogue_id, read back, sku_prefix from the name', async () => {
  const t = await newTenant();
  const shop = await createShop(t, { name: '  Mama Ntilie Foods ' });
  assert.equal(typeof shop.id, 'number');
  assert.equal(shop.name, 'Mama Ntilie Foods');
  assert.deepEqual(shop.channels, ['whatsapp']);
  assert.deepEqual(
    [shop.stock_policy, shop.source_of_truth, shop.reservation_ttl_hours, shop.low_stock_threshold, shop.allow_backorders],
    ['external', 'api', 48, null, false],
  );
  assert.equal(shop.sku_prefix, 'MAMA');
  assert.equal(shop.products_count, 0);
  assert.match(shop.meta_catalogue_id, /^\d+$/, 'the provider’s catalogue id');
  assert.notEqual(shop.meta_catalogue_id, String(shop.id), 'distinct from the local id');
  const at = await sim('GET', '/_sim/catalogue/catalogs');
  assert.ok(
    at.body.catalogs.some((c: any) => c.id === shop.meta_catalogue_id && c.name === 'Mama Ntilie Foods'),
    'the catalogue exists at the provider',
  );

  const full = await createShop(t, {
    name: 'Duka',
    default_currency: 'tzs',
    sku_prefix: 'DK',
    vertical: 'commerce',
    description: 'Corner shop',
    stock_policy: 'svc',
    source_of_truth: 'platform',
    reservation_ttl_hours: 12,
    low_stock_threshold: 3,
    allow_backorders: true,
    channels: ['storefront', 'whatsapp'],
  });
  assert.deepEqual(
    [full.default_currency, full.sku_prefix, full.vertical, full.stock_policy, full.source_of_truth, full.reservation_ttl_hours],
    ['TZS', 'DK', 'commerce', 'svc', 'platform', 12],
  );
  assert.deepEqual([full.low_stock_threshold, full.allow_backorders, full.channels], [3, true, ['storefront', 'whatsapp']]);
  const read = await api('GET', `${C}/${full.id}`, t.token);
  assert.equal(read.status, 200);
  assert.deepEqual(read.body.data, full);
});

test('list: page-number pages of 25 by default, limit wins over per_page, cap 100, nonpositive reads as the default; newest first', async () => {
  const t = await newTenant();
  const made = [];
  for (let i = 0; i < 3; i++) made.push(await createShop(t, { name: `Shop ${i}`, channels: [] }));
  const list = await api('GET', C, t.token);
  assert.equal(list.status, 200);
  assert.deepEqual(list.body.data.pagination, { current_page: 1, per_page: 25, last_page: 1, total: 3, has_more_pages: false });
  assert.deepEqual(
    list.body.data.catalogues.map((c: any) => c.id),
    made.map((c) => c.id).reverse(),
  );
  assert.deepEqual(list.body.data.catalogues[0].channels, []);
  const limited = await api('GET', `${C}?per_page=1&limit=2`, t.token);
  assert.deepEqual([limited.body.data.catalogues.length, limited.body.data.pagination.last_page], [2, 2]);
  assert.equal((await api('GET', `${C}?per_page=2&page=2`, t.token)).body.data.catalogues.length, 1);
  assert.equal((await api('GET', `${C}?limit=1000`, t.token)).body.data.pagination.per_page, 100);
  for (const q of ['limit=0', 'limit=-5', 'per_page=0', 'per_page=-1'])
    assert.equal((await api('GET', `${C}?${q}`, t.token)).body.data.pagination.per_page, 25, q);
  assert.equal((await api('GET', `${C}?page=0`, t.token)).body.data.pagination.current_page, 1);
  assert.equal((await api('GET', `${C}?limit=abc`, t.token)).status, 422);
});

test('update: any setting but sku_prefix; only what is sent changes', async () => {
  const t = await newTenant();
  const shop = await createShop(t, { name: 'Settings', channels: [], sku_prefix: 'ST' });
  const r = await api('PATCH', `${C}/${shop.id}`, t.token, {
    name: 'Settings 2',
    stock_policy: 'svc',
    reservation_ttl_hours: 72,
    low_stock_threshold: 5,
    allow_backorders: true,
    default_currency: 'kes',
  });
  assert.equal(r.status, 200, r.text);
  assert.deepEqual(
    [r.body.data.name, r.body.data.stock_policy, r.body.data.reservation_ttl_hours, r.body.data.low_stock_threshold],
    ['Settings 2', 'svc', 72, 5],
  );
  assert.deepEqual([r.body.data.allow_backorders, r.body.data.default_currency, r.body.data.sku_prefix], [true, 'KES', 'ST']);
  assert.equal(r.body.data.source_of_truth, 'api', 'untouched');
  const cleared = await api('PATCH', `${C}/${shop.id}`, t.token, { low_stock_threshold: null, description: 'Now described' });
  assert.deepEqual([cleared.body.data.low_stock_threshold, cleared.body.data.description], [null, 'Now described']);

  const prefix = await api('PATCH', `${C}/${shop.id}`, t.token, { sku_prefix: 'NEW' });
  assert.equal(prefix.status, 422);
  assert.deepEqual(prefix.body.errors, { sku_prefix: ['The sku prefix is accepted on create only.'] });
  assert.equal((await api('GET', `${C}/${shop.id}`, t.token)).body.data.sku_prefix, 'ST');
});

test('update: a channel added publishes the products there; allow_backorders re-derives availability that follows the count', async () => {
  const t = await newTenant();
  const shop = await createShop(t, { name: 'Growing', channels: [] });
  const P = `${C}/${shop.id}/products`;
  const zero = (await api('POST', P, t.token, { name: 'Zero', price: 100, inventory: 0 })).body.data;
  const chosen = (await api('POST', P, t.token, { name: 'Chosen', price: 100, inventory: 0, availability: 'preorder' })).body.data;
  assert.deepEqual([zero.availability, zero.listings, zero.sync_status], ['out of stock', [], 'synced']);

  const r = await api('PATCH', `${C}/${shop.id}`, t.token, { channels: ['storefront'], allow_backorders: true });
  assert.equal(r.status, 200, r.text);
  assert.deepEqual(r.body.data.channels, ['storefront']);
  const after = await eventually(
    () => api('GET', `${P}/${zero.id}`, t.token),
    (x) => x.body.data.sync_status === 'synced' && x.body.data.listings.length === 1,
    20_000,
  );
  assert.deepEqual(
    after.body.data.listings.map((l: any) => [l.platform, l.state]),
    [['storefront', 'synced']],
  );
  assert.equal(after.body.data.availability, 'available for order');
  assert.equal((await api('GET', `${P}/${chosen.id}`, t.token)).body.data.availability, 'preorder', 'an explicit choice stays');
  const back = await api('PATCH', `${C}/${shop.id}`, t.token, { allow_backorders: false });
  assert.equal(back.body.data.allow_backorders, false);
  assert.equal((await api('GET', `${P}/${zero.id}`, t.token)).body.data.availability, 'out of stock');
});

test('bad input: 4xx in the v3 envelope, never a 500, nothing created', async () => {
  const t = await newTenant();
  const bodies: Array<[Record<string, unknown>, string]> = [
    [{}, 'name'],
    [{ name: '' }, 'name'],
    [{ name: '   ' }, 'name'],
    [{ name: 'x'.repeat(101) }, 'name'],
    [{ name: 5 }, 'name'],
    [{ name: 'A', stock_policy: 'ours' }, 'stock_policy'],
    [{ name: 'A', source_of_truth: 'sheet' }, 'source_of_truth'],
    [{ name: 'A', reservation_ttl_hours: 0 }, 'reservation_ttl_hours'],
    [{ name: 'A', reservation_ttl_hours: 1.5 }, 'reservation_ttl_hours'],
    [{ name: 'A', default_currency: 'dollars' }, 'default_currency'],
    [{ name: 'A', channels: ['telegram'] }, 'channels.0'],
    [{ name: 'A', channels: ['whatsapp', 'whatsapp'] }, 'channels'],
    [{ name: 'A', channels: 'whatsapp' }, 'channels'],
    [{ name: 'A', sku_prefix: 'has space' }, 'sku_prefix'],
    [{ name: 'A', sku_prefix: 'P'.repeat(17) }, 'sku_prefix'],
    [{ name: 'A', low_stock_threshold: -1 }, 'low_stock_threshold'],
    [{ name: 'A', tenant_id: 1 }, 'tenant_id'],
  ];
  for (const [body, field] of bodies) {
    const r = await api('POST', C, t.token, body);
    assert.equal(r.status, 422, JSON.stringify(body));
    assert.equal(r.body.status, 'error');
    assert.ok(r.body.errors?.[field], `${JSON.stringify(body)} → ${r.text}`);
  }
  const form = await http('POST', C, { token: t.token, raw: 'name=A', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
  assert.equal(form.status, 415);
  const broken = await http('POST', C, { token: t.token, raw: '{"name":', headers: { 'content-type': 'application/json' } });
  assert.equal(broken.status, 400);
  assert.equal((await api('POST', C, t.token, [{ name: 'A' }])).status, 400, 'an array is not a shop');
  assert.equal((await api('GET', C, t.token)).body.data.pagination.total, 0, 'nothing was created');
  for (const ref of ['abc', '0', '-1', '99999999999', '1.5']) assert.equal((await api('GET', `${C}/${ref}`, t.token)).status, 404, ref);
});

test('issuer permissions: legacy keys refused, view may read, manage may write; another tenant’s shop is 404', async () => {
  const owner = await newTenant();
  const shop = await createShop(owner, { name: 'Guarded', channels: [] });
  const legacy = await api('GET', C, owner.legacyToken);
  assert.equal(legacy.status, 403);
  assert.equal(legacy.body.status, 'error');
  assert.equal((await api('POST', C, owner.legacyToken, { name: 'Nope' })).status, 403);

  const viewer = await newTenant({ permissions: ['communications.catalogue.view'] });
  assert.equal((await api('GET', C, viewer.token)).status, 200);
  const refused = await api('POST', C, viewer.token, { name: 'Nope' });
  assert.equal(refused.status, 403);
  assert.match(refused.body.message, /communications\.catalogue\.manage/);
  const none = await newTenant({ permissions: ['contacts.view'] });
  assert.equal((await api('GET', C, none.token)).status, 403);

  const other = await newTenant();
  assert.equal((await api('GET', `${C}/${shop.id}`, other.token)).status, 404);
  const patch = await api('PATCH', `${C}/${shop.id}`, other.token, { name: 'Stolen' });
  assert.equal(patch.status, 404);
  assert.equal(patch.body.data, undefined, 'no data');
  assert.equal((await api('GET', C, other.token)).body.data.pagination.total, 0);
  assert.equal((await api('GET', `${C}/${shop.id}`, owner.token)).body.data.name, 'Guarded');
});

test('a provider refusal of the catalogue create is 502 in the v3 envelope and keeps no shop', async () => {
  const t = await newTenant();
  await sim('POST', '/_sim/catalogue/faults', {
    kind: 'refuse_create',
    count: 1,
    name: 'Refused shop',
    message: 'Business is restricted from creating catalogs',
  });
  const r = await api('POST', C, t.token, { name: 'Refused shop', channels: [] });
  assert.equal(r.status, 502, r.text);
  assert.equal(r.body.status, 'error');
  assert.match(r.body.message, /refused/i);
  assert.equal(r.body.reason, 'provider_refused');
  assert.equal((await api('GET', C, t.token)).body.data.pagination.total, 0, 'no shop kept');
  assert.equal((await api('POST', C, t.token, { name: 'Second try', channels: [] })).status, 201, 'the next create goes through');
});
