import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { admin, api, eventually, http as call, newTenant, type Tenant } from '../support/stack.js';
import { privateStack } from '../support/private-stack.js';
import { temporal, closeTemporal } from '../support/webhooks.js';
import { feedPullWorkflowId, feedScheduleId } from '../../workflows/catalogues/feed-pull.starter.js';

// Product feeds: POST …/feeds (first pull at once), …/run, and our list/read/change/delete paths.
// Feed files are served by a local HTTP server of this test (the test stack allows loopback
// destinations); the bad-input cases (time-outs, 404, HTML, 200 MB) each end as a failed run with a
// reason or a 4xx, never a 500, and never a product half written.

type Handler = (req: http.IncomingMessage, res: http.ServerResponse) => void;
const routes = new Map<string, Handler>();
const server = http.createServer((req, res) => {
  const h = routes.get(req.url!.split('?')[0]);
  if (h) return h(req, res);
  res.writeHead(404, { 'content-type': 'text/plain' }).end('not here');
});
await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
after(async () => {
  server.closeAllConnections();
  server.close();
  await closeTemporal();
});

let seq = 0;
/** Serves `body` at a fresh path; answers the URL. */
function serve(body: string | (() => string), type = 'text/csv'): string {
  const path = `/feed-${process.pid}-${++seq}`;
  routes.set(path, (_req, res) => res.writeHead(200, { 'content-type': type }).end(typeof body === 'function' ? body() : body));
  return `${base}${path}`;
}
function route(h: Handler): string {
  const path = `/feed-${process.pid}-${++seq}`;
  routes.set(path, h);
  return `${base}${path}`;
}

const shopOf = async (t: Tenant, apiBase = '') => {
  const r = await call('POST', `${apiBase}/api/v3/catalogues`, {
    token: t.token,
    body: { name: 'Feed shop', channels: [], default_currency: 'TZS' },
  });
  assert.equal(r.status, 201, r.text);
  return r.body.data.id as number;
};
const F = (shop: number) => `/api/v3/catalogues/${shop}/feeds`;
const finished = async (t: Tenant, shop: number, sync: number, apiBase = '', timeoutMs = 90_000) => {
  const r = await eventually(
    () => call('GET', `${apiBase}/api/v3/catalogues/${shop}/syncs/${sync}`, { token: t.token }),
    (x) => ['completed', 'failed'].includes(x.body?.data?.status),
    timeoutMs,
    300,
    `sync ${sync} of catalogue ${shop} completed or failed`,
  );
  assert.ok(['completed', 'failed'].includes(r.body?.data?.status), r.text);
  // The run's report is settled a moment before the pull counts it on the feed (last_row_count, the
  // failure count, the shrink guard's reference for the next run): wait for the pull itself, so a
  // read or a run that follows sees it counted (read at once, last_row_count was once still null).
  if (r.body.data.kind === 'feed' && !apiBase) {
    const pull = (await temporal()).workflow.getHandle(feedPullWorkflowId(t.accountId, r.body.data.feed_id, sync));
    await pull.result().catch(() => undefined);
  }
  return r.body.data;
};
const live = async (t: Tenant, shop: number) => {
  const out: any[] = [];
  for (let page = 1; ; page++) {
    const r = await api('GET', `/api/v3/catalogues/${shop}/products?limit=100&page=${page}`, t.token);
    assert.equal(r.status, 200, r.text);
    out.push(...r.body.data.products);
    if (!r.body.data.pagination.has_more_pages) return out;
  }
};
const createFeed = async (t: Tenant, shop: number, body: Record<string, unknown>, apiBase = '') => {
  const r = await call('POST', `${apiBase}${F(shop)}`, { token: t.token, body });
  assert.equal(r.status, 201, r.text);
  assert.equal(typeof r.body.data.last_sync_id, 'number');
  return r.body.data;
};
const run = async (t: Tenant, shop: number, feed: number, apiBase = '') => {
  const r = await call('POST', `${apiBase}${F(shop)}/${feed}/run`, { token: t.token });
  assert.equal(r.status, 202, r.text);
  assert.equal(r.body.data.kind, 'feed');
  return r.body.data.sync_id as number;
};
const csvOf = (n: number, from = 1) =>
  'id,title,price,availability\n' +
  Array.from({ length: n }, (_, i) => `P-${from + i},Product ${from + i},${from + i}.50 TZS,in stock`).join('\n');

