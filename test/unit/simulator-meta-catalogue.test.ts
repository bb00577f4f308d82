import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { createSimulator, type RunningSimulator, type Simulator } from '../../simulator/app.js';
import { createWhatsAppCatalogue } from '../../providers/whatsapp-cloud/catalogue.js';
import type { CatalogueProvider } from '../../providers/types.js';

// The simulator's Meta catalogue API, in process, through the real adapter: shapes, asynchronous
// per-item validation, paging, faults and the test controls.
const TOKEN = 'sim-wa-access-token';
const BATCH_MS = 50;
/** Longer than any run: a handle held this long stays in_progress until the test finishes it. */
const HELD_MS = 10 * 60_000;
let sim: Simulator;
let running: RunningSimulator;
let cat: CatalogueProvider;
let base: string;

before(async () => {
  sim = createSimulator({ logger: pino({ level: 'silent' }), catalogueBatchMs: BATCH_MS });
  running = await sim.listen(0);
  base = `${running.url}/whatsapp/v21.0`;
  cat = createWhatsAppCatalogue({
    baseUrl: base,
    accessToken: TOKEN,
    businessId: '190000000000001',
    publicBaseUrl: 'http://shop',
    timeoutMs: 5000,
  });
});
after(async () => {
  await running?.close();
});

