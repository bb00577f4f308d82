// Records the drift comparison's histories for the replay test:
//   npx tsx scripts/record-catalogue-drift.ts
// A stack of its own, shops with a product pushed to the simulator's Meta catalogue, the platform
// copy changed through the simulator's controls, then passes started at once (run-now) instead of
// at the hour: test/replay/histories/catalogueDriftWorkflow/<scenario>.json. Re-record after a
// change to the drift workflow or to the push steps it runs (workflows/catalogues/push-steps.ts).
import fs from 'node:fs';
import path from 'node:path';
import { Connection, Client } from '@temporalio/client';
import { historyToJSON } from '@temporalio/common/lib/proto-utils.js';
import { privateRunStack, projectRoot } from './stack.js';
import { loadConfig } from '../config.js';
import { startWorkflow } from '../temporal/starters.js';
import type { CatalogueDriftInput } from '../workflows/catalogues/catalogue-drift.js';
import { catalogueDriftRunStarter } from '../workflows/catalogues/catalogue-drift.starter.js';

const TYPE = 'catalogueDriftWorkflow';
const operatorToken = 'record-operator-token';
const { stack, dataDir } = await privateRunStack('svc-record-drift', { OPERATOR_TOKEN: operatorToken, LOG_LEVEL: 'warn' });
const call = async (method: string, url: string, token: string, payload?: unknown) => {
  const res = await fetch(url, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json' },
    body: payload === undefined ? undefined : JSON.stringify(payload),
  });
  return res.json() as Promise<any>;
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const connection = await Connection.connect({ address: stack.temporalAddress });
const client = new Client({ connection });
try {
  const admin = (method: string, p: string, payload?: unknown) => call(method, `${stack.apiUrl}/admin/v1${p}`, operatorToken, payload);
  const sim = (method: string, p: string, payload?: unknown) => call(method, `${stack.simulatorUrl}/_sim${p}`, '', payload);
  const account = (await admin('POST', '/accounts', { name: 'Drift recorder' })).data;
  const user = (await admin('POST', `/accounts/${account.id}/users`, { email: 'drift@example.com', name: 'Recorder', permissions: ['*'] }))
    .data;
  const key = (await admin('POST', `/accounts/${account.id}/keys`, { name: 'recorder', user_id: user.id })).data.token;
  const apiCall = (method: string, p: string, payload?: unknown) => call(method, `${stack.apiUrl}${p}`, key, payload);

  /** A shop on the chat platform with one product whose listing there is synced. */
  const shopWithMug = async (name: string, sourceOfTruth: string) => {
    const shop = (await apiCall('POST', '/api/v3/catalogues', { name, default_currency: 'USD', source_of_truth: sourceOfTruth })).data;
    const product = (
      await apiCall('POST', `/api/v3/catalogues/${shop.id}/products`, {
        sku: 'MUG-1',
        name: 'Blue mug',
        price: 1250,
        image_url: 'https://img.example.com/mug.png',
      })
    ).data;
    for (let i = 0; i < 100; i++) {
      const read = (await apiCall('GET', `/api/v3/catalogues/${shop.id}/products/${product.id}`)).data;
      if (read.listings.find((l: any) => l.platform === 'whatsapp')?.state === 'synced') break;
      await sleep(200);
    }
    return shop;
  };
  const changePrice = (shop: any, price: string) => sim('PATCH', `/catalogue/catalogs/${shop.meta_catalogue_id}/items/MUG-1`, { price });

  let runs = 0;
  const pass = async (scenario: string, input: CatalogueDriftInput, firstRunOnly = false) => {
    const handle = await startWorkflow(
      { temporal: client, config: { taskQueue: loadConfig().taskQueue } },
      catalogueDriftRunStarter,
      { accountId: account.id, runId: `record-${++runs}` },
      [input],
    );
    await handle.result();
    const file = path.join(projectRoot, 'test/replay/histories', TYPE, `${scenario}.json`);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    let history = await client.workflow.getHandle(handle.workflowId).fetchHistory();
    if (firstRunOnly) {
      const firstRunId = history.events?.[0]?.workflowExecutionStartedEventAttributes?.continuedExecutionRunId;
      if (!firstRunId) throw new Error(`${scenario}: the pass did not continue as new`);
      history = await client.workflow.getHandle(handle.workflowId, firstRunId).fetchHistory();
    }
    fs.writeFileSync(file, historyToJSON(history));
    process.stdout.write(`recorded ${path.relative(projectRoot, file)}\n`);
  };

  // api: a price changed on the platform is pushed back (send, then the batch handle polled).
  const pushed = await shopWithMug('Recorded drift api', 'api');
  await changePrice(pushed, '9.99 USD');
  await pass('pushed-back', { accountId: account.id });

  // platform: the platform's price is pulled in; nothing is pushed.
  const pulled = await shopWithMug('Recorded drift platform', 'platform');
  await changePrice(pulled, '8.00 USD');
  await pass('pulled-in', { accountId: account.id });

  // One shop per page and per run: the first run ends in continue-as-new, which is the history kept.
  await changePrice(pushed, '7.77 USD');
  await pass('continued-as-new', { accountId: account.id, shopsPerPage: 1, shopsPerRun: 1 }, true);
} finally {
  await connection.close();
  await stack.stop();
  fs.rmSync(dataDir, { recursive: true, force: true });
}
