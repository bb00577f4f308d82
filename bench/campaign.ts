// A 100,000-contact SMS campaign dispatched end to end to the simulator, beside the database's own
// floor (the same 100,000 message rows inserted in one statement) in the same run.
//   npx tsx bench/campaign.ts [-- --contacts 100000 --timeout 900]
import fs from 'node:fs';
import pg from 'pg';
import { benchStack } from './lib.js';

const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const contacts = arg('contacts', 100_000);
const timeoutS = arg('timeout', 900);

const { stack, dir, token, accountId } = await benchStack();
const pool = new pg.Pool({ connectionString: stack.databaseUrl, max: 4 });
const out: Record<string, unknown> = { contacts };
const peakRss = (pid: number) => Number(/VmHWM:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;
try {
  // Audience, written straight into the tables (set-up, not measured).
  const group = (await pool.query(`insert into contact_groups (uid, account_id, name, created_at, updated_at)
    values (gen_random_uuid(), $1, 'Bench audience', now(), now()) returning id`, [accountId])).rows[0].id;
  await pool.query(`insert into contacts (uid, account_id, group_id, name, country_code, phone_number, full_phone_number, is_subscribed, custom_field_values, created_at, updated_at)
    select 'ctc_bench_' || g, $1, $2, 'Customer ' || g, '255', '7' || lpad(g::text, 8, '0'), '2557' || lpad(g::text, 8, '0'), true, '{"city":"Arusha"}', now(), now()
      from generate_series(1, $3) g`, [accountId, group, contacts]);

  // The database's floor: the same number of message rows in one statement.
  let t0 = performance.now();
  await pool.query(`insert into messages (uid, account_id, direction, channel_type, recipient, body, status, dispatch_mode, created_at, updated_at)
    select 'floor_' || g, $1, 'outbound', 'sms', '+2557' || lpad(g::text, 8, '0'), 'Hello', 'failed', 'bench', now(), now() from generate_series(1, $2) g`, [accountId, contacts]);
  out.databaseFloor = { rows: contacts, seconds: Math.round(performance.now() - t0) / 1000 };
  await pool.query(`delete from messages where dispatch_mode = 'bench'`);

  t0 = performance.now();
  const res = await fetch(`${stack.apiUrl}/api/v3/sms/campaign`, {
    method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ contact_list_id: String(group), message: 'Hi {{name}} from {{cf:city}}' }),
  });
  const campaign = ((await res.json()) as any).data.campaigns[0];
  let completedAt = 0;
  let received = 0;
  for (;;) {
    const view = ((await (await fetch(`${stack.apiUrl}/api/v3/campaign/${campaign.uid}/view`, { headers: { authorization: `Bearer ${token}` } })).json()) as any).data;
    if (!completedAt && view.status === 'completed') completedAt = performance.now();
    const sent = (await pool.query(`select count(*)::int as n from messages where campaign_id = $1 and gateway_message_id is not null`, [campaign.id])).rows[0].n;
    received = sent;
    if (sent >= contacts || (performance.now() - t0) / 1000 > timeoutS) break;
    await new Promise((r) => setTimeout(r, 2000));
  }
  const seconds = (performance.now() - t0) / 1000;
  out.campaign = {
    recordsInsertedSeconds: completedAt ? Math.round(completedAt - t0) / 1000 : null,
    sentToProvider: received, seconds: Math.round(seconds * 10) / 10, messagesPerSecond: Math.round(received / seconds),
    workerPeakRssMb: Math.round(peakRss(stack.children.get('worker')!.pid!)),
  };
} finally {
  await pool.end();
  await stack.stop();
  fs.rmSync(dir, { recursive: true, force: true });
}
process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