test('CSV feed: semicolons detected, Meta columns mapped, "9,99 EUR" prices parsed, the mapping stored on the feed', async () => {
  const t = await newTenant();
  const shop = await shopOf(t);
  const url = serve(
    '\uFEFFid;title;description;price;sale_price;availability;condition;quantity_to_sell_on_facebook;image_link;brand;link\n' +
      'MUG-1;Mug;"Big; blue";9,99 EUR;7,50 EUR;in_stock;new;12;/img/mug.jpg;Acme;https://x/1\n' +
      'TEE-1;Tee;;19.00 EUR;;out of stock;used;0;https://cdn.example/tee.png;;https://x/2\n' +
      'BAD-1;Bad price;;ask us;;in stock;;;;;\n',
    'text/csv; charset=utf-8',
  );
  const feed = await createFeed(t, shop, { url, schedule: null });
  assert.deepEqual([feed.mode, feed.enabled, feed.consecutive_failures, feed.schedule], ['replace', true, 0, null]);
  const report = await finished(t, shop, feed.last_sync_id);
  assert.equal(report.status, 'completed', JSON.stringify(report));
  assert.deepEqual([report.kind, report.feed_id, report.received, report.created, report.rejected], ['feed', feed.id, 3, 2, 1]);
  assert.deepEqual(
    report.problems.map((p: any) => [p.sku, p.stage, p.field]),
    [['BAD-1', 'ingest', 'price']],
  );
  const products = await live(t, shop);
  const mug = products.find((p) => p.sku === 'MUG-1');
  assert.deepEqual(
    [
      mug.name,
      mug.description,
      mug.price,
      mug.sale_price,
      mug.currency,
      mug.availability,
      mug.condition,
      mug.inventory,
      mug.brand,
      mug.image_url,
    ],
    ['Mug', 'Big; blue', 999, 750, 'EUR', 'in stock', 'new', 12, 'Acme', `${base}/img/mug.jpg`],
  );
  const tee = products.find((p) => p.sku === 'TEE-1');
  assert.deepEqual([tee.price, tee.availability, tee.condition, tee.inventory], [1900, 'out of stock', 'used', 0]);

  const read = (await api('GET', `${F(shop)}/${feed.id}`, t.token)).body.data;
  assert.equal(read.format, 'csv');
  assert.equal(read.last_row_count, 2);
  assert.deepEqual(read.last_sync, {
    id: feed.last_sync_id,
    status: 'completed',
    failure_reason: null,
    finished_at: read.last_sync.finished_at,
  });
  assert.deepEqual(read.mapping, {
    id: 'sku',
    title: 'name',
    description: 'description',
    price: 'price',
    sale_price: 'sale_price',
    availability: 'availability',
    condition: 'condition',
    quantity_to_sell_on_facebook: 'inventory',
    image_link: 'image_url',
    brand: 'brand',
    link: null,
  });
});

