// Records the product feed pull's histories for the replay test:
//   npx tsx scripts/record-feeds.ts
// A stack of its own (loopback destinations allowed: the feed files are served by this process),
// then test/replay/histories/feedPullWorkflow/<scenario>.json. Re-record after a change to the
// feed pull or to the batch's steps it runs (workflows/catalogues/sync-steps.ts).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { withRecorder } from './recorder.js';
import { feedPullWorkflowId, feedScheduleId } from '../workflows/catalogues/feed-pull.starter.js';

const TYPE = 'feedPullWorkflow';
const csv = (n: number) =>
  'id,title,price\n' + Array.from({ length: n }, (_, i) => `R-${i + 1},Recorded ${i + 1},${i + 1}.00 TZS`).join('\n');
let body = csv(24);
const server = http.createServer((req, res) => {
  if (req.url === '/feed.csv') return void res.writeHead(200, { 'content-type': 'text/csv' }).end(body);
  res.writeHead(404).end('missing');
});
await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

await withRecorder(
  'svc-record-feeds',
  // Several ingest chunks per run.
  { ALLOW_LOOPBACK_DESTINATIONS: 'true', CATALOGUE_SYNC_CHUNK_SIZE: '10' },
  'Feed recorder',
  async ({ client, account, api: apiCall, save: saveHistory }) => {
    const save = (scenario: string, workflowId: string) => saveHistory(TYPE, scenario, client.workflow.getHandle(workflowId));
    const shop = (await apiCall('POST', '/api/v3/catalogues', { name: 'Recorded feeds', channels: [], default_currency: 'TZS' })).data;

    // A replace feed on an hourly schedule: the first pull stages and applies 24 rows.
    const feed = (await apiCall('POST', `/api/v3/catalogues/${shop.id}/feeds`, { url: `${base}/feed.csv`, schedule: 'hourly' })).data;
    await save('completed', feedPullWorkflowId(account.id, feed.id, feed.last_sync_id));

    // The file lost most of its rows: the shrink guard fails the run, nothing applied.
    body = csv(3);
    const shrunk = (await apiCall('POST', `/api/v3/catalogues/${shop.id}/feeds/${feed.id}/run`)).data;
    await save('shrink-refused', feedPullWorkflowId(account.id, feed.id, shrunk.sync_id));

    // A scheduled pull (triggered now) records its own run.
    body = csv(24);
    const schedule = client.schedule.getHandle(feedScheduleId(account.id, feed.id));
    await schedule.trigger();
    let scheduledId: string | undefined;
    for (let i = 0; i < 100 && !scheduledId; i++) {
      scheduledId = (await schedule.describe()).info.recentActions.at(-1)?.action.workflow.workflowId;
      if (!scheduledId) await new Promise((r) => setTimeout(r, 200));
    }
    if (!scheduledId) throw new Error('the schedule started no pull');
    await save('scheduled', scheduledId);

    // A URL that answers 404: failed at once with the status.
    const missing = (await apiCall('POST', `/api/v3/catalogues/${shop.id}/feeds`, { url: `${base}/gone.csv`, mode: 'upsert' })).data;
    await save('not-found', feedPullWorkflowId(account.id, missing.id, missing.last_sync_id));
  },
).finally(() => {
  server.closeAllConnections();
  server.close();
});
