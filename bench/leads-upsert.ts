// Lead upserts at 100,000 leads (issue 28, point 6), on a private stack. An account (country TZ)
// is loaded with 100,000 leads and their phone identities by INSERT … SELECT generate_series (the
// load bypasses the API), then VACUUM ANALYZE. Measured in the same run, at the same concurrency:
//   1. POST /api/v3/leads for existing people, each named by a phone number in its national form
//      ("0700 001 234": parsed in the account's country), changing the lead's source: the lookup
//      through lead_identities, the locked lead, its timeline row and its lead.updated event;
//   2. the same for new people (a lead, its identity, its timeline row and lead.created);
//   3. beside each, the floor: the bare indexed lookup-and-upsert written by hand as one statement
//      (lead_identities' key, then the lead updated or a lead and its identity inserted) run
//      straight through pg.
//   npm run bench:leads-upsert [-- --leads 100000 --upserts 4000 --creates 2000 --concurrency 16]
import fs from 'node:fs';
import pg from 'pg';
import { benchStack, jsonPoster, load, loadFigures, numberArg } from './lib.js';

const leads = numberArg('leads', 100_000);
const upserts = numberArg('upserts', 4000);
const creates = numberArg('creates', 2000);
const concurrency = numberArg('concurrency', 16);

const started = performance.now();
const progress = (msg: string) => process.stderr.write(`[${((performance.now() - started) / 1000).toFixed(0).padStart(5)} s] ${msg}\n`);

const { stack, dir, accountId, operator } = await benchStack();
const pool = new pg.Pool({ connectionString: stack.databaseUrl, max: concurrency });
const out: Record<string, unknown> = { leads, upserts, creates, concurrency };

