// A 100,000-contact SMS campaign dispatched end to end to the simulator, beside the database's own
// floor (the same 100,000 message rows inserted in one statement) in the same run.
//   npx tsx bench/campaign.ts [-- --contacts 100000 --timeout 900 --workers 2]
// --workers N starts N-1 more worker processes beside the stack's own (same task queue, database
// and Temporal server): the batch dispatch's runs spread over them (DISPATCH_RUNS).
// --worker-cpu F caps every worker process at F of one CPU (a cgroup each, root only): on this
// two-core machine the database, the simulator and the API already take both cores, so only with
// the workers made the bottleneck does a second one show what it adds.
// --webhook subscribes one endpoint (a receiver in this process, answering 204) to message.* and
// waits until every message event of the run reached it: how long after the last send.
import fs from 'node:fs';
import path from 'node:path';
import { spawn, type ChildProcess } from 'node:child_process';
import pg from 'pg';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { benchStack, capCpu, numberArg, stackCpuSeconds } from './lib.js';
import { costPerMessage, httpExchangeFloor, messageUpdatesNow, walNow } from './message-cost.js';
import { connectTemporalClient } from '../temporal/client.js';

const contacts = numberArg('contacts', 100_000);
// Statements per message come from pg_stat_statements (issue 31): on unless --no-statements, which
// measures the run without its small overhead.
const statements = !process.argv.includes('--no-statements');
if (statements && !process.env.EMBEDDED_PG_SETTINGS?.includes('pg_stat_statements'))
  process.env.EMBEDDED_PG_SETTINGS = `${process.env.EMBEDDED_PG_SETTINGS ?? ''} shared_preload_libraries=pg_stat_statements`.trim();
// --no-wal-detail skips reading the run's write-ahead log back record by record (pg_walinspect) for
// the bytes per table and index: it runs after the clock stops but takes a while.
const walDetail = !process.argv.includes('--no-wal-detail');
const timeoutS = numberArg('timeout', 900);
const workerCount = numberArg('workers', 1);
const workerCpu = numberArg('worker-cpu', 0);
const webhook = process.argv.includes('--webhook');

// The webhook receiver: every delivery counted, each webhook-id once.
const hookIds = new Set<string>();
let hookPosts = 0;
let lastHookAt = 0;
const receiver = http.createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    hookPosts++;
    hookIds.add(String(req.headers['webhook-id']));
    lastHookAt = performance.now();
    res.writeHead(204);
    res.end();
  });
});
receiver.keepAliveTimeout = 10_000;
if (webhook) await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));

