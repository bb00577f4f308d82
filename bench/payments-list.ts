// The payments list at a million payments (issue 26, point 8), on a private stack. One account's
// 1,000,000 payments and a second account's 300,000 (so the tenancy filter has rows to skip) are
// written with INSERT … SELECT generate_series straight into `payments`, 100,000 a statement: the
// load bypasses the services (no timeline, ledger or workflow), as only the list is measured here.
// State mix (every state, open ones spread over the whole year, as abandoned checkouts stay draft):
// 68 % paid, 8 % failed, 8 % expired, 6 % cancelled, 2 % each partly_refunded and refunded, 2 %
// draft, 3 % pending, 1 % authorised; one in fifty is a refund of the payment before it. Two
// payments per subject (`order-<n>`, an order paid at the second attempt), and the second
// account's subjects have the same ids, so `subject_id` alone is not enough to find the rows.
// Every payment is marked as having had its workflow (workflow_started_at), as a payment of that
// age has: otherwise the stack's reconciler would start one for each open payment past its expiry
// and expire it while the list is measured (the API's total and the floor's would then differ).
// Then VACUUM ANALYZE (what autovacuum leaves a table of this age in).
//
// Measured over HTTP (GET /api/v3/payments, one request at a time, the account's issued key),
// each beside the same answer computed by hand-written SQL through pg in the same run, the floor:
//   1. the first page (25, newest first) with meta.total;
//   2. ?state=open (draft, pending, authorised);
//   3. ?subject_id=<one order> (a different order each call).
// The floor is one statement that returns the page and the total together (the fewest round
// trips), sent unnamed (planned per call, as a hand-written query through pg is); the service's own
// statements are explained beside it. For subject_id the service sends one statement of the
// floor's shape, named (planned once per connection) and carrying the request's authentication, so
// the floor is also measured named in the same rounds. Each answer is checked against the floor's:
// the same ids in the same order and the same total. In the same rounds, two figures that say where
// the API's time goes: the service called in this process (no HTTP, no authentication), and the
// door, an authenticated GET answered 404 before any statement of its own.
//   npm run bench:payments-list [-- --payments 1000000 --other 300000 --samples 200 --warm 300]
import fs from 'node:fs';
import os from 'node:os';
import pg from 'pg';
import { benchStack, jsonGetter, numberArg, operatorCaller, progressLog, r1, r2, stats } from './lib.js';
import { openOrm } from '../entities/orm.js';
import { createLogger } from '../logger.js';
import { listPayments } from '../services/payments/payments.js';
import type { RequestContext } from '../services/platform/context.js';

const payments = numberArg('payments', 1_000_000);
const other = numberArg('other', 300_000);
const samples = numberArg('samples', 200);
const warm = numberArg('warm', 300);
// `--reads first,open,subject`: which reads to measure (all three by default).
const readsArg = process.argv.indexOf('--reads');
const reads = new Set((readsArg > 0 ? process.argv[readsArg + 1] : 'first,open,subject').split(','));
const CHUNK = 100_000;

const progress = progressLog();

const { stack, dir, accountId, operator } = await benchStack();
const pool = new pg.Pool({ connectionString: stack.databaseUrl, max: 4 });
const orm = await openOrm(stack.databaseUrl, 4);
let rcOf: () => RequestContext;
const out: Record<string, unknown> = { payments, otherAccountPayments: other, samples, machine: `${os.cpus().length} cores` };
const loadAverage: Record<string, number> = {};
const noteLoad = (phase: string) => {
  loadAverage[phase] = Math.round(os.loadavg()[0] * 10) / 10;
};
out.loadAverage1m = loadAverage;

const adminCall = operatorCaller(stack.apiUrl, operator);
let token = '';
const { get, close: closeAgent } = jsonGetter(stack.apiUrl, () => token);

/**
 * `count` payments of `account`, numbered from `from`: deterministic ids (md5 of account and
 * number, so a refund names the payment before it), references PAY-<day>-<number>, one every 31.5 s
 * over a year, the state mix above by a multiplicative hash of the number.
 */
