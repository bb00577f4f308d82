import { test } from 'node:test';
import assert from 'node:assert/strict';
import { api, eventually, http, newTenant, type Tenant } from '../support/stack.js';
import { privateStack } from '../support/private-stack.js';

// POST …/products/batch, GET …/syncs and …/syncs/{sync}: accepted at once (202), applied by the
// catalogue sync workflow, reported in the contract's words.

const shopOf = async (t: Tenant, body: Record<string, unknown> = {}) => {
  const r = await api('POST', '/api/v3/catalogues', t.token, { name: 'Batch shop', channels: [], default_currency: 'TZS', ...body });
  assert.equal(r.status, 201, r.text);
  return r.body.data as { id: number; sku_prefix: string };
};
const batch = (t: Tenant, shop: number, body: unknown, headers: Record<string, string> = {}) =>
  http('POST', `/api/v3/catalogues/${shop}/products/batch`, { token: t.token, body, headers });
const finished = async (t: Tenant, shop: number, id: number, timeoutMs = 60_000) => {
  const r = await eventually(
    () => api('GET', `/api/v3/catalogues/${shop}/syncs/${id}`, t.token),
    (x) => ['completed', 'failed'].includes(x.body?.data?.status),
    timeoutMs,
    400,
    `sync ${id} of catalogue ${shop} completed or failed`,
  );
  assert.ok(['completed', 'failed'].includes(r.body?.data?.status), r.text);
  return r.body.data;
};
const products = async (t: Tenant, shop: number) => {
  const r = await api('GET', `/api/v3/catalogues/${shop}/products?limit=100`, t.token);
  assert.equal(r.status, 200, r.text);
  return r.body.data.products as any[];
};
const bySku = (list: any[], sku: string) => list.find((p) => p.sku === sku);