// The provider's configured throughput (SMS_MAX_PER_SECOND, default 1000/s) would cap 100,000 sends
// at 100 s by itself; the simulator has no such limit, so the bench lifts it to measure our own cost.
const providerLimit = process.env.SMS_MAX_PER_SECOND ?? '5000';
const { stack, dir, token, accountId, operator } = await benchStack({
  SMS_MAX_PER_SECOND: providerLimit,
  ...(webhook ? { ALLOW_LOOPBACK_DESTINATIONS: 'true' } : {}),
});
const pool = new pg.Pool({ connectionString: stack.databaseUrl, max: 4 });
const out: Record<string, unknown> = { contacts, workers: workerCount, smsMaxPerSecond: Number(providerLimit), webhook };
const extraWorkers: ChildProcess[] = Array.from({ length: workerCount - 1 }, (_, i) =>
  spawn(process.execPath, ['--max-semi-space-size=32', '--heap-growing-percent=30', '--import', 'tsx', 'worker/main.ts'], {
    env: { ...process.env, ...stack.env, SMS_MAX_PER_SECOND: providerLimit, LOG_LEVEL: 'warn' },
    stdio: ['ignore', fs.openSync(path.join(dir, `worker-${i + 1}.log`), 'a'), fs.openSync(path.join(dir, `worker-${i + 1}.log`), 'a')],
  }),
);
const procCpu = (pid: number) => {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) / 100;
};
// The worker's memory from /proc: VmHWM (peak resident set) and VmRSS (now), in MB.
const workerPid = stack.children.get('worker')!.pid!;
const mem = (field: 'VmHWM' | 'VmRSS') => {
  const m = new RegExp(`${field}:\\s+(\\d+) kB`).exec(fs.readFileSync(`/proc/${workerPid}/status`, 'utf8'));
  return Math.round(Number(m?.[1] ?? 0) / 1024);
};
// Start-up apart from load: wait until the worker polls its workflow queue (the API is up before the
// worker is ready), read its peak, then reset the peak (`5` > clear_refs, Linux ≥ 4.0) so the
// end-of-run VmHWM is the campaign's own; the RSS is also sampled every 500 ms in case the reset is
// refused.
const temporal = await connectTemporalClient(stack.temporalAddress, 'default');
for (const deadline = Date.now() + 120_000; ;) {
  const { pollers } = await temporal.client.workflowService.describeTaskQueue({
    namespace: 'default',
    taskQueue: { name: 'svc-main' },
    taskQueueType: 1, // TASK_QUEUE_TYPE_WORKFLOW
  });
  if (pollers?.length || Date.now() > deadline) break;
  await new Promise((r) => setTimeout(r, 250));
}
await temporal.close();
// The extra workers load the prebuilt bundle in a few seconds; wait for them too.
await new Promise((r) => setTimeout(r, extraWorkers.length ? 15_000 : 2000));
const extraCpuAtStart = extraWorkers.map((w) => procCpu(w.pid!));
const uncap: Array<() => void> = [];
if (workerCpu > 0) {
  const pids = [stack.children.get('worker')!.pid!, ...extraWorkers.map((w) => w.pid!)];
  for (const [i, pid] of pids.entries()) {
    const undo = capCpu(pid, workerCpu, `svc-bench-worker-${i}`);
    if (undo) uncap.push(undo);
  }
  out.workerCpuCap = { fraction: workerCpu, capped: uncap.length, of: pids.length };
}
if (webhook) {
  const made = await fetch(`${stack.apiUrl}/admin/v1/accounts/${accountId}/webhook-endpoints`, {
    method: 'POST',
    headers: { authorization: `Bearer ${operator}`, 'content-type': 'application/json' },
    body: JSON.stringify({ url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`, events: ['message.*'] }),
  });
  if (made.status !== 201) throw new Error(`webhook endpoint: ${await made.text()}`);
}
out.workerStartup = { peakRssMb: mem('VmHWM'), rssMb: mem('VmRSS') };
// Worker CPU seconds (user + system) from /proc/<pid>/stat, to weigh memory settings against CPU.
const cpuSeconds = () => {
  const stat = fs.readFileSync(`/proc/${workerPid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) / 100; // utime, stime in clock ticks (USER_HZ = 100)
};
let cpuAtStart = cpuSeconds();
let stackCpuAtStart = stackCpuSeconds(stack, dir);
let hwmReset = true;
try {
  fs.writeFileSync(`/proc/${workerPid}/clear_refs`, '5');
} catch {
  hwmReset = false;
}
let sampledPeak = 0;
const sampler = setInterval(() => {
  try {
    sampledPeak = Math.max(sampledPeak, mem('VmRSS'));
  } catch {
    /* exited */
  }
}, 500);
try {
  // Audience, written straight into the tables (set-up, not measured).
  const group = (
    await pool.query(
      `insert into contact_groups (uid, account_id, name, created_at, updated_at)
    values (gen_random_uuid(), $1, 'Bench audience', now(), now()) returning id`,
      [accountId],
    )
  ).rows[0].id;
  await pool.query(
    `insert into contacts (uid, account_id, group_id, name, country_code, phone_number, full_phone_number, is_subscribed, custom_field_values, created_at, updated_at)
    select 'ctc_bench_' || g, $1, $2, 'Customer ' || g, '255', '7' || lpad(g::text, 8, '0'), '2557' || lpad(g::text, 8, '0'), true, '{"city":"Arusha"}', now(), now()
      from generate_series(1, $3) g`,
    [accountId, group, contacts],
  );

  // An audience written long ago has its hint bits and visibility set (a first read after the
  // checkpoint would otherwise log a full page image of each contacts page, a set-up cost).
  await pool.query('vacuum (analyze) contacts');
  // From here on is the campaign's own cost: CPU, WAL and statements are read again at the end.
  await pool.query('checkpoint');
  if (statements) {
    await pool.query('create extension if not exists pg_stat_statements');
    await pool.query('select pg_stat_statements_reset()');
  }
  const walAtStart = await walNow(pool);
  const tablesAtStart = await messageUpdatesNow(pool);
  stackCpuAtStart = stackCpuSeconds(stack, dir);
  cpuAtStart = cpuSeconds();
  let t0 = performance.now();
  const res = await fetch(`${stack.apiUrl}/api/v3/sms/campaign`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ contact_list_id: String(group), message: 'Hi {{name}} from {{cf:city}}' }),
  });
  const campaign = ((await res.json()) as any).data.campaigns[0];
  let completedAt = 0;
  let received = 0;
  let failed = 0;
  for (;;) {
    const view = (
      (await (
        await fetch(`${stack.apiUrl}/api/v3/campaign/${campaign.uid}/view`, { headers: { authorization: `Bearer ${token}` } })
      ).json()) as any
    ).data;
    if (!completedAt && view.status === 'completed') completedAt = performance.now();
    // The view's own counts (sent_count: the provider accepted it); a second count here would
    // only add its cost to the database's share.
    received = view.sent_count;
    failed = view.failed_count;
    if (received + failed >= contacts || (performance.now() - t0) / 1000 > timeoutS) break;
    await new Promise((r) => setTimeout(r, 2000));
  }
  const seconds = (performance.now() - t0) / 1000;
  // The view is polled every 2 s; the records say when the last message was accepted.
  const last = (
    await pool.query(
      `select extract(epoch from max(m.sent_at) - c.created_at)::float as s from messages m join campaigns c on c.id = m.campaign_id where c.uid = $1 group by c.created_at`,
      [campaign.uid],
    )
  ).rows[0];
  out.campaign = {
    lastAcceptedSeconds: last ? Math.round(Number(last.s) * 10) / 10 : null,
    recordsInsertedSeconds: completedAt ? Math.round(completedAt - t0) / 1000 : null,
    sentToProvider: received,
    failed,
    seconds: Math.round(seconds * 10) / 10,
    messagesPerSecond: Math.round(received / seconds),
  };
  if (webhook) {
    // Every message event of this account (message.sent, then message.delivered as the simulator's
    // receipts arrive 200 ms later, message.failed) must reach the receiver once. Done when every
    // message is final, the outbox is relayed and each event's webhook-id has been heard.
    const q1 = async (sql: string) => (await pool.query(sql, [accountId])).rows[0];
    let expected = 0;
    for (const deadline = t0 + timeoutS * 1000; performance.now() < deadline;) {
      const pending = await q1(
        `select count(*)::int as n from messages where account_id = $1 and status not in ('delivered', 'read', 'failed')`,
      );
      const events = await q1(
        `select count(*)::int as n, count(*) filter (where dispatched_at is null)::int as unrelayed from events where account_id = $1 and kind like 'message.%'`,
      );
      expected = events.n;
      if (pending.n === 0 && events.unrelayed === 0 && hookIds.size >= expected) break;
      await new Promise((r) => setTimeout(r, 500));
    }
    const lastSend = await q1(`select extract(epoch from max(sent_at) - min(created_at)) as s from messages where account_id = $1`);
    const kinds = (
      await pool.query(
        `select kind, count(*)::int as n from events where account_id = $1 and kind like 'message.%' group by kind order by kind`,
        [accountId],
      )
    ).rows;
    const retried = await q1(
      `select count(*)::int as n from webhook_deliveries d join events e on e.event_id = d.event_id where e.account_id = $1 and (d.attempts > 1 or d.status <> 'succeeded')`,
    );
    out.webhooks = {
      events: Object.fromEntries(kinds.map((k) => [k.kind, k.n])),
      expected,
      distinctWebhookIds: hookIds.size,
      posts: hookPosts,
      duplicates: hookPosts - hookIds.size,
      deliveriesRetriedOrNotSucceeded: retried.n,
      lastSendSecondsAfterStart: Math.round(Number(lastSend.s) * 10) / 10,
      lastCallbackSecondsAfterStart: Math.round((lastHookAt - t0) / 100) / 10,
      allDelivered: hookIds.size >= expected,
    };
  }
  // Every process's CPU seconds from the campaign request to the last message accepted (set-up
  // and the database floor apart): the two cores are saturated, so the run's time follows their sum.
  const stackCpuAtEnd = stackCpuSeconds(stack, dir);
  const walAtEnd = await walNow(pool);
  out.cpuSeconds = Object.fromEntries(
    Object.entries(stackCpuAtEnd).map(([k, v]) => [k, Math.round((v - (stackCpuAtStart[k] ?? 0)) * 10) / 10]),
  );
  out.perMessage = await costPerMessage(pool, {
    messages: received + failed,
    cpu: out.cpuSeconds as Record<string, number>,
    walAtStart,
    walAtEnd,
    statements,
    walDetail,
    tablesAtStart,
  });
  out.workerUnderLoad = {
    peakRssMb: hwmReset ? mem('VmHWM') : null,
    sampledPeakRssMb: sampledPeak,
    endRssMb: mem('VmRSS'),
    cpuSeconds: Math.round((cpuSeconds() - cpuAtStart) * 10) / 10,
  };
  if (extraWorkers.length)
    out.extraWorkerCpuSeconds = extraWorkers.map((w, i) => Math.round((procCpu(w.pid!) - extraCpuAtStart[i]) * 10) / 10);
  out.workerPeakRssMb = Math.max(mem('VmHWM'), (out.workerStartup as { peakRssMb: number }).peakRssMb);
  // The other processes' peaks, for comparison (no target; the simulator stands in for the provider).
  out.otherPeakRssMb = Object.fromEntries(
    ['api', 'simulator'].map((name) => {
      const m = /VmHWM:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${stack.children.get(name)!.pid}/status`, 'utf8'));
      return [name, Math.round(Number(m?.[1] ?? 0) / 1024)];
    }),
  );
  // The database's floor, after the campaign (its rows, inserted and deleted before, would leave
  // pages the campaign then filled with full-page images): the same number of message rows in one statement.
  t0 = performance.now();
  await pool.query(
    `insert into messages (uid, account_id, direction, channel_type, recipient, body, status, dispatch_mode, created_at, updated_at)
    select 'floor_' || g, $1, 'outbound', 'sms', '+2557' || lpad(g::text, 8, '0'), 'Hello', 'failed', 'bench', now(), now() from generate_series(1, $2) g`,
    [accountId, contacts],
  );
  out.databaseFloor = { rows: contacts, seconds: Math.round(performance.now() - t0) / 1000 };
  await pool.query(`delete from messages where dispatch_mode = 'bench'`);
  // One provider HTTP exchange on this machine, bare (the service's processes idle by now).
  out.httpExchangeFloor = await httpExchangeFloor();
  // The write-ahead log since the cluster started (set-up included; perMessage has the campaign's own).
  const wal = (
    await pool.query(
      `select wal_records::bigint as records, wal_fpi::bigint as full_page_images, round(wal_bytes / 1048576)::int as mb from pg_stat_wal`,
    )
  ).rows[0];
  const checkpoints = (
    await pool.query(`select num_timed + num_requested as n from pg_stat_checkpointer`).catch(() => ({ rows: [{ n: null }] }))
  ).rows[0].n;
  out.databaseWal = { ...wal, checkpoints };
} finally {
  clearInterval(sampler);
  for (const undo of uncap) undo();
  receiver.close();
  for (const w of extraWorkers) w.kill('SIGTERM');
  await Promise.all(extraWorkers.map((w) => new Promise((r) => (w.exitCode !== null ? r(null) : w.once('exit', r)))));
  await pool.end();
  await stack.stop();
  fs.rmSync(dir, { recursive: true, force: true });
}
process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