async function seed(account: number, from: number, count: number, offsetSeconds: number) {
  for (let lo = from; lo < from + count; lo += CHUNK) {
    const hi = Math.min(from + count - 1, lo + CHUNK - 1);
    await pool.query(
      `with g as (
         select n, (n::bigint * 7919) % 100 as b,
                timestamptz '2025-11-28 00:00:00+00' + (n * 31.5 + $4::int) * interval '1 second' as at,
                (10000 + (n::bigint * 104729) % 990000) * 100 as amount
           from generate_series($2::int, $3::int) n),
       s as (
         select g.*, case when b < 2 then 'draft' when b < 5 then 'pending' when b < 6 then 'authorised'
                          when b < 74 then 'paid' when b < 76 then 'partly_refunded' when b < 78 then 'refunded'
                          when b < 86 then 'failed' when b < 94 then 'expired' else 'cancelled' end as state,
                n % 50 = 0 as is_refund
           from g)
       insert into payments (id, account_id, reference, state, amount_minor, currency, refunded_minor, subject_id, subject_type,
                             is_refund, refund_of, reason, payer, method, provider, provider_ref, attempts, last_error, expires_at,
                             settled_at, checkout_url, checkout_code, created_by, created_at, updated_at, workflow_started_at)
       select md5($1::int::text || '-' || n)::uuid, $1::int, 'PAY-' || to_char(at at time zone 'UTC', 'YYYYMMDD') || '-' || lpad(n::text, 8, '0'),
              case when is_refund and state in ('partly_refunded', 'refunded') then 'paid' else state end,
              amount, 'TZS',
              case when is_refund then 0 when state = 'refunded' then amount when state = 'partly_refunded' then amount / 4 else 0 end,
              'order-' || (n / 2), 'order', is_refund,
              case when is_refund then md5($1::int::text || '-' || (n - 1))::uuid end,
              case when is_refund then 'customer asked' end,
              '+2557' || lpad((n % 100000000)::text, 8, '0'), 'mobile_money', 'mpesa-daraja',
              case when state <> 'draft' then 'ws_CO_' || $1::int || '_' || n end,
              case when state = 'draft' then 0 else 1 end,
              case when state = 'failed' then '1: The balance is insufficient for the transaction.' end,
              at + interval '15 minutes',
              case when state in ('paid', 'partly_refunded', 'refunded') then at + interval '40 seconds' end,
              null, null, 'system:shop-page', at, at + interval '40 seconds', at
         from s`,
      [account, lo, hi, offsetSeconds],
    );
    progress(`account ${account}: loaded ${hi - from + 1} / ${count}`);
  }
}

