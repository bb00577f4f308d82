// Catalogue platform scenarios for the replay test: the provider catalogue setup, a many-product push
// and a product's pushes, recorded against the simulator's Meta catalogue API.
//   npx tsx scripts/record-catalogue-platform.ts      (a private stack of its own, like record-history)
// recordCataloguePlatformScenarios can also be called from record-history.ts with its stack.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Connection, Client } from '@temporalio/client';
import { historyToJSON } from '@temporalio/common/lib/proto-utils.js';
import { privateRunStack, projectRoot } from './stack.js';
import { openOrm } from '../entities/orm.js';
import { exec, many, one } from '../entities/db.js';
import { executeUpdateWithStart, startWorkflow } from '../temporal/starters.js';
import { catalogueSetupStarter } from '../workflows/catalogues/catalogue-setup.starter.js';
import { productPushStarter } from '../workflows/catalogues/product-push.starter.js';
import { productsPushStarter } from '../workflows/catalogues/products-push.starter.js';
import { loadConfig } from '../config.js';

interface Ctx {
  client: Client;
  databaseUrl: string;
  simulatorUrl: string;
  accountId: number;
}

async function save(client: Client, type: string, scenario: string, workflowId: string) {
  const handle = client.workflow.getHandle(workflowId);
  await handle.result().catch(() => {});
  const file = path.join(projectRoot, 'test/replay/histories', type, `${scenario}.json`);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, historyToJSON(await handle.fetchHistory()));
  process.stdout.write(`recorded ${path.relative(projectRoot, file)}\n`);
}

export async function recordCataloguePlatformScenarios(c: Ctx) {
  const orm = await openOrm(c.databaseUrl, 2);
  const deps = { temporal: c.client, config: loadConfig() };
  const simCall = (method: string, p: string, body?: unknown) =>
    fetch(`${c.simulatorUrl}${p}`, {
      method,
      headers: { 'content-type': 'application/json' },
      body: body ? JSON.stringify(body) : undefined,
    });
  try {
    const em = () => orm.em.fork();
    const shop = async (name: string) =>
      (await one<{ id: number }>(
        em(),
        `insert into catalogues (account_id, name, default_currency, channels, sku_prefix, created_at, updated_at)
         values (?, ?, 'USD', '["whatsapp","storefront"]'::jsonb, 'REC', now(), now()) returning id`,
        [c.accountId, name],
      ))!.id;
    const products = async (catalogueId: number, rows: Array<{ sku: string; image?: string | null; price?: number }>) =>
      (
        await many<{ id: string }>(
          em(),
          `insert into products (account_id, catalogue_id, sku, name, price, currency, image_url, availability, created_at, updated_at)
           select ?, ?, v.sku, 'Recorded ' || v.sku, v.price, 'USD', v.image, 'in stock', now(), now()
             from unnest(?::text[], ?::bigint[], ?::text[]) with ordinality v(sku, price, image, n) order by v.n returning id`,
          [
            c.accountId,
            catalogueId,
            rows.map((r) => r.sku),
            rows.map((r) => r.price ?? 1250),
            rows.map((r) => (r.image === undefined ? `https://img.example/${r.sku}.jpg` : r.image)),
          ],
        )
      ).map((r) => Number(r.id));
    const setUp = async (catalogueId: number) => {
      const h = await startWorkflow(deps, catalogueSetupStarter, { accountId: c.accountId, catalogueId }, [
        { accountId: c.accountId, catalogueId },
      ]);
      await h.result().catch(() => {});
      return h.workflowId;
    };

    const shopId = await shop('Recorded shop');
    await save(c.client, 'catalogueSetupWorkflow', 'created', await setUp(shopId));
    const refusedShop = await shop('Refused shop');
    await simCall('POST', '/_sim/catalogue/faults', { kind: 'refuse_create', code: 200 });
    await save(c.client, 'catalogueSetupWorkflow', 'provider-refused', await setUp(refusedShop));

    const meta = (await one<{ meta_catalogue_id: string }>(em(), 'select meta_catalogue_id from catalogues where id = ?', [shopId]))!
      .meta_catalogue_id;
    const ids = await products(shopId, [{ sku: 'R-1' }, { sku: 'R-2', image: null }, { sku: 'R-3' }]);
    await simCall('POST', '/_sim/catalogue/faults', {
      kind: 'item_error',
      catalogId: meta,
      retailerIds: ['R-3'],
      message: 'Recorded item error',
    });
    const pushed = await startWorkflow(deps, productsPushStarter, { accountId: c.accountId, catalogueId: shopId, pushId: 'recorded-1' }, [
      { accountId: c.accountId, catalogueId: shopId, productIds: ids, removals: [{ sku: 'GONE-1' }], cause: { kind: 'record' } },
    ]);
    await save(c.client, 'productsPushWorkflow', 'synced-blocked-failed', pushed.workflowId);

    await simCall('POST', '/_sim/catalogue/faults', { kind: 'refuse_batch', catalogId: meta, code: 100 });
    const refused = await startWorkflow(deps, productsPushStarter, { accountId: c.accountId, catalogueId: shopId, pushId: 'recorded-2' }, [
      { accountId: c.accountId, catalogueId: shopId, productIds: [ids[0]], cause: { kind: 'record' } },
    ]);
    await save(c.client, 'productsPushWorkflow', 'provider-refused', refused.workflowId);

    const [productId] = await products(shopId, [{ sku: 'R-P' }]);
    const key = { accountId: c.accountId, productId };
    const args: [{ accountId: number; catalogueId: number; productId: number }] = [
      { accountId: c.accountId, catalogueId: shopId, productId },
    ];
    await executeUpdateWithStart(deps, productPushStarter, key, args, 'pushRevision', [{ revision: 1 }]);
    await exec(em(), `update products set name = 'Recorded again', revision = 2 where id = ?`, [productId]);
    await executeUpdateWithStart(deps, productPushStarter, key, args, 'pushRevision', [{ revision: 2 }]);
    await executeUpdateWithStart(deps, productPushStarter, key, args, 'pushRevision', [{ revision: 2, remove: true }]);
    await save(c.client, 'productPushWorkflow', 'pushed-edited-removed', productPushStarter.workflowId(key));
  } finally {
    await orm.close();
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { stack, dataDir } = await privateRunStack('svc-record-catalogue', {
    OPERATOR_TOKEN: 'record-operator-token',
    LOG_LEVEL: 'warn',
    SIM_CATALOGUE_BATCH_MS: '100',
  });
  const connection = await Connection.connect({ address: stack.temporalAddress });
  const client = new Client({ connection });
  try {
    const operator = 'record-operator-token';
    const res = await fetch(`${stack.apiUrl}/admin/v1/accounts`, {
      method: 'POST',
      headers: { authorization: `Bearer ${operator}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Catalogue recorder' }),
    });
    const account = ((await res.json()) as any).data;
    await recordCataloguePlatformScenarios({
      client,
      databaseUrl: stack.databaseUrl,
      simulatorUrl: stack.simulatorUrl,
      accountId: account.id,
    });
  } finally {
    await connection.close();
    await stack.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}