test('XML feeds: RSS items with the g: namespace and Atom entries; JSON {products:[…]} in upsert mode', async () => {
  const t = await newTenant();
  const shop = await shopOf(t);
  const rss =
    '<?xml version="1.0" encoding="UTF-8"?>\n<rss xmlns:g="http://base.google.com/ns/1.0" version="2.0"><channel><title>Shop</title>' +
    '<item><g:id>R-1</g:id><title>Rice &amp; beans</title><description><![CDATA[<p>Tasty</p>]]></description><g:price>1500.00 TZS</g:price>' +
    '<g:availability>preorder</g:availability><g:brand>Shamba</g:brand></item>' +
    '<item><g:id>0012</g:id><g:title>Tea</g:title><g:price currency="TZS">800</g:price><g:condition>new</g:condition></item>' +
    '</channel></rss>';
  const feed = await createFeed(t, shop, { url: serve(rss, 'application/rss+xml') });
  const r1 = await finished(t, shop, feed.last_sync_id);
  assert.equal(r1.status, 'completed', JSON.stringify(r1));
  assert.equal(r1.created, 2);
  let products = await live(t, shop);
  const rice = products.find((p) => p.sku === 'R-1');
  assert.deepEqual(
    [rice.name, rice.description, rice.price, rice.availability, rice.brand],
    ['Rice & beans', '<p>Tasty</p>', 150000, 'preorder', 'Shamba'],
  );
  assert.equal(products.find((p) => p.sku === '0012').price, 80000, 'a numeric-looking id stays text');

  const atom =
    '<feed xmlns="http://www.w3.org/2005/Atom" xmlns:g="http://base.google.com/ns/1.0"><title>A</title>' +
    '<entry><g:id>A-1</g:id><title type="text">Atom thing</title><g:price>2.00 TZS</g:price><link href="https://x/a"/></entry></feed>';
  const atomFeed = await createFeed(t, shop, { url: serve(atom, 'application/atom+xml'), mode: 'upsert' });
  assert.equal((await finished(t, shop, atomFeed.last_sync_id)).created, 1);

  const json = JSON.stringify({
    meta: { page: 1 },
    products: [
      { sku: 'J-1', name: 'Json one', price: 12.5, stock: 4, images: ['https://x/j1.png'] },
      { sku: 'R-1', name: 'Rice & beans', price: { amount: '1600', currency: 'TZS' } },
      'not a product',
    ],
  });
  const jsonFeed = await createFeed(t, shop, { url: serve(json, 'application/json'), mode: 'upsert' });
  const r3 = await finished(t, shop, jsonFeed.last_sync_id);
  assert.deepEqual([r3.status, r3.created, r3.updated, r3.rejected, r3.retired], ['completed', 1, 1, 1, 0]);
  products = await live(t, shop);
  assert.equal(products.length, 4, 'upsert retires nothing');
  const j1 = products.find((p) => p.sku === 'J-1');
  assert.deepEqual([j1.price, j1.inventory, j1.image_url], [1250, 4, 'https://x/j1.png']);
  assert.equal(products.find((p) => p.sku === 'R-1').price, 160000);
});

test('a feed whose columns name no product field fails with the reason; PATCH mapping corrects it', async () => {
  const t = await newTenant();
  const shop = await shopOf(t);
  const url = serve('Artikel,Bezeichnung,Preis\nA1,Brot,"2,50 EUR"\nA2,Milch,"1,20 EUR"\n');
  const feed = await createFeed(t, shop, { url });
  const failed = await finished(t, shop, feed.last_sync_id);
  assert.equal(failed.status, 'failed');
  assert.match(failed.failure_reason, /no column of the feed maps to name or price/);
  assert.deepEqual((await api('GET', `${F(shop)}/${feed.id}`, t.token)).body.data.mapping, {
    Artikel: null,
    Bezeichnung: null,
    Preis: null,
  });

  const bad = await api('PATCH', `${F(shop)}/${feed.id}`, t.token, { mapping: { Artikel: 'sku', Preis: 'price', Bezeichnung: 'colour' } });
  assert.equal(bad.status, 422, bad.text);
  const fixed = await api('PATCH', `${F(shop)}/${feed.id}`, t.token, { mapping: { Artikel: 'sku', Bezeichnung: 'name', Preis: 'price' } });
  assert.equal(fixed.status, 200, fixed.text);
  const ok = await finished(t, shop, await run(t, shop, feed.id));
  assert.equal(ok.status, 'completed', JSON.stringify(ok));
  const products = await live(t, shop);
  assert.deepEqual(
    products.map((p) => [p.sku, p.name, p.price, p.currency]),
    [
      ['A1', 'Brot', 250, 'EUR'],
      ['A2', 'Milch', 120, 'EUR'],
    ],
  );
  const read = (await api('GET', `${F(shop)}/${feed.id}`, t.token)).body.data;
  assert.equal(read.consecutive_failures, 0, 'a completed pull resets the failures');
});

