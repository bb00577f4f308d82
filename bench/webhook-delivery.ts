// Webhook delivery throughput: N outbox events for one endpoint subscribed to `message.*`, delivered
// by the batch dispatcher to one local receiver, beside bare POST loops to the same receiver in the
// same run: at the dispatcher's concurrency (the machine's ceiling), from a process of its own
// (bench/bare-post-loop.ts, as the worker posts from its own) and from the receiver's process; and
// the loop issue 16 measured its 1,000-1,500 POSTs a second with (bench/webhook-fanout.ts's: 40
// concurrent fetch() loops in the receivers' process).
//   npm run bench:webhooks -- [--events 20000] [--concurrency 64] [--timeout 900]
// Prints JSON figures; docs/benchmarks.md records them with this command.
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { Agent, request } from 'undici';
import { openOrm } from '../entities/orm.js';
import { benchStack, load, loadFigures, numberArg, stackCpuSeconds } from './lib.js';

const execFileAsync = promisify(execFile);
const events = numberArg('events', 20_000);
// The dispatcher's pool (services/webhooks/dispatch.ts) and the agent's connection cap: 64.
const concurrency = numberArg('concurrency', 64);
const timeoutSeconds = numberArg('timeout', 900);

// The receiver answers 204 at once, counts requests by phase and distinct webhook-ids.
let phase: 'bare' | 'hooks' = 'bare';
const counts = { bare: 0, hooks: 0 };
const ids = new Set<string>();
const server = http.createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    counts[phase]++;
    if (phase === 'hooks') ids.add(String(req.headers['webhook-id']));
    res.writeHead(204);
    res.end();
  });
});
server.keepAliveTimeout = 10_000;
await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;

