import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { Connection, Client, WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { openOrm } from '../../entities/orm.js';
import { many, one } from '../../entities/db.js';
import { loadConfig } from '../../config.js';
import { executeUpdateWithStart, startWorkflow } from '../../temporal/starters.js';
import { catalogueSetupStarter } from '../../workflows/catalogues/catalogue-setup.starter.js';
import { productPushStarter } from '../../workflows/catalogues/product-push.starter.js';
import { productsPushStarter } from '../../workflows/catalogues/products-push.starter.js';
import { eventually, newTenant, sim } from '../support/stack.js';

// The platform side on the real stack: the worker's activities against the simulator's Meta
// catalogue API. Shops and products are written with SQL (the REST operations are tested in their
// own files); pushes are started through the typed starters, as the services start them.
const orm = await openOrm(process.env.DATABASE_URL!, 4);
const connection = await Connection.connect({ address: process.env.TEMPORAL_ADDRESS ?? '127.0.0.1:7233' });
const temporal = new Client({ connection });
const deps = { temporal, config: loadConfig() };
after(async () => {
  await connection.close();
  await orm.close();
});

const db = () => orm.em.fork();
let seq = 0;

async function shop(accountId: number, channels: string[] = ['whatsapp', 'storefront']): Promise<number> {
  const row = await one<{ id: number }>(
    db(),
    `insert into catalogues (account_id, name, default_currency, channels, sku_prefix, created_at, updated_at)
     values (?, ?, 'USD', ?::jsonb, 'TST', now(), now()) returning id`,
    [accountId, `Shop ${process.pid}-${++seq}`, JSON.stringify(channels)],
  );
  return row!.id;
}

async function setUp(accountId: number, catalogueId: number): Promise<string> {
  const handle = await startWorkflow(deps, catalogueSetupStarter, { accountId, catalogueId }, [{ accountId, catalogueId }]);
  return (await handle.result()).metaCatalogueId;
}

interface ProductInput {
  sku: string;
  name?: string;
  price?: number;
  image?: string | null;
}
async function products(accountId: number, catalogueId: number, list: ProductInput[]): Promise<number[]> {
  const rows = await many<{ id: string }>(
    db(),
    `insert into products (account_id, catalogue_id, sku, name, price, currency, image_url, availability, created_at, updated_at)
     select ?, ?, v.sku, v.name, v.price, 'USD', v.image, 'in stock', now(), now()
       from unnest(?::text[], ?::text[], ?::bigint[], ?::text[]) with ordinality as v(sku, name, price, image, n)
      order by v.n returning id`,
    [
      accountId,
      catalogueId,
      list.map((p) => p.sku),
      list.map((p) => p.name ?? `Product ${p.sku}`),
      list.map((p) => p.price ?? 1250),
      list.map((p) => (p.image === undefined ? `https://img.example/${p.sku}.jpg` : p.image)),
    ],
  );
  return rows.map((r) => Number(r.id));
}

const listings = (productIds: number[]) =>
  many<{
    product_id: string;
    sku: string;
    platform: string;
    state: string;
    problem: string | null;
    platform_item_id: string | null;
    meta_product_id: string | null;
  }>(
    db(),
    `select l.product_id, p.sku, l.platform, l.state, l.problem, l.platform_item_id, p.meta_product_id
       from product_listings l join products p on p.id = l.product_id
      where l.product_id = any(?::bigint[]) order by p.sku, l.platform`,
    [productIds],
  );
const listingOf = async (productId: number, platform: string) => (await listings([productId])).find((l) => l.platform === platform);

async function push(accountId: number, catalogueId: number, productIds: number[], removals?: { sku: string }[]) {
  const pushId = `test-${process.pid}-${++seq}`;
  const handle = await startWorkflow(deps, productsPushStarter, { accountId, catalogueId, pushId }, [
    { accountId, catalogueId, productIds, ...(removals ? { removals } : {}), cause: { kind: 'test' } },
  ]);
  return handle.result();
}

const simItems = async (metaId: string) => (await sim('GET', `/_sim/catalogue/catalogs/${metaId}/items`)).body.items as any[];

test('a shop’s provider catalogue is created once (a repeated setup returns the stored id)', { timeout: 60_000 }, async () => {
  const t = await newTenant();
  const id = await shop(t.accountId);
  const metaId = await setUp(t.accountId, id);
  assert.match(metaId, /^\d+$/);
  const stored = await one<{ meta_catalogue_id: string }>(db(), 'select meta_catalogue_id from catalogues where id = ?', [id]);
  assert.equal(stored?.meta_catalogue_id, metaId);
  assert.equal(await setUp(t.accountId, id), metaId);
  const remote = (await sim('GET', '/_sim/catalogue/catalogs')).body.catalogs.filter((c: any) => c.id === metaId);
  assert.equal(remote.length, 1);
});

test('a refused catalogue creation fails the setup with ProviderRefused and the provider’s words', { timeout: 60_000 }, async () => {
  const t = await newTenant();
  const id = await shop(t.accountId);
  const { name } = (await one<{ name: string }>(db(), 'select name from catalogues where id = ?', [id]))!;
  await sim('POST', '/_sim/catalogue/faults', { kind: 'refuse_create', code: 200, name });
  const err = await setUp(t.accountId, id).then(
    () => null,
    (e: Error) => e,
  );
  assert.ok(err instanceof WorkflowFailedError, String(err));
  let cause: Error | undefined = err;
  while (cause && !(cause instanceof ApplicationFailure)) cause = cause.cause as Error | undefined;
  assert.ok(cause instanceof ApplicationFailure);
  assert.equal(cause.type, 'ProviderRefused');
  assert.match(cause.message ?? '', /business_management/);
});

test(
  'listings: blocked for a missing image on whatsapp but synced on the storefront; a zero price is blocked on both',
  { timeout: 60_000 },
  async () => {
    const t = await newTenant();
    const id = await shop(t.accountId);
    const metaId = await setUp(t.accountId, id);
    const [full, noImage, free] = await products(t.accountId, id, [{ sku: 'A-1' }, { sku: 'A-2', image: null }, { sku: 'A-3', price: 0 }]);
    const outcome = await push(t.accountId, id, [full, noImage, free]);
    assert.deepEqual(outcome.platforms, {
      whatsapp: { synced: 1, blocked: 2, failed: 0 },
      storefront: { synced: 2, blocked: 1, failed: 0 },
    });
    assert.equal(outcome.refused, undefined);
    const rows = await listings([full, noImage, free]);
    assert.deepEqual(
      rows.map((r) => [r.sku, r.platform, r.state, r.problem]),
      [
        ['A-1', 'storefront', 'synced', null],
        ['A-1', 'whatsapp', 'synced', null],
        ['A-2', 'storefront', 'synced', null],
        ['A-2', 'whatsapp', 'blocked', 'image_url is required to publish'],
        ['A-3', 'storefront', 'blocked', 'price must be above zero to publish'],
        ['A-3', 'whatsapp', 'blocked', 'price must be above zero to publish'],
      ],
    );
    const synced = rows.find((r) => r.sku === 'A-1' && r.platform === 'whatsapp')!;
    assert.match(synced.platform_item_id ?? '', /^\d{16}$/);
    assert.equal(synced.meta_product_id, synced.platform_item_id);
    const items = await simItems(metaId);
    assert.deepEqual(
      items.map((i) => [i.retailer_id, i.price, i.name, i.availability]),
      [['A-1', '12.50 USD', 'Product A-1', 'in stock']],
    );
    assert.match(items[0].url, new RegExp(`^http://127\\.0\\.0\\.1:\\d+/shop/${id}/p/A-1$`), 'the item links to its page in the shop');
    assert.ok(
      outcome.problems.some((p) => p.sku === 'A-2' && p.stage === 'whatsapp'),
      'the blocked product is a problem with the platform as stage',
    );
  },
);

test(
  'an item the platform rejects asynchronously is failed with its error; the rest of the batch is synced',
  { timeout: 60_000 },
  async () => {
    const t = await newTenant();
    const id = await shop(t.accountId, ['whatsapp']);
    const metaId = await setUp(t.accountId, id);
    const sku = `BAD-${process.pid}-${seq}`;
    await sim('POST', '/_sim/catalogue/faults', {
      kind: 'item_error',
      catalogId: metaId,
      retailerIds: [sku],
      message: 'Product image is not accessible',
    });
    const [good, bad] = await products(t.accountId, id, [{ sku: `OK-${process.pid}-${seq}` }, { sku }]);
    const outcome = await push(t.accountId, id, [good, bad]);
    assert.deepEqual(outcome.platforms.whatsapp, { synced: 1, blocked: 0, failed: 1 });
    assert.deepEqual(outcome.problems, [{ sku, stage: 'whatsapp', reason: 'Product image is not accessible' }]);
    assert.deepEqual(
      (await listings([bad])).map((l) => [l.state, l.problem]),
      [['failed', 'Product image is not accessible']],
    );
    assert.equal((await listingOf(good, 'whatsapp'))?.state, 'synced');
  },
);

test(
  'a synchronous refusal of items_batch: listings failed with the provider’s words, the push reports `refused`',
  { timeout: 60_000 },
  async () => {
    const t = await newTenant();
    const id = await shop(t.accountId);
    const metaId = await setUp(t.accountId, id);
    await sim('POST', '/_sim/catalogue/faults', { kind: 'refuse_batch', catalogId: metaId, code: 200 });
    const [p] = await products(t.accountId, id, [{ sku: 'R-1' }]);
    const outcome = await push(t.accountId, id, [p]);
    assert.equal(outcome.refused?.platform, 'whatsapp');
    assert.match(outcome.refused?.message ?? '', /business_management.*provider code 200/);
    const l = await listingOf(p, 'whatsapp');
    assert.equal(l?.state, 'failed');
    assert.match(l?.problem ?? '', /business_management/);
    assert.equal((await listingOf(p, 'storefront'))?.state, 'synced', 'the storefront does not depend on the chat platform');
  },
);

test(
  'a product push answers at acceptance, settles, carries a later edit, and removes the product everywhere',
  { timeout: 90_000 },
  async () => {
    const t = await newTenant();
    const id = await shop(t.accountId);
    const metaId = await setUp(t.accountId, id);
    const [p] = await products(t.accountId, id, [{ sku: 'P-1' }]);
    const key = { accountId: t.accountId, productId: p };
    const args = [{ accountId: t.accountId, catalogueId: id, productId: p }] as [
      { accountId: number; catalogueId: number; productId: number },
    ];
    const first = await executeUpdateWithStart(deps, productPushStarter, key, args, 'pushRevision', [{ revision: 1 }]);
    assert.deepEqual(first, {
      accepted: true,
      listings: [
        { platform: 'whatsapp', state: 'syncing', problem: null },
        { platform: 'storefront', state: 'synced', problem: null },
      ],
    });
    await eventually(
      () => listingOf(p, 'whatsapp'),
      (l) => l?.state === 'synced',
      15_000,
    );
    await db().execute(`update products set name = 'Renamed', price = 990, revision = 2 where id = ?`, [p]);
    const second = await executeUpdateWithStart(deps, productPushStarter, key, args, 'pushRevision', [{ revision: 2 }]);
    assert.equal(second.accepted, true);
    const renamed = await eventually(
      () => simItems(metaId),
      (items) => items[0]?.name === 'Renamed',
      15_000,
    );
    assert.equal(renamed[0].price, '9.90 USD');
    const removed = await executeUpdateWithStart(deps, productPushStarter, key, args, 'pushRevision', [{ revision: 2, remove: true }]);
    assert.deepEqual(removed, { accepted: true, listings: [] });
    const gone = await eventually(
      () => simItems(metaId),
      (items) => items.length === 0,
      15_000,
    );
    assert.equal(gone.length, 0);
  },
);

test('removals by sku and retired products are deleted on the platform', { timeout: 60_000 }, async () => {
  const t = await newTenant();
  const id = await shop(t.accountId);
  const metaId = await setUp(t.accountId, id);
  const [a, b, c] = await products(t.accountId, id, [{ sku: 'D-1' }, { sku: 'D-2' }, { sku: 'D-3' }]);
  await push(t.accountId, id, [a, b, c]);
  assert.equal((await simItems(metaId)).length, 3);
  await db().execute('update products set retired_at = now() where id = ?', [b]);
  await db().execute('delete from products where id = ?', [c]);
  const outcome = await push(t.accountId, id, [b], [{ sku: 'D-3' }]);
  assert.equal(outcome.refused, undefined);
  assert.deepEqual(
    (await simItems(metaId)).map((i) => i.retailer_id),
    ['D-1'],
  );
  assert.deepEqual(await listings([b]), [], 'a retired product is listed nowhere');
});

test('5,000 products go out in one items_batch call and all settle synced', { timeout: 120_000 }, async () => {
  const t = await newTenant();
  const id = await shop(t.accountId);
  const metaId = await setUp(t.accountId, id);
  const ids = await products(
    t.accountId,
    id,
    Array.from({ length: 5000 }, (_, i) => ({ sku: `BULK-${String(i).padStart(5, '0')}` })),
  );
  const started = Date.now();
  const outcome = await push(t.accountId, id, ids);
  const ms = Date.now() - started;
  assert.deepEqual(outcome.platforms, {
    whatsapp: { synced: 5000, blocked: 0, failed: 0 },
    storefront: { synced: 5000, blocked: 0, failed: 0 },
  });
  const batches = (await sim('GET', `/_sim/catalogue/batches?catalogId=${metaId}`)).body;
  assert.equal(batches.count, 1);
  assert.equal(batches.batches[0].requests, 5000);
  const states = await one<{ synced: string; with_id: string }>(
    db(),
    `select count(*) filter (where state = 'synced') as synced, count(platform_item_id) as with_id
       from product_listings where platform = 'whatsapp' and product_id = any(?::bigint[])`,
    [ids],
  );
  assert.deepEqual([Number(states!.synced), Number(states!.with_id)], [5000, 5000]);
  assert.ok(ms < 10_000, `pushed and settled in ${ms} ms`);
});