test('a batch answers 202 with the sync id at once; good rows land, each bad row is one rejected row (stage ingest)', async () => {
  const t = await newTenant();
  const shop = await shopOf(t);
  const existing = await api('POST', `/api/v3/catalogues/${shop.id}/products`, t.token, {
    name: 'Old tee',
    price: 1000,
    sku: 'TEE-1',
    description: 'kept',
    inventory: 4,
  });
  assert.equal(existing.status, 201, existing.text);
  const byName = await api('POST', `/api/v3/catalogues/${shop.id}/products`, t.token, { name: 'Mug', price: 500 });
  assert.equal(byName.status, 201, byName.text);

  const r = await batch(t, shop.id, {
    products: [
      { sku: 'TEE-1', name: 'Tee', price: 1500 }, // 1: matches on sku, updates; description kept
      { name: 'Mug', price: 650, brand: 'Acme', inventory: 0 }, // 2: matches on name
      { name: 'Cap', price: 900, category: 'Hats', inventory: 3 }, // 3: new, sku issued
      { sku: 'NEG', name: 'Negative', price: -1 }, // 4
      { sku: 'FRAC', name: 'Fraction', price: 12.5 }, // 5
      { sku: 'TXT', name: 'Text', price: 'abc' }, // 6
      { sku: 'NONAME', price: 100 }, // 7
      { sku: 'EXTRA', name: 'Extra', price: 100, colour: 'red' }, // 8
      'not a row', // 9
      { sku: 'TEE-1', name: 'Tee again', price: 1 }, // 10: same product as row 1
      { sku: 'NEW-2', retailer_id: 'OTHER', name: 'Two names', price: 1 }, // 11
      { retailer_id: 'RID-1', name: 'Old name for sku', price: 200, availability: 'preorder', inventory: 0 }, // 12
      { sku: 'BAD-AV', name: 'Bad availability', price: 1, availability: 'sometimes' }, // 13
    ],
  });
  assert.equal(r.status, 202, r.text);
  const accepted = r.body.data;
  assert.equal(typeof accepted.sync_id, 'number');
  assert.equal(accepted.id, accepted.sync_id);
  assert.deepEqual(
    [accepted.kind, accepted.mode, accepted.received, accepted.replayed, accepted.catalogue_id],
    ['batch', 'upsert', 13, false, shop.id],
  );
  assert.ok(['queued', 'running', 'completed'].includes(accepted.status));

  const done = await finished(t, shop.id, accepted.id);
  assert.equal(done.status, 'completed', JSON.stringify(done));
  assert.deepEqual(
    [done.received, done.created, done.updated, done.rejected, done.retired],
    [13, 2, 2, 9, 0],
    JSON.stringify(done.problems),
  );
  assert.deepEqual(done.platforms, {}, 'a shop on no platform has nothing to push');
  assert.equal(done.problems_truncated, false);
  const problem = (row: number) => done.problems.find((p: any) => p.row === row);
  assert.deepEqual(problem(4), { sku: 'NEG', stage: 'ingest', reason: 'The price must be at least 0.', row: 4, field: 'price' });
  assert.deepEqual(problem(5), { sku: 'FRAC', stage: 'ingest', reason: 'The price must be an integer.', row: 5, field: 'price' });
  assert.deepEqual(problem(6), { sku: 'TXT', stage: 'ingest', reason: 'The price must be an integer.', row: 6, field: 'price' });
  assert.deepEqual(problem(7), { sku: 'NONAME', stage: 'ingest', reason: 'The name field is required.', row: 7, field: 'name' });
  assert.deepEqual(problem(8), { sku: 'EXTRA', stage: 'ingest', reason: 'The colour field is not allowed.', row: 8, field: 'colour' });
  assert.deepEqual(problem(9), { sku: null, stage: 'ingest', reason: 'The row must be an object.', row: 9, field: 'row' });
  assert.deepEqual(problem(10), {
    sku: 'TEE-1',
    stage: 'ingest',
    reason: 'The row names the same product as row 1.',
    row: 10,
    field: 'sku',
  });
  assert.equal(problem(11).field, 'retailer_id');
  assert.equal(problem(13).reason, "The selected availability 'sometimes' is invalid.");
  assert.equal(done.problems.length, 9);

  const list = await products(t, shop.id);
  assert.equal(list.length, 4, JSON.stringify(list.map((p) => p.sku)));
  const tee = bySku(list, 'TEE-1');
  assert.deepEqual([tee.name, tee.price, tee.description, tee.inventory], ['Tee', 1500, 'kept', 4], 'unsent fields keep their values');
  const mug = list.find((p) => p.name === 'Mug');
  assert.equal(mug.id, byName.body.data.id, 'matched on name');
  assert.deepEqual([mug.price, mug.brand, mug.availability, mug.currency], [650, 'Acme', 'out of stock', 'TZS']);
  const cap = list.find((p) => p.name === 'Cap');
  assert.match(cap.sku, new RegExp(`^${shop.sku_prefix}-\\d{6}$`), 'a sku issued by the shop');
  assert.deepEqual([cap.category, cap.availability, cap.inventory], ['Hats', 'in stock', 3]);
  const rid = bySku(list, 'RID-1');
  assert.deepEqual([rid.retailer_id, rid.availability], ['RID-1', 'preorder'], 'an explicit availability wins over the stock count');
});

test('the same rows again change nothing; replace retires the products missing from the payload', async () => {
  const t = await newTenant();
  const shop = await shopOf(t);
  const rows = [
    { sku: 'A', name: 'Apple', price: 100 },
    { sku: 'B', name: 'Banana', price: 200 },
    { sku: 'C', name: 'Cherry', price: 300 },
  ];
  const first = await finished(t, shop.id, (await batch(t, shop.id, { products: rows })).body.data.id);
  assert.deepEqual([first.created, first.updated], [3, 0]);
  const revisions = Object.fromEntries((await products(t, shop.id)).map((p) => [p.sku, p.updated_at]));

  const again = await finished(t, shop.id, (await batch(t, shop.id, { products: rows })).body.data.id);
  assert.deepEqual([again.status, again.created, again.updated, again.rejected], ['completed', 0, 0, 0], 'an equal row is no change');
  assert.deepEqual(Object.fromEntries((await products(t, shop.id)).map((p) => [p.sku, p.updated_at])), revisions);

  const replace = await finished(
    t,
    shop.id,
    (await batch(t, shop.id, { mode: 'replace', products: [rows[0], { ...rows[1], price: 250 }] })).body.data.id,
  );
  assert.deepEqual([replace.status, replace.mode, replace.created, replace.updated, replace.retired], ['completed', 'replace', 0, 1, 1]);
  assert.deepEqual((await products(t, shop.id)).map((p) => p.sku).sort(), ['A', 'B'], 'the retired product is not listed');

  // A replace payload of which no row can be stored retires nothing and fails.
  const empty = await finished(
    t,
    shop.id,
    (await batch(t, shop.id, { mode: 'replace', products: [{ sku: 'A', price: -5 }] })).body.data.id,
  );
  assert.deepEqual([empty.status, empty.rejected, empty.retired], ['failed', 1, 0]);
  assert.match(empty.failure_reason, /no product was retired/);
  assert.deepEqual((await products(t, shop.id)).map((p) => p.sku).sort(), ['A', 'B']);

  // A retired product named again comes back.
  const back = await finished(t, shop.id, (await batch(t, shop.id, { products: [rows[2]] })).body.data.id);
  assert.deepEqual([back.created, back.updated], [0, 1]);
  assert.deepEqual((await products(t, shop.id)).map((p) => p.sku).sort(), ['A', 'B', 'C']);
});