const adminCall = async (method: string, p: string, body?: unknown) => {
  const res = await fetch(`${stack.apiUrl}/admin/v1${p}`, {
    method,
    headers: { authorization: `Bearer ${operator}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = (await res.json()) as any;
  if (res.status >= 300) throw new Error(`${method} ${p}: ${res.status} ${JSON.stringify(json).slice(0, 400)}`);
  return json.data;
};

/** The i-th loaded person's number (+2557 and eight digits) and the national form a client writes. */
const digits = (i: number) => String(i).padStart(8, '0');
const national = (prefix: string, i: number) => {
  const d = `${prefix}${digits(i)}`;
  return `0${d.slice(0, 3)} ${d.slice(3, 6)} ${d.slice(6)}`;
};
/** A spread of the loaded people (a multiplicative walk), so the runs do not read one hot page. */
const pick = (i: number) => 1 + ((i * 7919) % leads);

try {
  await adminCall('PATCH', `/accounts/${accountId}`, { country: 'TZ' });
  const user = await adminCall('POST', `/accounts/${accountId}/users`, { email: 'bench@example.com', name: 'Bench', permissions: ['*'] });
  const token = (await adminCall('POST', `/accounts/${accountId}/keys`, { name: 'bench leads', user_id: user.id })).token as string;

  progress(`loading ${leads} leads`);
  await pool.query(
    `insert into leads (account_id, name, phone, stage, labels, fields, merged_ids, created_at, updated_at)
     select $1, 'Lead ' || g, '+2557' || lpad(g::text, 8, '0'), 'new', '[]', '{}', '[]', now(), now()
       from generate_series(1, $2::int) g`,
    [accountId, leads],
  );
  await pool.query(
    `insert into lead_identities (account_id, kind, value, lead_id, created_at)
     select account_id, 'phone', phone, id, now() from leads where account_id = $1`,
    [accountId],
  );
  await pool.query('vacuum analyze leads');
  await pool.query('vacuum analyze lead_identities');
  const loaded = (await pool.query(`select count(*)::int as n from leads where account_id = $1`, [accountId])).rows[0].n;
  out.loaded = loaded;
  out.tableSizes = (
    await pool.query(
      `select pg_size_pretty(pg_total_relation_size('leads')) as leads, pg_size_pretty(pg_total_relation_size('lead_identities')) as identities`,
    )
  ).rows[0];

  const post = jsonPoster(stack.apiUrl, { authorization: `Bearer ${token}` }, concurrency * 2);
  // The bare statement: lead_identities' key, then the lead updated, or a lead and its identity inserted.
  const bare = `with hit as (select lead_id from lead_identities where account_id = $1 and kind = 'phone' and value = $2),
    upd as (update leads set source = $3, updated_at = now() where account_id = $1 and id in (select lead_id from hit) returning id),
    ins as (insert into leads (account_id, phone, source, stage, labels, fields, merged_ids, created_at, updated_at)
            select $1, $2, $3, 'new', '[]', '{}', '[]', now(), now() where not exists (select 1 from hit) returning id),
    idn as (insert into lead_identities (account_id, kind, value, lead_id, created_at)
            select $1, 'phone', $2, id, now() from ins on conflict do nothing)
    select id from upd union all select id from ins`;
  const sqlUpsert = async (phone: string, source: string) => {
    const r = await pool.query(bare, [accountId, phone, source]);
    return r.rowCount === 1 ? 'ok' : 'none';
  };
  const httpUpsert = async (phone: string, source: string, created: boolean) => {
    const r = await post('/api/v3/leads', { phone, source });
    if (r.status !== 200) throw new Error(`${r.status} ${JSON.stringify(r.body).slice(0, 200)}`);
    return r.body.data.created === created ? String(r.status) : 'wrong';
  };

  // Warm both paths (plans, pools, the API's JIT) on people outside the measured ones.
  await load(concurrency, 400, 120, (i) => httpUpsert(national('7', pick(i + upserts)), 'warm', false));
  await load(concurrency, 400, 120, (i) => sqlUpsert(`+2557${digits(pick(i + upserts + 400))}`, 'warm'));

  progress(`${upserts} upserts of existing people over HTTP`);
  const httpUpdate = await load(concurrency, upserts, 600, (i) => httpUpsert(national('7', pick(i)), `http-${i}`, false));
  progress(`${upserts} upserts of existing people in SQL`);
  const sqlUpdate = await load(concurrency, upserts, 600, (i) => sqlUpsert(`+2557${digits(pick(i))}`, `sql-${i}`));
  progress(`${creates} upserts of new people over HTTP`);
  const httpCreate = await load(concurrency, creates, 600, (i) => httpUpsert(national('6', i + 1), `http-${i}`, true));
  progress(`${creates} upserts of new people in SQL`);
  const sqlCreate = await load(concurrency, creates, 600, (i) => sqlUpsert(`+2556${digits(i + 1 + creates)}`, `sql-${i}`));

  const ratio = (a: { perSecond: number }, b: { perSecond: number }) => Math.round((b.perSecond / a.perSecond) * 10) / 10;
  out.existing = {
    http: loadFigures(httpUpdate),
    sql: loadFigures(sqlUpdate),
    statuses: httpUpdate.statuses,
    sqlOverHttp: ratio(httpUpdate, sqlUpdate),
  };
  out.created = {
    http: loadFigures(httpCreate),
    sql: loadFigures(sqlCreate),
    statuses: httpCreate.statuses,
    sqlOverHttp: ratio(httpCreate, sqlCreate),
  };
  out.leadsAfter = (await pool.query(`select count(*)::int as n from leads where account_id = $1`, [accountId])).rows[0].n;
  out.plan = (
    await pool.query(`explain (costs off) select lead_id from lead_identities where account_id = $1 and kind = 'phone' and value = $2`, [
      accountId,
      '+255700000001',
    ])
  ).rows.map((r) => r['QUERY PLAN']);
  out.loadAverage = fs.readFileSync('/proc/loadavg', 'utf8').trim();
} finally {
  await pool.end();
  await stack.stop();
  fs.rmSync(dir, { recursive: true, force: true });
}
process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