test('bad URLs and files: refused at save (4xx) or a failed run with a reason (404, HTML, 200 MB, unreadable, redirect loop); nothing written', async () => {
  const t = await newTenant();
  const shop = await shopOf(t);
  for (const url of [
    'http://169.254.169.254/latest/meta-data',
    'http://10.0.0.1/feed.csv',
    'ftp://example.com/feed.csv',
    'not a url',
    'http://u:p@example.com/f',
  ]) {
    const r = await api('POST', F(shop), t.token, { url });
    assert.equal(r.status, 422, `${url}: ${r.text}`);
    assert.ok(r.body.errors?.url, r.text);
  }
  for (const body of [
    {},
    { url: 'https://example.com/f.csv', schedule: '*/5 * * * *' },
    { url: 'https://example.com/f.csv', mode: 'merge' },
  ]) {
    const r = await api('POST', F(shop), t.token, body);
    assert.equal(r.status, 422, `${JSON.stringify(body)}: ${r.text}`);
  }

  const huge = 200 * 1024 * 1024;
  const chunk = Buffer.alloc(1024 * 1024, 'id,title,price\n');
  // Blank lines: no products, just bytes, so the size cap (not the row cap) ends the pull.
  const blank = Buffer.alloc(1024 * 1024, '\n');
  const cases: Array<[string, string | RegExp]> = [
    [`${base}/missing-${process.pid}.csv`, 'the feed URL answered 404 Not Found'],
    [serve('<!DOCTYPE html><html><body>Shop</body></html>', 'text/html'), 'the URL answered an HTML page, not a feed'],
    [serve('<div>Please log in</div>', 'text/html; charset=utf-8'), 'the URL answered an HTML page, not a feed'],
    [
      route((_req, res) => {
        // 200 MB announced: refused from the header, the body never read.
        res.writeHead(200, { 'content-type': 'text/csv', 'content-length': String(huge) });
        res.write(chunk);
      }),
      'the feed is larger than 100 MB (200 MB)',
    ],
    [
      route((_req, res) => {
        // 200 MB sent without a length: cut off once past the cap.
        res.writeHead(200, { 'content-type': 'text/csv' });
        res.write('id,title,price\n');
        let sent = 0;
        const more = () => {
          while (sent < huge) {
            sent += blank.length;
            if (!res.write(blank)) return void res.once('drain', more);
          }
          res.end();
        };
        res.on('close', () => (sent = huge));
        more();
      }),
      'the feed is larger than 100 MB',
    ],
    [
      serve('{"products":[{"sku":"x","name":"y","price":1}', 'application/json'),
      /the feed could not be read: the JSON ends inside the product array/,
    ],
    [serve('<Error><Code>AccessDenied</Code></Error>', 'application/xml'), /not an RSS, Atom or product feed/],
    [route((req, res) => res.writeHead(302, { location: req.url! }).end()), 'the feed URL redirected more than 5 times'],
    [
      route((_req, res) => res.writeHead(302, { location: 'http://169.254.169.254/' }).end()),
      'the feed URL points to a destination that is not allowed',
    ],
  ];
  for (const [url, reason] of cases) {
    const feed = await createFeed(t, shop, { url, mode: 'upsert' });
    const r = await finished(t, shop, feed.last_sync_id);
    assert.equal(r.status, 'failed', `${url}: ${JSON.stringify(r)}`);
    if (typeof reason === 'string') assert.equal(r.failure_reason, reason, url);
    else assert.match(r.failure_reason, reason, url);
    assert.deepEqual([r.created, r.updated, r.retired], [0, 0, 0]);
    const read = (await api('GET', `${F(shop)}/${feed.id}`, t.token)).body.data;
    assert.deepEqual([read.consecutive_failures, read.enabled, read.last_sync.status], [1, true, 'failed']);
  }
  // A redirect to a good file is followed.
  const target = serve(csvOf(2));
  const moved = await createFeed(t, shop, { url: route((_req, res) => res.writeHead(301, { location: target }).end()) });
  assert.equal((await finished(t, shop, moved.last_sync_id)).created, 2);
});