test('Idempotency-Key: the same request replays the earlier run (nothing imported), another request with the key is 409', async () => {
  const t = await newTenant();
  const shop = await shopOf(t);
  const body = { mode: 'upsert', products: [{ sku: 'K1', name: 'Keyed', price: 100 }] };
  const key = { 'Idempotency-Key': `key-${Date.now()}` };
  const first = await batch(t, shop.id, body, key);
  assert.equal(first.status, 202, first.text);
  const done = await finished(t, shop.id, first.body.data.id);

  const replay = await batch(t, shop.id, { products: [{ price: 100, name: 'Keyed', sku: 'K1' }] }, key);
  assert.equal(replay.status, 202, replay.text);
  assert.deepEqual([replay.body.data.id, replay.body.data.replayed, replay.body.data.created], [done.id, true, 1]);
  const other = await batch(t, shop.id, { products: [{ sku: 'K1', name: 'Keyed', price: 101 }] }, key);
  assert.equal(other.status, 409, other.text);
  assert.equal(other.body.status, 'error');
  const viaBody = await batch(t, shop.id, { ...body, idempotency_key: key['Idempotency-Key'] });
  assert.deepEqual(
    [viaBody.status, viaBody.body.data.id, viaBody.body.data.replayed],
    [202, done.id, true],
    'the body field is the same key',
  );

  // Two requests racing on one new key: one run.
  const raceKey = { 'Idempotency-Key': `race-${Date.now()}` };
  const race = await Promise.all([1, 2, 3].map(() => batch(t, shop.id, body, raceKey)));
  assert.deepEqual(
    race.map((r) => r.status),
    [202, 202, 202],
  );
  assert.equal(new Set(race.map((r) => r.body.data.id)).size, 1);
  assert.equal(race.filter((r) => r.body.data.replayed).length, 2);

  const syncs = (await api('GET', `/api/v3/catalogues/${shop.id}/syncs`, t.token)).body.data.syncs;
  assert.equal(syncs.length, 2, 'a replay is no new run');
  // Without a key every request is a new run; a key is kept per catalogue.
  const shop2 = await shopOf(t);
  const elsewhere = await batch(t, shop2.id, body, key);
  assert.deepEqual([elsewhere.status, elsewhere.body.data.replayed], [202, false]);
  const long = await batch(t, shop.id, body, { 'Idempotency-Key': 'k'.repeat(256) });
  assert.equal(long.status, 422, long.text);
  assert.ok(long.body.errors['Idempotency-Key']);
});