const graph = async (method: string, path: string, body?: unknown, token = TOKEN) => {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as any };
};
const control = async (method: string, path: string, body?: unknown) => {
  const res = await fetch(`${running.url}/_sim${path}`, {
    method,
    headers: { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as any };
};
const item = (sku: string, extra: Record<string, unknown> = {}) => ({
  method: 'UPDATE',
  data: {
    id: sku,
    title: `Item ${sku}`,
    description: 'd',
    availability: 'in stock',
    condition: 'new',
    price: '12.50 USD',
    image_link: 'https://i/x.jpg',
    ...extra,
  },
});
/** Polls the handle as the adapter does, until it finishes; the deadline is for a handle that never does. */
const finished = async (catalogId: string, handle: string, deadlineMs = 30_000) => {
  const until = Date.now() + deadlineMs;
  for (;;) {
    const r = await cat.batchStatus(catalogId, handle);
    assert.ok(r.ok);
    if (r.value.finished) return r.value;
    if (Date.now() > until) throw new Error(`batch ${handle} not finished after ${deadlineMs} ms`);
    await new Promise((res) => setTimeout(res, 20));
  }
};

test('a catalogue is created under the business, read and deleted with Graph shapes', async () => {
  const created = await cat.createCatalogue({ name: 'Tea shop', vertical: 'commerce' });
  assert.ok(created.ok);
  const id = created.value.catalogueId;
  assert.match(id, /^\d{15}$/);
  assert.deepEqual((await graph('GET', `/${id}`)).body, { id, name: 'Tea shop', vertical: 'commerce', product_count: 0 });
  assert.deepEqual((await graph('DELETE', `/${id}`)).body, { success: true });
  const gone = await graph('GET', `/${id}`);
  assert.equal(gone.status, 400);
  assert.equal(gone.body.error.code, 100);
  assert.equal(gone.body.error.error_subcode, 33);
  const anon = await graph('GET', `/${id}`, undefined, 'wrong');
  assert.deepEqual([anon.status, anon.body.error.code], [401, 190]);
});

test('items_batch is asynchronous: in_progress, then finished with per-item errors; the valid items are stored', async () => {
  const c = await cat.createCatalogue({ name: 'Batch' });
  assert.ok(c.ok);
  const id = c.value.catalogueId;
  // in_progress is looked at while the handle is held, not within BATCH_MS of the answer: on a loaded
  // machine the next request can come after that, and the handle would already have finished.
  await control('POST', '/catalogue/config', { batchProcessingMs: HELD_MS });
  let sent: Awaited<ReturnType<typeof graph>>;
  try {
    sent = await graph('POST', `/${id}/items_batch`, {
      item_type: 'PRODUCT_ITEM',
      allow_upsert: true,
      requests: [
        item('A'),
        item('B', { image_link: undefined }),
        item('C', { price: '12,50 dollars' }),
        item('D'),
        { method: 'DELETE', data: { id: 'Z' } },
      ],
    });
  } finally {
    await control('POST', '/catalogue/config', { batchProcessingMs: BATCH_MS });
  }
  assert.equal(sent.status, 200);
  const [handle] = sent.body.handles;
  const early = await graph('GET', `/${id}/check_batch_request_status?handle=${encodeURIComponent(handle)}`);
  assert.equal(early.body.data[0].status, 'in_progress');
  assert.deepEqual(early.body.data[0].errors, [], 'no per-item result before it finishes');
  assert.equal((await control('GET', `/catalogue/catalogs/${id}/items`)).body.count, 0, 'nothing is stored before it finishes');
  const finish = await control('POST', `/catalogue/batches/${encodeURIComponent(handle)}/finish`);
  assert.deepEqual([finish.status, finish.body.status], [200, 'finished']);
  assert.equal((await control('POST', `/catalogue/batches/${encodeURIComponent(handle)}/finish`)).status, 409, 'it finishes once');
  assert.equal((await control('POST', '/catalogue/batches/nope/finish')).status, 404);
  const status = await finished(id, handle);
  assert.deepEqual(
    status.errors.map((e) => e.retailerId),
    ['B', 'C'],
  );
  assert.match(status.errors[0].message, /image_link/);
  assert.match(status.errors[1].message, /price/);
  assert.deepEqual(
    status.warnings.map((w) => w.retailerId),
    ['Z'],
    'deleting an absent item is a warning only',
  );
  const items = (await control('GET', `/catalogue/catalogs/${id}/items`)).body;
  assert.deepEqual(
    items.items.map((i: any) => [i.retailer_id, i.price, i.name]),
    [
      ['A', '12.50 USD', 'Item A'],
      ['D', '12.50 USD', 'Item D'],
    ],
  );
});

test('products pages are keyset pages; the filter finds retailer ids; fields are honoured', async () => {
  const c = await cat.createCatalogue({ name: 'Pages' });
  assert.ok(c.ok);
  const id = c.value.catalogueId;
  const r = await cat.sendItems(
    id,
    Array.from({ length: 30 }, (_, i) => ({ method: 'UPDATE' as const, retailerId: `P${i}`, data: item(`P${i}`).data })),
  );
  assert.ok(r.ok);
  await finished(id, r.value.handles[0]);
  const first = await cat.listItems(id, { limit: 25 });
  assert.ok(first.ok);
  assert.equal(first.value.items.length, 25);
  assert.ok(first.value.after);
  const second = await cat.listItems(id, { limit: 25, after: first.value.after });
  assert.ok(second.ok);
  assert.deepEqual(
    second.value.items.map((i) => i.retailerId),
    ['P25', 'P26', 'P27', 'P28', 'P29'],
  );
  assert.equal(second.value.after, undefined, 'no next page');
  assert.equal(second.value.items[0].price, 1250);
  const some = await cat.listItems(id, { limit: 10, retailerIds: ['P3', 'P7', 'nope'] });
  assert.ok(some.ok);
  assert.deepEqual(some.value.items.map((i) => i.retailerId).sort(), ['P3', 'P7']);
  const defaults = await graph('GET', `/${id}/products?limit=1`);
  assert.deepEqual(Object.keys(defaults.body.data[0]), ['id', 'retailer_id', 'name']);
  const bad = await graph('GET', `/${id}/products?fields=id,stock_level`);
  assert.equal(bad.body.error.code, 100);
});

test('more than 5,000 requests is code 1; an unknown catalogue and a malformed body are code 100', async () => {
  const c = await cat.createCatalogue({ name: 'Limits' });
  assert.ok(c.ok);
  const id = c.value.catalogueId;
  const big = await graph('POST', `/${id}/items_batch`, {
    item_type: 'PRODUCT_ITEM',
    requests: Array.from({ length: 5001 }, (_, i) => item(`X${i}`)),
  });
  assert.equal(big.body.error.code, 1);
  assert.match(big.body.error.message, /reduce the amount of data/);
  assert.equal((await graph('POST', `/999/items_batch`, { requests: [item('A')] })).body.error.code, 100);
  assert.equal((await graph('POST', `/${id}/items_batch`, { requests: [{ method: 'PATCH', data: {} }] })).body.error.code, 100);
  assert.equal((await graph('POST', `/${id}/items_batch`, { requests: 'no' })).body.error.code, 100);
});

test('faults: refused batch, refused create, rate limit (retryable), hanging handle, failing retailer ids', async () => {
  const c = await cat.createCatalogue({ name: 'Faults' });
  assert.ok(c.ok);
  const id = c.value.catalogueId;
  const send = () => cat.sendItems(id, [{ method: 'UPDATE', retailerId: 'F1', data: item('F1').data }]);

  await control('POST', '/catalogue/faults', { kind: 'refuse_batch', code: 200 });
  const refused = await send();
  assert.ok(!refused.ok && refused.permanent && refused.code === '200');

  await control('POST', '/catalogue/faults', { kind: 'refuse_create' });
  const noCatalogue = await cat.createCatalogue({ name: 'x' });
  assert.ok(!noCatalogue.ok && noCatalogue.permanent);

  await control('POST', '/catalogue/faults', { kind: 'rate_limit', retryAfter: 2 });
  const limited = await send();
  assert.ok(!limited.ok && !limited.permanent && limited.code === '80014' && limited.retryAfterSeconds === 2);

  await control('POST', '/catalogue/faults', { kind: 'hang', catalogId: id });
  const hung = await send();
  assert.ok(hung.ok);
  await new Promise((res) => setTimeout(res, 150));
  const still = await cat.batchStatus(id, hung.value.handles[0]);
  assert.ok(still.ok && !still.value.finished);

  await control('POST', '/catalogue/faults', { kind: 'item_error', retailerIds: ['F1'], message: 'Policy violation' });
  const failing = await send();
  assert.ok(failing.ok);
  assert.deepEqual((await finished(id, failing.value.handles[0])).errors, [{ retailerId: 'F1', message: 'Policy violation' }]);
  assert.equal((await control('GET', '/catalogue/faults')).body.faults.length, 0, 'each fault was used once');
});

test('controls: change a stored item (drift), delete one remotely, count calls, reset', async () => {
  const c = await cat.createCatalogue({ name: 'Controls' });
  assert.ok(c.ok);
  const id = c.value.catalogueId;
  const r = await cat.sendItems(id, [
    { method: 'UPDATE', retailerId: 'K1', data: item('K1').data },
    { method: 'UPDATE', retailerId: 'K2', data: item('K2').data },
  ]);
  assert.ok(r.ok);
  await finished(id, r.value.handles[0]);
  const changed = await control('PATCH', `/catalogue/catalogs/${id}/items/K1`, { price: '15.00 USD', title: 'Renamed' });
  assert.deepEqual([changed.body.price, changed.body.name], ['15.00 USD', 'Renamed']);
  const read = await cat.listItems(id, { limit: 10, retailerIds: ['K1'] });
  assert.ok(read.ok);
  assert.deepEqual([read.value.items[0].price, read.value.items[0].name], [1500, 'Renamed']);
  assert.deepEqual((await control('DELETE', `/catalogue/catalogs/${id}/items/K2`)).body, { deleted: true });
  assert.equal((await graph('GET', `/${id}`)).body.product_count, 1);
  const calls = (await control('GET', '/catalogue/calls')).body.calls;
  assert.ok(calls.items_batch >= 1 && calls.check_batch_request_status >= 1 && calls.create_catalog >= 1);
  await control('POST', '/reset');
  assert.equal((await control('GET', '/catalogue/catalogs')).body.count, 0);
});
