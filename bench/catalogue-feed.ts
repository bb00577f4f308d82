// A 50,000-row CSV product feed pulled end to end: served by a local HTTP server of this process,
// fetched, parsed, mapped and staged by the worker, applied by the batch's steps, then pulled again
// (every row unchanged). Reports each pull's time and the worker's peak resident memory.
//   npx tsx bench/catalogue-feed.ts [-- --rows 50000 --timeout 900 --repull 1]
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { benchStack, numberArg } from './lib.js';
import { connectTemporalClient } from '../temporal/client.js';
import { feedPullWorkflowId } from '../workflows/catalogues/feed-pull.starter.js';

const rows = numberArg('rows', 50_000);
const timeoutS = numberArg('timeout', 900);
/** 0 skips the second pull (same file, every row unchanged: the replace step compares all 50,000). */
const repull = numberArg('repull', 1);

// The feed: Meta's CSV columns, prices as "9.99 TZS", a description long enough to look real.
const header =
  'id,title,description,availability,condition,price,link,image_link,brand,google_product_category,quantity_to_sell_on_facebook\n';
const line = (i: number) =>
  `SKU-${String(i).padStart(6, '0')},Product ${i},"A sturdy product, number ${i}, made to last; ships in two days",in stock,new,` +
  `${(i % 900) + 100}.${String(i % 100).padStart(2, '0')} TZS,https://shop.example/p/${i},https://cdn.example/p/${i}.jpg,Brand ${i % 40},Home > Kitchen,${i % 50}\n`;