test('bad requests are refused whole (4xx) and store nothing; never a 500', async () => {
  const t = await newTenant();
  const shop = await shopOf(t);
  const row = { sku: 'X', name: 'X', price: 1 };
  const cases: Array<[unknown, number, string]> = [
    [{ products: Array.from({ length: 5001 }, (_, i) => ({ sku: `S${i}`, name: `P${i}`, price: 1 })) }, 422, 'products'],
    [{ products: [] }, 422, 'products'],
    [{}, 422, 'products'],
    [{ products: [row], mode: 'merge' }, 422, 'mode'],
    [{ products: [row], extra: true }, 422, 'extra'],
    [{ products: 'rows' }, 422, 'products'],
    [{ products: [{ ...row, name: 'bad\u0000' }] }, 422, 'products.0.name'],
  ];
  for (const [body, status, field] of cases) {
    const r = await batch(t, shop.id, body);
    assert.equal(r.status, status, `${JSON.stringify(body).slice(0, 60)}: ${r.text.slice(0, 200)}`);
    assert.ok(r.body.errors?.[field], `${field}: ${JSON.stringify(r.body.errors)}`);
  }
  const raw = (payload: string, contentType: string) =>
    http('POST', `/api/v3/catalogues/${shop.id}/products/batch`, {
      token: t.token,
      raw: payload,
      headers: { 'content-type': contentType },
    });
  assert.equal((await raw('{"products": [', 'application/json')).status, 400);
  assert.equal((await raw('products=1', 'application/x-www-form-urlencoded')).status, 415);
  assert.equal((await raw(JSON.stringify({ products: [row] }), 'text/plain')).status, 415);
  assert.equal((await raw('[1,2]', 'application/json')).status, 400);
  const syncs = await api('GET', `/api/v3/catalogues/${shop.id}/syncs`, t.token);
  assert.deepEqual([syncs.status, syncs.body.data.syncs.length], [200, 0], 'no refused request left a run');
  assert.equal((await products(t, shop.id)).length, 0);
});

test('syncs: newest first, page-number (limit wins, nonpositive reads as the default), 404 for unknown ids', async () => {
  const t = await newTenant();
  const shop = await shopOf(t);
  const ids: number[] = [];
  for (let i = 0; i < 3; i++) ids.push((await batch(t, shop.id, { products: [{ sku: `P${i}`, name: `P${i}`, price: i }] })).body.data.id);
  for (const id of ids) await finished(t, shop.id, id);
  const page = await api('GET', `/api/v3/catalogues/${shop.id}/syncs?per_page=1&limit=2`, t.token);
  assert.equal(page.status, 200, page.text);
  assert.deepEqual(
    page.body.data.syncs.map((s: any) => s.id),
    [ids[2], ids[1]],
  );
  assert.deepEqual(page.body.data.pagination, { current_page: 1, per_page: 2, last_page: 2, total: 3, has_more_pages: true });
  const dflt = await api('GET', `/api/v3/catalogues/${shop.id}/syncs?limit=0&page=-1`, t.token);
  assert.deepEqual([dflt.status, dflt.body.data.pagination.per_page, dflt.body.data.pagination.current_page], [200, 25, 1]);
  assert.equal((await api('GET', `/api/v3/catalogues/${shop.id}/syncs/999999999`, t.token)).status, 404);
  assert.equal((await api('GET', `/api/v3/catalogues/${shop.id}/syncs/abc`, t.token)).status, 404);
  const other = await shopOf(t);
  assert.equal((await api('GET', `/api/v3/catalogues/${other.id}/syncs/${ids[0]}`, t.token)).status, 404, 'a run of another shop');
});

test('tenant isolation and permissions on every sync path', async () => {
  const owner = await newTenant();
  const shop = await shopOf(owner);
  const run = (await batch(owner, shop.id, { products: [{ sku: 'T', name: 'T', price: 1 }] })).body.data;
  await finished(owner, shop.id, run.id);
  const stranger = await newTenant();
  const theirs = await shopOf(stranger);
  const paths: Array<[string, string, unknown?]> = [
    ['POST', `/api/v3/catalogues/${shop.id}/products/batch`, { products: [{ sku: 'Z', name: 'Z', price: 1 }] }],
    ['GET', `/api/v3/catalogues/${shop.id}/syncs`],
    ['GET', `/api/v3/catalogues/${shop.id}/syncs/${run.id}`],
    ['GET', `/api/v3/catalogues/${theirs.id}/syncs/${run.id}`],
  ];
  for (const [method, path, body] of paths) {
    const r = await api(method, path, stranger.token, body);
    assert.equal(r.status, 404, `${method} ${path}: ${r.text}`);
  }
  assert.equal((await products(owner, shop.id)).length, 1, 'nothing written by the stranger');
  // A key without an issuer, and an issuer without the permission.
  assert.equal((await api('GET', `/api/v3/catalogues/${shop.id}/syncs`, owner.legacyToken)).status, 403);
  const viewer = await newTenant({ permissions: ['communications.catalogue.view'] });
  const read = await api('GET', `/api/v3/catalogues/${shop.id}/syncs`, viewer.token);
  assert.equal(read.status, 404, 'the viewer may read syncs, but not another account’s');
  const refused = await api('POST', `/api/v3/catalogues/${shop.id}/products/batch`, viewer.token, { products: [{ name: 'Z', price: 1 }] });
  assert.equal(refused.status, 403, refused.text);
});

