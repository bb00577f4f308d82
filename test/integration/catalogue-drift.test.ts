import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { Connection, Client } from '@temporalio/client';
import { openOrm } from '../../entities/orm.js';
import { many, one } from '../../entities/db.js';
import { loadConfig } from '../../config.js';
import { startWorkflow } from '../../temporal/starters.js';
import { AccountId, ResourceType } from '../../temporal/search-attributes.js';
import { catalogueDriftRunStarter } from '../../workflows/catalogues/catalogue-drift.starter.js';
import type { DriftProgress } from '../../workflows/catalogues/catalogue-drift.js';
import { api, eventually, newTenant, sim, type Tenant } from '../support/stack.js';
import { receiversOfThisFile } from '../support/receiver.js';
import { ensureSchedules } from '../../worker/schedules.js';
import { createEndpoint } from '../support/webhooks.js';

// The hourly drift comparison on the real stack (States > Product listing): a shop and a product
// pushed to the simulator's Meta catalogue, the platform copy changed through the simulator's
// controls, then a pass started at once through the typed starter instead of waiting for the hour.
const orm = await openOrm(process.env.DATABASE_URL!, 4);
const connection = await Connection.connect({ address: process.env.TEMPORAL_ADDRESS! });
const temporal = new Client({ connection });
const receiver = receiversOfThisFile();
after(async () => {
  await connection.close();
  await orm.close();
});
const em = () => orm.em.fork();

const C = '/api/v3/catalogues';
const MUG = {
  sku: 'MUG-1',
  name: 'Blue mug',
  description: 'A mug, blue',
  price: 1250,
  image_url: 'https://img.example.com/mug.png',
  brand: 'Acme',
  inventory: 10,
};

/** A shop on the chat platform with one product whose listing there is synced. */
async function shopWithMug(t: Tenant, sourceOfTruth: 'api' | 'svc' | 'platform') {
  const s = await api('POST', C, t.token, { name: `Drift ${sourceOfTruth}`, default_currency: 'USD', source_of_truth: sourceOfTruth });
  assert.equal(s.status, 201, s.text);
  const shop = s.body.data;
  assert.ok(shop.meta_catalogue_id, 'the shop has its catalogue at the provider');
  const p = await api('POST', `${C}/${shop.id}/products`, t.token, MUG);
  assert.ok([200, 201, 202].includes(p.status), p.text);
  const product = p.body.data;
  const synced = await eventually(
    () => api('GET', `${C}/${shop.id}/products/${product.id}`, t.token),
    (r) => r.body.data?.listings?.find((l: any) => l.platform === 'whatsapp')?.state === 'synced',
    30_000,
  );
  assert.equal(synced.body.data.listings.find((l: any) => l.platform === 'whatsapp')?.state, 'synced', synced.text);
  return { shop, product };
}

const remoteItem = async (metaId: string, sku: string) =>
  (await sim('GET', `/_sim/catalogue/catalogs/${metaId}/items`)).body.items.find((i: any) => i.retailer_id === sku);
const changeRemote = async (metaId: string, sku: string, fields: Record<string, unknown>) => {
  const r = await sim('PATCH', `/_sim/catalogue/catalogs/${metaId}/items/${encodeURIComponent(sku)}`, fields);
  assert.equal(r.status, 200, r.text);
};
const batchesOf = async (metaId: string) => (await sim('GET', `/_sim/catalogue/batches?catalogId=${metaId}`)).body.count as number;

let runs = 0;
/** One pass over the account's shops, started now through the typed starter; answers its progress. */
async function runDrift(t: Tenant): Promise<DriftProgress> {
  const handle = await startWorkflow(
    { temporal, config: { taskQueue: loadConfig().taskQueue } },
    catalogueDriftRunStarter,
    { accountId: t.accountId, runId: `test-${process.pid}-${Date.now()}-${++runs}` },
    [{ accountId: t.accountId }],
  );
  return handle.result();
}

const driftEvents = (t: Tenant) =>
  many<{ payload: any }>(
    em(),
    `select payload from events where account_id = ? and kind = 'product.drifted' order by occurred_at, event_id`,
    [t.accountId],
  );
const listing = (productId: number) =>
  one<{ state: string; drift: any; checked_at: Date | null; pushed_revision: number; platform_item_id: string | null }>(
    em(),
    `select state, drift, checked_at, pushed_revision, platform_item_id from product_listings where product_id = ? and platform = 'whatsapp'`,
    [productId],
  );