let feedBytes = header.length;
for (let i = 1; i <= rows; i++) feedBytes += Buffer.byteLength(line(i));
const server = http.createServer((_req, res) => {
  // Written in pieces, as a real server streams a large file.
  res.writeHead(200, { 'content-type': 'text/csv', 'content-length': String(feedBytes) });
  res.write(header);
  let i = 1;
  const more = () => {
    while (i <= rows) {
      let piece = '';
      for (const end = Math.min(rows, i + 499); i <= end; i++) piece += line(i);
      if (!res.write(piece)) return void res.once('drain', more);
    }
    res.end();
  };
  more();
});
await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
const feedUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/feed.csv`;

const { stack, dir, accountId, operator } = await benchStack({ ALLOW_LOOPBACK_DESTINATIONS: 'true' });
const out: Record<string, unknown> = { rows, feedMb: Math.round((feedBytes / 1048576) * 10) / 10 };
const workerPid = stack.children.get('worker')!.pid!;
const mem = (field: 'VmHWM' | 'VmRSS') => {
  const m = new RegExp(`${field}:\\s+(\\d+) kB`).exec(fs.readFileSync(`/proc/${workerPid}/status`, 'utf8'));
  return Math.round(Number(m?.[1] ?? 0) / 1024);
};
const call = async (method: string, path: string, token: string, body?: unknown) => {
  const res = await fetch(`${stack.apiUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = (await res.json()) as any;
  if (res.status >= 400) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
  return json.data;
};
let sampledPeak = 0;
const sampler = setInterval(() => {
  try {
    sampledPeak = Math.max(sampledPeak, mem('VmRSS'));
  } catch {
    /* exited */
  }
}, 250);
try {
  // Catalogue endpoints need a key issued by a user.
  const user = await call('POST', `/admin/v1/accounts/${accountId}/users`, operator, {
    email: 'bench@example.com',
    name: 'Bench',
    permissions: ['*'],
  });
  const token = (await call('POST', `/admin/v1/accounts/${accountId}/keys`, operator, { name: 'bench issued', user_id: user.id })).token;
  // No platforms: the feed path itself, not the provider push, is measured.
  const shop = await call('POST', '/api/v3/catalogues', token, { name: 'Bench shop', channels: [], default_currency: 'TZS' });
  await new Promise((r) => setTimeout(r, 2000));
  out.workerBeforeMb = { peakRss: mem('VmHWM'), rss: mem('VmRSS') };
  let hwmReset = true;
  try {
    fs.writeFileSync(`/proc/${workerPid}/clear_refs`, '5');
  } catch {
    hwmReset = false;
  }
  sampledPeak = 0;
  const temporal = await connectTemporalClient(stack.temporalAddress, 'default');
  // The pull's own share (download, parse, map, stage: the pullFeed activity) and the apply steps'
  // (ingest, retire, finish), from the workflow's history.
  const split = async (feedId: number, syncId: number) => {
    const history = await temporal.client.workflow.getHandle(feedPullWorkflowId(accountId, feedId, syncId)).fetchHistory();
    const at = (e: { eventTime?: { seconds?: unknown; nanos?: number | null } | null }) =>
      Number(e.eventTime?.seconds ?? 0) * 1000 + (e.eventTime?.nanos ?? 0) / 1e6;
    const events = history.events ?? [];
    const scheduled = events.find((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'pullFeed');
    const done = events.find(
      (e) => e.activityTaskCompletedEventAttributes?.scheduledEventId?.toString() === scheduled?.eventId?.toString(),
    );
    const last = events.at(-1);
    if (!scheduled || !done || !last) return null;
    return { pullSeconds: Math.round((at(done) - at(scheduled)) / 100) / 10, applySeconds: Math.round((at(last) - at(done)) / 100) / 10 };
  };
  const waitFor = async (syncId: number, t0: number) => {
    for (;;) {
      const run = await call('GET', `/api/v3/catalogues/${shop.id}/syncs/${syncId}`, token);
      if (run.status === 'completed' || run.status === 'failed') return { run, seconds: Math.round((performance.now() - t0) / 100) / 10 };
      if ((performance.now() - t0) / 1000 > timeoutS) throw new Error(`sync ${syncId} did not finish in ${timeoutS} s`);
      await new Promise((r) => setTimeout(r, 500));
    }
  };
  let t0 = performance.now();
  const feed = await call('POST', `/api/v3/catalogues/${shop.id}/feeds`, token, { url: feedUrl });
  const first = await waitFor(feed.last_sync_id, t0);
  out.firstPull = {
    status: first.run.status,
    seconds: first.seconds,
    rowsPerSecond: Math.round(rows / first.seconds),
    received: first.run.received,
    created: first.run.created,
    rejected: first.run.rejected,
    failureReason: first.run.failure_reason,
    ...(await split(feed.id, feed.last_sync_id)),
  };
  out.workerFirstPullMb = { peakRss: hwmReset ? mem('VmHWM') : null, sampledPeakRss: sampledPeak };
  // Printed now too: a second pull that never ends still leaves the first's figures.
  process.stdout.write(`first pull: ${JSON.stringify({ ...out })}\n`);
  if (repull) {
    t0 = performance.now();
    const again = await call('POST', `/api/v3/catalogues/${shop.id}/feeds/${feed.id}/run`, token);
    const second = await waitFor(again.sync_id, t0);
    out.secondPull = {
      status: second.run.status,
      seconds: second.seconds,
      rowsPerSecond: Math.round(rows / second.seconds),
      updated: second.run.updated,
      retired: second.run.retired,
      ...(await split(feed.id, again.sync_id)),
    };
  }
  await temporal.close();
  out.workerPeakRssMb = hwmReset ? mem('VmHWM') : sampledPeak;
  out.workerSampledPeakRssMb = sampledPeak;
  out.workerEndRssMb = mem('VmRSS');
  out.otherPeakRssMb = Object.fromEntries(
    ['api', 'simulator'].map((name) => {
      const m = /VmHWM:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${stack.children.get(name)!.pid}/status`, 'utf8'));
      return [name, Math.round(Number(m?.[1] ?? 0) / 1024)];
    }),
  );
  process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
} finally {
  clearInterval(sampler);
  server.closeAllConnections();
  server.close();
  await stack.stop();
  fs.rmSync(dir, { recursive: true, force: true });
}