test('time-outs and 5xx are retried, then the run fails with the reason; the feed answers 4xx, never 500', async () => {
  const own = await privateStack({ FEED_TIMEOUT_SECONDS: '1', ALLOW_LOOPBACK_DESTINATIONS: 'true' });
  try {
    const t = await newTenant();
    const shop = await shopOf(t, own.apiUrl);
    let calls = 0;
    const silent = route(() => void calls++); // never answers
    const feed = await createFeed(t, shop, { url: silent, mode: 'upsert' }, own.apiUrl);
    const r = await finished(t, shop, feed.last_sync_id, own.apiUrl);
    assert.equal(r.status, 'failed');
    assert.equal(r.failure_reason, 'the feed URL did not answer within 1 s');
    assert.equal(calls, 3, 'three attempts');

    let flaky = 0;
    const recovering = route((_req, res) => {
      if (++flaky === 1) return void res.writeHead(503).end('busy');
      res.writeHead(200, { 'content-type': 'text/csv' }).end(csvOf(3));
    });
    const second = await createFeed(t, shop, { url: recovering, mode: 'upsert' }, own.apiUrl);
    const ok = await finished(t, shop, second.last_sync_id, own.apiUrl);
    assert.deepEqual([ok.status, ok.created, flaky], ['completed', 3, 2], 'a 503 is retried');

    // A slow file: a second run while the first is under way is a 409.
    const slow = route((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/csv' });
      res.write('id,title,price\n');
      setTimeout(() => res.end('S-1,Slow,1\n'), 700);
    });
    const slowFeed = await createFeed(t, shop, { url: slow, mode: 'upsert' }, own.apiUrl);
    const again = await call('POST', `${own.apiUrl}${F(shop)}/${slowFeed.id}/run`, { token: t.token });
    assert.equal(again.status, 409, again.text);
    await finished(t, shop, slowFeed.last_sync_id, own.apiUrl);
  } finally {
    await own.stop();
  }
});