test('a shop on platforms: the changed products are pushed and the report counts synced and blocked per platform', async () => {
  const t = await newTenant();
  const shop = await shopOf(t, { channels: ['storefront'] });
  const r = await batch(t, shop.id, {
    products: [
      { sku: 'OK', name: 'Shown', price: 100, image_url: 'https://example.com/a.png' },
      { sku: 'FREE', name: 'Zero price', price: 0 },
    ],
  });
  const done = await finished(t, shop.id, r.body.data.id);
  assert.equal(done.status, 'completed', JSON.stringify(done));
  assert.deepEqual(done.platforms, { storefront: { synced: 1, blocked: 1 } });
  const blocked = done.problems.find((p: any) => p.stage === 'storefront');
  assert.equal(blocked?.sku, 'FREE', JSON.stringify(done.problems));
  const again = await finished(
    t,
    shop.id,
    (await batch(t, shop.id, { products: [{ sku: 'OK', name: 'Shown', price: 100 }] })).body.data.id,
  );
  assert.deepEqual(again.platforms, { storefront: { synced: 0, blocked: 0 } }, 'an unchanged product is not pushed again');
});

test(
  'in chunks: a row naming a product an earlier chunk landed on is rejected; a retried worker counts nothing twice',
  { timeout: 180_000 },
  async () => {
    const stack = await privateStack({ CATALOGUE_SYNC_CHUNK_SIZE: '2', RATE_LIMIT_PER_MINUTE: '100000' });
    try {
      const t = await newTenant();
      const base = stack.apiUrl;
      const shop = (await http('POST', `${base}/api/v3/catalogues`, { token: t.token, body: { name: 'Chunked', channels: [] } })).body.data;
      const r = await http('POST', `${base}/api/v3/catalogues/${shop.id}/products/batch`, {
        token: t.token,
        body: {
          products: [
            { sku: 'A', name: 'Apple', price: 1 },
            { name: 'Pear', price: 2 },
            { name: 'Plum', price: 3 },
            { sku: 'A', name: 'Apple twice', price: 4 },
            { name: 'Pear', price: 5 },
            { name: 'Apple', price: 6 },
          ],
        },
      });
      assert.equal(r.status, 202, r.text);
      const done = await eventually(
        () => http('GET', `${base}/api/v3/catalogues/${shop.id}/syncs/${r.body.data.id}`, { token: t.token }),
        (x) => x.body?.data?.status === 'completed',
        60_000,
        200,
      );
      const report = done.body.data;
      assert.deepEqual([report.created, report.updated, report.rejected], [3, 0, 3], JSON.stringify(report.problems));
      assert.deepEqual(
        report.problems.map((p: any) => [p.row, p.reason]),
        [
          [4, 'The row names the same product as row 1.'],
          [5, 'The row names the same product as row 2.'],
          [6, 'The row names the same product as row 1.'],
        ],
      );

      // A worker killed while a larger batch runs: the rows land exactly once.
      const rows = Array.from({ length: 400 }, (_, i) => ({ sku: `K${i}`, name: `Kill ${i}`, price: i }));
      const big = await http('POST', `${base}/api/v3/catalogues/${shop.id}/products/batch`, { token: t.token, body: { products: rows } });
      assert.equal(big.status, 202, big.text);
      await new Promise((res) => setTimeout(res, 300));
      await stack.killWorker();
      stack.startWorker();
      const end = await eventually(
        () => http('GET', `${base}/api/v3/catalogues/${shop.id}/syncs/${big.body.data.id}`, { token: t.token }),
        (x) => x.body?.data?.status === 'completed',
        120_000,
        500,
      );
      assert.deepEqual([end.body.data.created, end.body.data.updated, end.body.data.rejected], [400, 0, 0]);
    } finally {
      await stack.stop();
    }
  },
);