test('api: a price changed on the platform is drift; product.drifted is signed out to the endpoint; ours is pushed back', async () => {
  const t = await newTenant();
  const hook = await receiver();
  const ep = await createEndpoint(t.accountId, hook.url, ['product.*']);
  const { shop, product } = await shopWithMug(t, 'api');

  // Stock and the image differ too: never compared.
  await changeRemote(shop.meta_catalogue_id, MUG.sku, { price: '9.99 USD', inventory: 0, image_link: 'https://cdn.example.net/other.png' });
  const result = await runDrift(t);
  assert.deepEqual(
    [result.phase, result.shopsChecked, result.shopsFailed, result.compared, result.drifted, result.newlyDrifted, result.pushedBack],
    ['done', 1, 0, 1, 1, 1, 1],
  );

  const events = await driftEvents(t);
  assert.equal(events.length, 1, 'one product.drifted in the outbox');
  const { event_id, occurred_at, ...fields } = events[0].payload;
  assert.match(event_id, /^evt_/);
  assert.ok(occurred_at);
  assert.deepEqual(fields, {
    event: 'product.drifted',
    account_id: t.accountId,
    catalogue_id: shop.id,
    product_id: product.id,
    sku: MUG.sku,
    platform: 'whatsapp',
    drift: [{ field: 'price', ours: 1250, theirs: 999 }],
    source_of_truth: 'api',
    action: 'pushed_back',
  });

  const remote = await remoteItem(shop.meta_catalogue_id, MUG.sku);
  assert.equal(remote.price, '12.50 USD', 'our price is back on the platform');
  const l = await listing(product.id);
  assert.equal(l?.state, 'synced', 'the push-back settled the drifted listing');
  assert.equal(l?.drift, null);
  assert.ok(l?.checked_at, 'checked_at records the comparison');
  const row = await one<{ price: string }>(em(), 'select price from products where id = ?', [product.id]);
  assert.equal(Number(row!.price), 1250, 'our copy is untouched');

  const got = await eventually(
    async () => hook.got.filter((h) => h.json?.event === 'product.drifted'),
    (g) => g.length === 1,
    30_000,
  );
  assert.equal(got.length, 1, 'delivered to the endpoint subscribed to product.*');
  const delivered = got[0];
  assert.equal(delivered.json.event_id, event_id);
  assert.deepEqual(delivered.json.drift, [{ field: 'price', ours: 1250, theirs: 999 }]);
  assert.equal(delivered.headers['x-signature'], crypto.createHmac('sha256', ep.secret).update(delivered.body).digest('hex'));
  assert.deepEqual(new Webhook(ep.secret).verify(delivered.body, delivered.headers as Record<string, string>), delivered.json);

  const again = await runDrift(t);
  assert.deepEqual([again.compared, again.drifted, again.pushedBack], [1, 0, 0], 'the copies agree again');
  assert.equal((await driftEvents(t)).length, 1);
});