test('shrink guard: an empty or sharply shrunk replace pull fails and retires nothing; PATCH enabled true accepts the shrink', async () => {
  const t = await newTenant();
  const shop = await shopOf(t);
  let body = csvOf(30);
  const url = serve(() => body);
  const feed = await createFeed(t, shop, { url });
  assert.equal((await finished(t, shop, feed.last_sync_id)).created, 30);
  assert.equal((await api('GET', `${F(shop)}/${feed.id}`, t.token)).body.data.last_row_count, 30);

  body = csvOf(14);
  const shrunk = await finished(t, shop, await run(t, shop, feed.id));
  assert.equal(shrunk.status, 'failed');
  assert.equal(
    shrunk.failure_reason,
    'the feed shrank from 30 to 14 usable products (more than half gone); nothing was applied or retired',
  );
  assert.equal(shrunk.retired, 0);
  assert.equal((await live(t, shop)).length, 30);

  body = 'id,title,price\n';
  const empty = await finished(t, shop, await run(t, shop, feed.id));
  assert.equal(empty.status, 'failed');
  assert.match(empty.failure_reason, /no usable products/);
  body = 'id,title,price\n' + Array.from({ length: 30 }, (_, i) => `P-${i + 1},Product ${i + 1},free`).join('\n');
  const junk = await finished(t, shop, await run(t, shop, feed.id));
  assert.equal(junk.status, 'failed', 'rows that would all be rejected count as none');
  assert.equal((await live(t, shop)).length, 30);
  assert.equal((await api('GET', `${F(shop)}/${feed.id}`, t.token)).body.data.consecutive_failures, 3);

  body = csvOf(22);
  const held = await finished(t, shop, await run(t, shop, feed.id));
  assert.equal(held.status, 'completed', '22 of 30 is more than half');
  assert.equal(held.retired, 8);

  body = csvOf(5);
  assert.equal((await finished(t, shop, await run(t, shop, feed.id))).status, 'failed');
  const accepted = await api('PATCH', `${F(shop)}/${feed.id}`, t.token, { enabled: true });
  assert.deepEqual([accepted.body.data.last_row_count, accepted.body.data.consecutive_failures], [null, 0]);
  const now = await finished(t, shop, await run(t, shop, feed.id));
  assert.deepEqual([now.status, now.retired], ['completed', 17]);
  assert.equal((await live(t, shop)).length, 5);
});

test('ten failed pulls in a row switch the feed off: schedule paused, event and notice; PATCH enabled true switches it on', async () => {
  const t = await newTenant();
  const shop = await shopOf(t);
  let ok = false;
  const url = route((_req, res) => (ok ? res.writeHead(200, { 'content-type': 'text/csv' }).end(csvOf(2)) : res.writeHead(404).end()));
  const feed = await createFeed(t, shop, { url, schedule: 'hourly' });
  const client = await temporal();
  const schedule = client.schedule.getHandle(feedScheduleId(t.accountId, feed.id));
  const described = await schedule.describe();
  assert.equal(described.state.paused, false);
  assert.equal(described.action.type, 'startWorkflow');

  await finished(t, shop, feed.last_sync_id);
  for (let i = 2; i <= 10; i++) {
    const r = await finished(t, shop, await run(t, shop, feed.id));
    assert.equal(r.failure_reason, 'the feed URL answered 404 Not Found');
  }
  const off = (await api('GET', `${F(shop)}/${feed.id}`, t.token)).body.data;
  assert.deepEqual([off.enabled, off.consecutive_failures], [false, 10]);
  assert.equal((await schedule.describe()).state.paused, true);
  const events = await admin('GET', `/accounts/${t.accountId}/events?kind=catalogue.feed.disabled`);
  assert.equal(events.body.data.length, 1, events.text);
  assert.deepEqual(
    [events.body.data[0].feed_id, events.body.data[0].catalogue_id, events.body.data[0].consecutive_failures, events.body.data[0].reason],
    [feed.id, shop, 10, 'the feed URL answered 404 Not Found'],
  );
  const notices = await api('GET', '/api/v3/notices?kind=catalogue.feed.disabled', t.token);
  assert.equal(notices.status, 200, notices.text);
  assert.equal(notices.body.data.notices.length, 1);
  assert.match(notices.body.data.notices[0].message, /switched off after 10 failed pulls/);

  const refused = await api('POST', `${F(shop)}/${feed.id}/run`, t.token);
  assert.equal(refused.status, 409, refused.text);

  ok = true;
  const on = await api('PATCH', `${F(shop)}/${feed.id}`, t.token, { enabled: true, schedule: '15 */6 * * *' });
  assert.deepEqual(
    [on.status, on.body.data.enabled, on.body.data.consecutive_failures, on.body.data.schedule],
    [200, true, 0, '15 */6 * * *'],
  );
  const resumed = await schedule.describe();
  assert.equal(resumed.state.paused, false);
  assert.equal((await finished(t, shop, await run(t, shop, feed.id))).status, 'completed');

  // No schedule: the Temporal Schedule goes; deleting the feed removes it too.
  await api('PATCH', `${F(shop)}/${feed.id}`, t.token, { schedule: null });
  await assert.rejects(schedule.describe(), /not found/i);
  await api('PATCH', `${F(shop)}/${feed.id}`, t.token, { schedule: 'daily' });
  assert.ok(await schedule.describe());
  const del = await api('DELETE', `${F(shop)}/${feed.id}`, t.token);
  assert.deepEqual(del.body.data, { id: feed.id, deleted: true });
  await assert.rejects(schedule.describe(), /not found/i);
  assert.equal((await api('GET', `${F(shop)}/${feed.id}`, t.token)).status, 404);
  assert.equal((await api('GET', `/api/v3/catalogues/${shop}/syncs/${feed.last_sync_id}`, t.token)).status, 200, 'past runs stay');
});

