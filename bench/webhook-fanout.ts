// Webhook fan-out: 10,000 outbox events delivered to 10 local receivers through the relay and one
// delivery workflow each, beside a bare HTTP POST loop to the same receivers in the same run.
//   npx tsx bench/webhook-fanout.ts [--events 10000] [--receivers 10] [--clients 40] [--timeout 900]
// Prints JSON figures; docs/benchmarks.md records them with this command.
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { openOrm } from '../entities/orm.js';
import { benchStack, load, loadFigures, numberArg } from './lib.js';

const events = numberArg('events', 10_000);
const receiverCount = numberArg('receivers', 10);
const clients = numberArg('clients', 40);
const timeoutSeconds = numberArg('timeout', 900);

// Receivers answer 204 at once and count what they get, by phase.
let phase: 'bare' | 'hooks' = 'bare';
const counts = { bare: 0, hooks: 0 };
const servers = await Promise.all(
  Array.from({ length: receiverCount }, async () => {
    const s = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        counts[phase]++;
        res.writeHead(204);
        res.end();
      });
    });
    await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
    return { server: s, url: `http://127.0.0.1:${(s.address() as AddressInfo).port}/hook` };
  }),
);

// The receivers listen on 127.0.0.1, which deployments refuse as a webhook destination.
const { stack, dir, operator } = await benchStack({ ALLOW_LOOPBACK_DESTINATIONS: 'true' });
process.stderr.write('ALLOW_LOOPBACK_DESTINATIONS=true: webhooks may be sent to 127.0.0.1 in this run\n');
const adminPost = async (p: string, body: unknown) =>
  (
    await fetch(`${stack.apiUrl}/admin/v1${p}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${operator}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    })
  ).json() as Promise<any>;
const orm = await openOrm(stack.databaseUrl, 2);
try {
  // One account and endpoint per receiver; events are spread evenly over the accounts.
  const accounts: number[] = [];
  for (const r of servers) {
    const acc = (await adminPost('/accounts', { name: `Fanout ${accounts.length}` })).data;
    await adminPost(`/accounts/${acc.id}/webhook-endpoints`, { url: r.url, events: ['order.paid'] });
    accounts.push(acc.id);
  }
  const sample = JSON.stringify({
    event_id: 'evt_bare',
    event: 'order.paid',
    occurred_at: new Date().toISOString(),
    order_id: 1,
    total_amount: 150000,
    currency: 'TZS',
  });
  const bare = await load(clients, events, timeoutSeconds, async (i) => {
    const res = await fetch(servers[i % servers.length].url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: sample,
    });
    await res.arrayBuffer();
    return String(res.status);
  });

  phase = 'hooks';
  const started = performance.now();
  // Committed outbox rows, as a burst of order.paid changes would leave them.
  await orm.em.fork().execute(
    `insert into events (event_id, account_id, kind, payload, occurred_at)
     select 'evt_bench_' || g, a.ids[1 + (g % ?)], 'order.paid',
            jsonb_build_object('event_id', 'evt_bench_' || g, 'event', 'order.paid', 'occurred_at', now(), 'order_id', g, 'total_amount', 150000, 'currency', 'TZS'), now()
       from generate_series(0, ? - 1) g, (select ?::int[] as ids) a`,
    [accounts.length, events, `{${accounts.join(',')}}`],
  );
  const deadline = started + timeoutSeconds * 1000;
  while (counts.hooks < events && performance.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  const receivedSeconds = (performance.now() - started) / 1000;
  const done = async () =>
    Number(
      (
        await orm.em
          .fork()
          .execute(`select count(*) as n from webhook_deliveries where status = 'succeeded' and event_id like 'evt_bench_%'`)
      )[0].n,
    );
  let logged = await done();
  while (logged < events && performance.now() < deadline) {
    await new Promise((r) => setTimeout(r, 250));
    logged = await done();
  }
  const loggedSeconds = (performance.now() - started) / 1000;
  const r1 = (n: number) => Math.round(n * 10) / 10;
  // Where the time went: the relay's claim-and-start passes versus the workflows themselves.
  const spread = (
    await orm.em
      .fork()
      .execute(`select extract(epoch from max(dispatched_at) - min(occurred_at)) as relay_s from events where event_id like 'evt_bench_%'`)
  )[0];
  process.stdout.write(
    `${JSON.stringify(
      {
        events,
        receivers: receiverCount,
        bare_post_loop: { clients, ...loadFigures(bare) },
        webhook_deliveries: {
          received: counts.hooks,
          seconds_to_receive_all: r1(receivedSeconds),
          deliveries_per_second: r1(counts.hooks / receivedSeconds),
          succeeded_logged: logged,
          seconds_to_log_all: r1(loggedSeconds),
          relay_seconds_to_start_all: r1(Number(spread.relay_s)),
        },
      },
      null,
      2,
    )}\n`,
  );
} finally {
  await orm.close();
  await stack.stop();
  for (const s of servers) s.server.close();
  fs.rmSync(dir, { recursive: true, force: true });
}