test('platform: the platform values are pulled into our row, nothing is pushed back, and kept drift is not reported twice', async () => {
  const t = await newTenant();
  const { shop, product } = await shopWithMug(t, 'platform');
  const before = await one<{ revision: number }>(em(), 'select revision from products where id = ?', [product.id]);
  const batches = await batchesOf(shop.meta_catalogue_id);

  // Meta's `pending` has no word of ours: the price comes in, the availability stays drifted.
  await changeRemote(shop.meta_catalogue_id, MUG.sku, { price: '9.99 USD', brand: 'Acme Ltd', availability: 'pending' });
  const result = await runDrift(t);
  assert.deepEqual([result.drifted, result.newlyDrifted, result.pulledIn, result.pushedBack], [1, 1, 1, 0]);
  assert.equal(await batchesOf(shop.meta_catalogue_id), batches, 'pulling in pushes nothing back');

  const read = await api('GET', `${C}/${shop.id}/products/${product.id}`, t.token);
  assert.equal(read.body.data.price, 999, 'our price became theirs');
  assert.equal(read.body.data.brand, 'Acme Ltd');
  assert.equal(read.body.data.availability, 'in stock', 'a value our rules cannot hold stays ours');
  const after1 = await one<{ revision: number }>(em(), 'select revision from products where id = ?', [product.id]);
  assert.equal(after1!.revision, before!.revision + 1, 'the pulled-in values are a new revision');
  const l = await listing(product.id);
  assert.equal(l?.state, 'drifted', 'still drifted on the field not pulled in');
  assert.deepEqual(l?.drift, [{ field: 'availability', ours: 'in stock', theirs: 'pending' }]);
  assert.equal(l?.pushed_revision, after1!.revision, 'the platform already holds the new revision: no push owed');

  const events = await driftEvents(t);
  assert.equal(events.length, 1);
  assert.deepEqual(events[0].payload.drift, [
    { field: 'price', ours: 1250, theirs: 999 },
    { field: 'availability', ours: 'in stock', theirs: 'pending' },
    { field: 'brand', ours: 'Acme', theirs: 'Acme Ltd' },
  ]);
  assert.deepEqual([events[0].payload.source_of_truth, events[0].payload.action], ['platform', 'pulled_in']);

  const again = await runDrift(t);
  assert.deepEqual([again.drifted, again.newlyDrifted, again.pulledIn], [1, 0, 0], 'the same drift, an hour later');
  assert.equal((await driftEvents(t)).length, 1, 'not emitted again');

  // The platform is put right: the listing is synced and its drift cleared.
  await changeRemote(shop.meta_catalogue_id, MUG.sku, { availability: 'in stock' });
  const fixed = await runDrift(t);
  assert.equal(fixed.drifted, 0);
  const l2 = await listing(product.id);
  assert.deepEqual([l2?.state, l2?.drift], ['synced', null]);
});

test('an item deleted on the platform is pushed again, without a product.drifted', async () => {
  const t = await newTenant();
  const { shop, product } = await shopWithMug(t, 'svc');
  const r = await sim('DELETE', `/_sim/catalogue/catalogs/${shop.meta_catalogue_id}/items/${MUG.sku}`);
  assert.equal(r.body.deleted, true);
  const result = await runDrift(t);
  assert.deepEqual([result.compared, result.drifted, result.missingRemote, result.pushedBack], [0, 0, 1, 1]);
  const remote = await remoteItem(shop.meta_catalogue_id, MUG.sku);
  assert.equal(remote?.price, '12.50 USD', 'the item is back on the platform');
  assert.equal((await driftEvents(t)).length, 0);
  const l = await listing(product.id);
  assert.equal(l?.state, 'synced');
  assert.equal(l?.platform_item_id, remote.id, 'the new provider id is recorded');
});

test('a run-now is found by its search attributes and answers the progress query', async () => {
  const t = await newTenant();
  await shopWithMug(t, 'api');
  const runId = `query-${process.pid}-${Date.now()}`;
  const handle = await startWorkflow(
    { temporal, config: { taskQueue: loadConfig().taskQueue } },
    catalogueDriftRunStarter,
    { accountId: t.accountId, runId },
    [{ accountId: t.accountId }],
  );
  assert.equal(handle.workflowId, `catalogue-drift/${t.accountId}/${runId}`);
  await handle.result();
  const progress = await handle.query<DriftProgress>('progress');
  assert.deepEqual([progress.phase, progress.shopsChecked], ['done', 1]);
  const desc = await handle.describe();
  assert.equal(desc.type, 'catalogueDriftWorkflow');
  assert.equal(desc.typedSearchAttributes.get(AccountId), String(t.accountId));
  assert.equal(desc.typedSearchAttributes.get(ResourceType), 'catalogue_drift');
});

test('the worker made the hourly schedule, starting the drift pass; making it again keeps it and its pause', async () => {
  const handle = temporal.schedule.getHandle('catalogue-drift');
  await handle.pause('paused by the test');
  await ensureSchedules(temporal, { ...loadConfig(), catalogueDriftPaused: false });
  const d = await handle.describe();
  assert.equal(d.state.paused, true, "a worker start keeps an operator's pause");
  // Left paused: test stacks create it paused (CATALOGUE_DRIFT_PAUSED) so no hourly pass crosses a run.
  assert.equal(d.action.type, 'startWorkflow');
  assert.equal(d.action.type === 'startWorkflow' ? d.action.workflowType : null, 'catalogueDriftWorkflow');
  assert.deepEqual(
    d.spec.intervals?.map((i) => i.every),
    [3600_000],
  );
});