test('tenant isolation and permissions on every feed path', async () => {
  const owner = await newTenant();
  const other = await newTenant();
  const shop = await shopOf(owner);
  const otherShop = await shopOf(other);
  const feed = await createFeed(owner, shop, { url: serve(csvOf(1)), mode: 'upsert' });
  await finished(owner, shop, feed.last_sync_id);

  const paths: Array<[string, string, unknown?]> = [
    ['GET', F(shop)],
    ['POST', F(shop), { url: serve(csvOf(1)) }],
    ['GET', `${F(shop)}/${feed.id}`],
    ['PATCH', `${F(shop)}/${feed.id}`, { mode: 'replace' }],
    ['POST', `${F(shop)}/${feed.id}/run`],
    ['DELETE', `${F(shop)}/${feed.id}`],
  ];
  for (const [method, path, body] of paths) {
    const r = await api(method, path, other.token, body);
    assert.equal(r.status, 404, `${method} ${path} by another account: ${r.text}`);
  }
  // The other account's own shop does not reach this feed either.
  for (const [method, suffix] of [
    ['GET', ''],
    ['PATCH', ''],
    ['POST', '/run'],
    ['DELETE', ''],
  ] as const) {
    const r = await api(method, `${F(otherShop)}/${feed.id}${suffix}`, other.token, method === 'PATCH' ? { mode: 'upsert' } : undefined);
    assert.equal(r.status, 404, `${method} through another shop: ${r.text}`);
  }
  assert.deepEqual((await api('GET', F(otherShop), other.token)).body.data.feeds, []);
  const syncs = (await api('GET', `/api/v3/catalogues/${otherShop}/syncs`, other.token)).body.data.syncs;
  assert.deepEqual(syncs, []);

  // Keys without an issuer are refused; a key whose issuer may only view reads but cannot write.
  const legacy = await api('GET', F(shop), owner.legacyToken);
  assert.equal(legacy.status, 403, legacy.text);
  const mine = await admin('POST', `/accounts/${owner.accountId}/users`, {
    email: `viewer-${process.pid}-${Date.now()}@example.com`,
    name: 'Viewer',
    permissions: ['communications.catalogue.view'],
  });
  const key = await admin('POST', `/accounts/${owner.accountId}/keys`, { name: 'viewer', user_id: mine.body.data.id });
  const token = key.body.data.token;
  assert.equal((await api('GET', F(shop), token)).status, 200);
  assert.equal((await api('GET', `${F(shop)}/${feed.id}`, token)).status, 200);
  for (const [method, path, body] of paths.filter(([m]) => m !== 'GET')) {
    const r = await api(method, path, token, body);
    assert.equal(r.status, 403, `${method} ${path} without manage: ${r.text}`);
  }
  const list = (await api('GET', F(shop), owner.token)).body.data;
  assert.deepEqual(
    list.feeds.map((f: any) => f.id),
    [feed.id],
  );
  assert.equal(list.pagination.total, 1);
});