// The receiver listens on 127.0.0.1, which deployments refuse as a webhook destination.
const { stack, dir, operator, accountId } = await benchStack({ ALLOW_LOOPBACK_DESTINATIONS: 'true' });
process.stderr.write('ALLOW_LOOPBACK_DESTINATIONS=true: webhooks may be sent to 127.0.0.1 in this run\n');
const orm = await openOrm(stack.databaseUrl, 2);
try {
  const made = await fetch(`${stack.apiUrl}/admin/v1/accounts/${accountId}/webhook-endpoints`, {
    method: 'POST',
    headers: { authorization: `Bearer ${operator}`, 'content-type': 'application/json' },
    body: JSON.stringify({ url, events: ['message.*'] }),
  });
  if (made.status !== 201) throw new Error(`endpoint: ${await made.text()}`);
  const sample = JSON.stringify({
    event_id: 'evt_bare',
    event: 'message.delivered',
    occurred_at: new Date().toISOString(),
    account_id: accountId,
    message_id: 1,
    uid: 'msg_bare',
    status: 'delivered',
    direction: 'outbound',
    channel_type: 'sms',
    sender: 'ACME',
    recipient: '+255700000001',
    gateway_message_id: 'SM1',
    error_message: null,
  });
  // Same client library, connection cap and keep-alive as the dispatcher's agent.
  const bareLoop = async () => {
    const agent = new Agent({ connections: concurrency, keepAliveTimeout: 10_000 });
    const r = await load(concurrency, events, timeoutSeconds, async () => {
      const res = await request(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: sample, dispatcher: agent });
      await res.body.dump();
      return String(res.statusCode);
    });
    await agent.close();
    return r;
  };
  // The same loop from a process of its own, as the worker's dispatcher posts from its own process.
  const bodyFile = `${dir}/bare-body.json`;
  fs.writeFileSync(bodyFile, sample);
  // Not execFileSync: the receiver answers from this process's event loop.
  const bareApart = async () =>
    JSON.parse(
      (
        await execFileAsync(process.execPath, [
          '--import',
          'tsx',
          'bench/bare-post-loop.ts',
          url,
          String(events),
          String(concurrency),
          bodyFile,
        ])
      ).stdout,
    ) as Awaited<ReturnType<typeof load>>;
  // The loop issue 16 measured its 1,000–1,500 POSTs a second with (of which its 500/s is 40 %):
  // bench/webhook-fanout.ts's, 40 concurrent fetch() loops in the receivers' process.
  const issueLoop = () =>
    load(40, Math.min(events, 20_000), timeoutSeconds, async () => {
      const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: sample });
      await res.arrayBuffer();
      return String(res.status);
    });
  const bare = await bareLoop();
  const apart = await bareApart();
  const asIssue = await issueLoop();

  phase = 'hooks';
  const cpu0 = stackCpuSeconds(stack, dir);
  const bench0 = process.cpuUsage();
  const started = performance.now();
  // Committed outbox rows, as a campaign's status moves would leave them (half sent, half delivered).
  await orm.em.fork().execute(
    `insert into events (event_id, account_id, kind, payload, occurred_at)
     select 'evt_bench_' || g, ?, k.kind,
            jsonb_build_object('event_id', 'evt_bench_' || g, 'event', k.kind, 'occurred_at', now(), 'account_id', ?, 'message_id', g,
                               'uid', 'msg_' || g, 'status', k.status, 'direction', 'outbound', 'channel_type', 'sms', 'sender', 'ACME',
                               'recipient', '+255700000001', 'gateway_message_id', 'SM' || g, 'error_message', null), now()
       from generate_series(0, ? - 1) g
       cross join lateral (select case when g % 2 = 0 then 'message.sent' else 'message.delivered' end as kind,
                                  case when g % 2 = 0 then 'sent' else 'delivered' end as status) k`,
    [accountId, accountId, events],
  );
  const inserted = performance.now();
  const deadline = started + timeoutSeconds * 1000;
  while (ids.size < events && performance.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  const receivedSeconds = (performance.now() - inserted) / 1000;
  const cpu1 = stackCpuSeconds(stack, dir);
  const benchCpu = process.cpuUsage(bench0);
  const query = async (sql: string) => (await orm.em.fork().execute(sql))[0];
  const done = async () =>
    Number((await query(`select count(*) as n from webhook_deliveries where status = 'succeeded' and event_id like 'evt_bench_%'`)).n);
  let logged = await done();
  while (logged < events && performance.now() < deadline) {
    await new Promise((r) => setTimeout(r, 250));
    logged = await done();
  }
  const loggedSeconds = (performance.now() - inserted) / 1000;
  // Where the time went: the relay queueing rows, then the first attempts themselves.
  const relay = await query(
    `select extract(epoch from max(dispatched_at) - min(occurred_at)) as relay_s from events where event_id like 'evt_bench_%'`,
  );
  const workflows = await query(
    `select count(*) as n from webhook_deliveries where event_id like 'evt_bench_%' and (attempts > 1 or status <> 'succeeded')`,
  );
  // The loop again after the deliveries: on a shared machine the load changes within a run, and the
  // better of the two is the ceiling the ratio is taken against.
  phase = 'bare';
  const bareAfter = await bareLoop();
  const apartAfter = await bareApart();
  const asIssueAfter = await issueLoop();
  const ceilingSameProcess = Math.max(bare.perSecond, bareAfter.perSecond);
  const ceiling = Math.max(apart.perSecond, apartAfter.perSecond);
  const r1 = (n: number) => Math.round(n * 10) / 10;
  const perSecond = counts.hooks / receivedSeconds;
  process.stdout.write(
    `${JSON.stringify(
      {
        events,
        concurrency,
        // The ratio's ceiling: a client in a process of its own, as the worker is.
        bare_post_loop_own_process: { ...loadFigures(apart), after_deliveries: loadFigures(apartAfter) },
        bare_post_loop_in_the_receivers_process: { ...loadFigures(bare), after_deliveries: loadFigures(bareAfter) },
        bare_post_loop_as_issue_16_measured: { ...loadFigures(asIssue), after_deliveries: loadFigures(asIssueAfter) },
        webhook_deliveries: {
          received: counts.hooks,
          distinct_webhook_ids: ids.size,
          duplicates: counts.hooks - ids.size,
          seconds_to_receive_all: r1(receivedSeconds),
          deliveries_per_second: r1(perSecond),
          succeeded_logged: logged,
          seconds_to_log_all: r1(loggedSeconds),
          relay_seconds_to_queue_all: r1(Number(relay.relay_s)),
          not_first_attempt_successes: Number(workflows.n),
          // Until the last was received; the receiver (this process) answers every POST.
          cpu_ms_per_delivery: Object.fromEntries(
            [
              ...Object.entries(cpu1).map(([k, v]) => [k, v - (cpu0[k] ?? 0)] as const),
              ['receiver (bench process)', (benchCpu.user + benchCpu.system) / 1e6] as const,
            ].map(([k, v]) => [k, Math.round((v * 1e6) / events) / 1000]),
          ),
        },
        ratio_to_bare: Math.round((perSecond / ceiling) * 1000) / 1000,
        ratio_to_bare_in_the_receivers_process: Math.round((perSecond / ceilingSameProcess) * 1000) / 1000,
        ratio_to_bare_as_issue_16_measured: Math.round((perSecond / Math.max(asIssue.perSecond, asIssueAfter.perSecond)) * 1000) / 1000,
      },
      null,
      2,
    )}\n`,
  );
} finally {
  await orm.close();
  await stack.stop();
  server.close();
  fs.rmSync(dir, { recursive: true, force: true });
}