try {
  // ---- accounts, key ---------------------------------------------------------------------------
  const user = await adminCall('POST', `/accounts/${accountId}/users`, {
    email: 'bench@example.com',
    name: 'Bench',
    permissions: ['payments.view'],
  });
  token = (await adminCall('POST', `/accounts/${accountId}/keys`, { name: 'bench issued', user_id: user.id })).token;
  const otherAccount = (await adminCall('POST', '/accounts', { name: 'Bench other' })).id as number;
  // The service in this process (listPayments, no HTTP or authentication), on a pool like the API's.
  const account = (
    await pool.query('select id, uid, name, status, wallet_balance::text, currency, billing_mode, created_at from accounts where id = $1', [
      accountId,
    ])
  ).rows[0];
  const keyRow = (await pool.query('select id, name from api_keys where account_id = $1 order by id desc limit 1', [accountId])).rows[0];
  const log = createLogger('bench', 'warn');
  rcOf = (): RequestContext => ({
    account,
    actor: {
      kind: 'api_key',
      key: { id: keyRow.id, kind: 'rest', name: keyRow.name, user_id: user.id, expires_at: null, revoked_at: null },
      issuer: { id: user.id, active: true, permissions: ['payments.view'] },
    },
    em: orm.em.fork(),
    log,
  });

  // ---- load ------------------------------------------------------------------------------------
  noteLoad('beforeLoad');
  const t0 = performance.now();
  await seed(accountId, 1, payments, 0);
  await seed(otherAccount, 1, other, 7);
  const loadSeconds = (performance.now() - t0) / 1000;
  progress(`load done in ${loadSeconds.toFixed(0)} s; vacuum analyze`);
  const t1 = performance.now();
  await pool.query('vacuum analyze payments');
  const sizes = (
    await pool.query(
      `select pg_size_pretty(pg_table_size('payments')) as heap, pg_size_pretty(pg_indexes_size('payments')) as indexes,
              (select json_object_agg(state, n) from (select state, count(*) as n from payments where account_id = $1 group by state) s) as states`,
      [accountId],
    )
  ).rows[0];
  out.load = {
    seconds: r1(loadSeconds),
    rowsPerSecond: Math.round((payments + other) / loadSeconds),
    vacuumAnalyzeSeconds: r1((performance.now() - t1) / 1000),
    ...sizes,
  };
  noteLoad('afterLoad');

  // ---- the queries -------------------------------------------------------------------------------
  const cols = `id, account_id, reference, state, amount_minor, currency, refunded_minor, subject_id, subject_type, is_refund, refund_of,
                reason, payer, method, provider, attempts, last_error, expires_at, settled_at, checkout_url, checkout_code, created_by,
                created_at, updated_at`;
  /** The page and the total in one statement: the total from a scalar subquery, the page (maybe empty) joined to it. */
  const floorSql = (where: string) =>
    `select t.total, p.* from (select count(*) as total from payments where ${where}) t
       left join lateral (select ${cols} from payments where ${where} order by created_at desc, id desc limit 25 offset 0) p on true`;
  const ALL = `account_id = $1`;
  const OPEN = `account_id = $1 and state in ('draft', 'pending', 'authorised')`;
  const SUBJECT = `account_id = $1 and subject_id = $2`;
  // A different order per call, spread over the year.
  const subjectOf = (i: number) => `order-${1 + ((i * 7907) % Math.floor(payments / 2))}`;

  const explain = async (text: string, params: unknown[]) => {
    const r = await pool.query(`explain (analyze, buffers, format json) ${text}`, params);
    const plan = r.rows[0]['QUERY PLAN'][0];
    const nodes: string[] = [];
    const walk = (n: any) => {
      nodes.push(
        `${n['Node Type']}${n['Index Name'] ? ` ${n['Index Name']}` : ''}${n['Scan Direction'] === 'Backward' ? ' (backward)' : ''}`,
      );
      for (const c of n.Plans ?? []) walk(c);
    };
    walk(plan.Plan);
    return { executionMs: r2(plan['Execution Time']), planningMs: r2(plan['Planning Time']), nodes: nodes.join(' > ') };
  };

  /** The API's answer is the floor's: the same total and the same ids in the same order. */
  const DOOR = '/api/v3/payments/not-a-reference';
  const sameAnswer = (name: string, api: any, floor: pg.QueryResult) => {
    const total = Number(floor.rows[0].total);
    const ids = floor.rows.filter((r) => r.id !== null).map((r) => r.id as string);
    const got = (api.data as any[]).map((p) => p.id as string);
    if (api.meta.total !== total || got.join() !== ids.join())
      throw new Error(`${name}: the API answered total ${api.meta.total} and ${got.length} ids; the SQL ${total} and ${ids.length}`);
    return { total, rows: ids.length };
  };

  /**
   * `samples` timed rounds, alternating so all see the same machine: the API's answer, the floor's,
   * the service's in this process (listPayments: no HTTP, no authentication), and the door (an
   * authenticated GET refused before any statement of its own: a malformed reference is 404 before
   * any lookup, so it costs HTTP, Koa and the credential statement, what every request pays before
   * its query). First after 20 untimed rounds (`cold`), then again after `--warm` more (`steady`:
   * V8 has optimized the request path). The target is judged on the steady figures. With `oneNamed`
   * (a subject's page, which the service answers with one named statement of the floor's shape),
   * also the floor sent as a named statement (planned once per connection), in the same rounds.
   */
  async function measure(
    name: string,
    path: (i: number) => string,
    query: (i: number) => Record<string, string>,
    where: string,
    params: (i: number) => unknown[],
    oneNamed = false,
  ) {
    let answer: { total: number; rows: number } | null = null;
    const pairs = async (n: number, timed: boolean) => {
      const api: number[] = [];
      const db: number[] = [];
      const svc: number[] = [];
      const doors: number[] = [];
      const named: number[] = [];
      for (let i = 0; i < n; i++) {
        let t = performance.now();
        const a = await get(path(i));
        if (timed) api.push(performance.now() - t);
        if (a.status !== 200) throw new Error(`${path(i)}: ${a.status} ${JSON.stringify(a.body).slice(0, 400)}`);
        t = performance.now();
        const f = await pool.query(floorSql(where), params(i));
        if (timed) db.push(performance.now() - t);
        answer = sameAnswer(name, a.body, f);
        if (oneNamed) {
          t = performance.now();
          const g = await pool.query({ name: `bench_floor_${name.replace(/\W/g, '_')}`, text: floorSql(where), values: params(i) });
          if (timed) named.push(performance.now() - t);
          sameAnswer(`${name} (named floor)`, a.body, g);
        }
        t = performance.now();
        const s = await listPayments(rcOf(), query(i));
        if (timed) svc.push(performance.now() - t);
        sameAnswer(`${name} (in process)`, s, f);
        t = performance.now();
        const d = await get(DOOR);
        if (timed) doors.push(performance.now() - t);
        if (d.status !== 404) throw new Error(`door: ${d.status}`);
      }
      const x = stats(api);
      const y = stats(db);
      const z = oneNamed ? stats(named) : null;
      return {
        api: x,
        handWrittenSql: y,
        ratioP50: r2(x.p50 / y.p50),
        ...(z ? { handWrittenSqlNamed: z, ratioP50ToNamed: r2(x.p50 / z.p50) } : {}),
        serviceInProcess: stats(svc),
        door: stats(doors),
      };
    };
    await pairs(20, false);
    const cold = await pairs(samples, true);
    progress(`${name}, cold: API p50 ${cold.api.p50} ms p95 ${cold.api.p95} ms; SQL p50 ${cold.handWrittenSql.p50} ms (${cold.ratioP50}x)`);
    await pairs(warm, false);
    const steady = await pairs(samples, true);
    progress(
      `${name}, steady: API p50 ${steady.api.p50} ms p95 ${steady.api.p95} ms; SQL p50 ${steady.handWrittenSql.p50} ms (${steady.ratioP50}x)`,
    );
    const p = params(0);
    // The service's statements: a subject's page is one of the floor's shape; the others are the
    // count and the page, run side by side on two connections.
    const countSql = `select count(*) from payments where ${where}`;
    const pageSql = `select ${cols} from payments where ${where} order by created_at desc, id desc limit 25 offset 0`;
    return {
      ...steady,
      cold,
      answer,
      plans: oneNamed
        ? { floor: await explain(floorSql(where), p) }
        : { floor: await explain(floorSql(where), p), serviceCount: await explain(countSql, p), servicePage: await explain(pageSql, p) },
    };
  }

  noteLoad('beforeReads');
  const res: Record<string, any> = {};
  if (reads.has('first'))
    res.firstPage = await measure(
      'first page',
      () => '/api/v3/payments',
      () => ({}),
      ALL,
      () => [accountId],
    );
  if (reads.has('open'))
    res.stateOpen = await measure(
      'state=open',
      () => '/api/v3/payments?state=open',
      () => ({ state: 'open' }),
      OPEN,
      () => [accountId],
    );
  if (reads.has('subject'))
    res.subjectId = await measure(
      'subject_id',
      (i) => `/api/v3/payments?subject_id=${encodeURIComponent(subjectOf(i))}`,
      (i) => ({ subject_id: subjectOf(i) }),
      SUBJECT,
      (i) => [accountId, subjectOf(i)],
      true,
    );
  noteLoad('afterReads');
  out.reads = res;
  const target = (r?: { ratioP50: number }) => (r ? (r.ratioP50 <= 2 ? 'met' : 'missed') : 'not measured');
  out.targets = {
    firstPageWithin2xSql: target(res.firstPage),
    stateOpenWithin2xSql: target(res.stateOpen),
    subjectIdWithin2xSql: target(res.subjectId),
  };
  out.loadAverage = fs.readFileSync('/proc/loadavg', 'utf8').trim();
} finally {
  closeAgent();
  await orm.close();
  await pool.end();
  await stack.stop();
  fs.rmSync(dir, { recursive: true, force: true });
}
process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
