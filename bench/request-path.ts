// Where an authenticated request's fixed cost goes (issue 26, point 8: the payments list by
// subject_id, whose own query is a few rows, was 1.8-3.6× its hand-written SQL because of it). On
// a private stack with `--payments` payments of one account (two per subject), one request at a
// time, p50 and p90 of `--n` calls after 200 untimed, in three groups:
//   sql:    statements through pg on one connection: `select 1` (a round trip), the credential
//           statement alone (services/account/store.ts findCredential, named), the subject page as
//           the hand-written floor (unnamed, planned per call, and named), the page's two
//           statements as the service ran them before (count and page, unnamed, side by side, with
//           the credential statement beside them), and as it runs them now (the admission, the count
//           and the page in one named statement).
//   app:    this process's own Koa app of the service (api/http/app.ts) on the stack's database,
//           beside a bare node:http server and a bare Koa app: an unknown path (router, error
//           path, no credential), an authenticated 404 (`/api/v3/payments/not-a-reference`: the
//           door), and the page by subject_id.
//   child:  the same requests to the stack's API process (what bench:payments-list measures).
//   npm run bench:request-path [-- --n 1000 --payments 200000 --only sql|app|child]
import http from 'node:http';
import fs from 'node:fs';
import os from 'node:os';
import Koa from 'koa';
import pg from 'pg';
import { benchStack, numberArg, operatorCaller, percentile, progressLog } from './lib.js';
import { openOrm } from '../entities/orm.js';
import { numberPlaceholders } from '../entities/db.js';
import { createLogger } from '../logger.js';
import { loadConfig, poolMaxOf, requestBoundedDatabase } from '../config.js';
import { connectTemporalClient } from '../temporal/client.js';
import { createApp } from '../api/http/app.js';
import { hashToken } from '../api/http/auth.js';
import { windowStartOf } from '../api/http/ratelimit.js';
import { admissionSql, findCredential } from '../services/account/credentials.js';

const n = numberArg('n', 1000);
const payments = numberArg('payments', 200_000);
const onlyArg = process.argv.indexOf('--only');
const only = onlyArg > 0 ? process.argv[onlyArg + 1] : null;
const progress = progressLog();

const { stack, dir, accountId, operator } = await benchStack();
Object.assign(process.env, stack.env, { LOG_LEVEL: 'warn', RATE_LIMIT_PER_MINUTE: '100000000', OPERATOR_TOKEN: operator });
const config = loadConfig();
const orm = await openOrm(config.databaseUrl, poolMaxOf(config, 'api'), { ...requestBoundedDatabase(config) });
const temporal = await connectTemporalClient(config.temporalConnection, config.temporalNamespace, {
  callTimeoutMs: 10_000,
  waitMs: 15_000,
});
const pool = new pg.Pool({ connectionString: stack.databaseUrl, max: 4 });
const adminCall = operatorCaller(stack.apiUrl, operator);
const out: Record<string, unknown> = {
  n,
  payments,
  machine: `${os.cpus().length} cores`,
  loadAverage1m: Math.round(os.loadavg()[0] * 10) / 10,
};

const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
let header = '';
function get(port: number, path: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      { agent, host: '127.0.0.1', port, path, headers: { authorization: header, accept: 'application/json' } },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', reject);
    req.end();
  });
}
function serve(handler: http.RequestListener): Promise<{ port: number; close: () => void }> {
  return new Promise((resolve) => {
    const s = http.createServer(handler);
    s.keepAliveTimeout = 65_000;
    s.listen(0, '127.0.0.1', () => resolve({ port: (s.address() as { port: number }).port, close: () => s.close() }));
  });
}

const figures: Record<string, { p50: number; p90: number }> = {};
async function time(name: string, fn: () => Promise<unknown>) {
  for (let i = 0; i < 200; i++) await fn();
  const xs: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    await fn();
    xs.push(performance.now() - t);
  }
  xs.sort((a, b) => a - b);
  figures[name] = { p50: +percentile(xs, 50).toFixed(3), p90: +percentile(xs, 90).toFixed(3) };
  progress(`${name}: p50 ${figures[name].p50} ms`);
}

try {
  const user = await adminCall('POST', `/accounts/${accountId}/users`, {
    email: 'b@example.com',
    name: 'B',
    permissions: ['payments.view'],
  });
  const token = (await adminCall('POST', `/accounts/${accountId}/keys`, { name: 'k', user_id: user.id })).token as string;
  header = `Bearer ${token}`;
  await pool.query(
    `insert into payments (id, account_id, reference, state, amount_minor, currency, refunded_minor, subject_id, subject_type,
       is_refund, payer, method, provider, attempts, expires_at, created_by, created_at, updated_at)
     select gen_random_uuid(), $1, 'PAY-' || n, 'paid', 1000, 'TZS', 0, 'order-' || (n / 2), 'order', false, '+255700000000',
       'mobile_money', 'mpesa-daraja', 1, now(), 'system:bench', now() - n * interval '1 second', now()
       from generate_series(1, $2::int) n`,
    [accountId, payments],
  );
  await pool.query('vacuum analyze payments');
  let k = 0;
  const subject = () => `order-${1 + ((k++ * 7907) % Math.floor(payments / 2))}`;
  const hash = hashToken(token);
  const credential = () => findCredential(orm.em.fork(), { tokenHash: hash, surface: 'rest', windowStart: windowStartOf(Date.now()) });

  if (!only || only === 'sql') {
    const cols = `id, account_id, reference, state, amount_minor, currency, refunded_minor, subject_id, subject_type, is_refund, refund_of,
                  reason, payer, method, provider, attempts, last_error, expires_at, settled_at, checkout_url, checkout_code, created_by,
                  created_at, updated_at`;
    const W = 'account_id = $1 and subject_id = $2';
    const floor = `select t.total, p.* from (select count(*) as total from payments where ${W}) t
         left join lateral (select ${cols} from payments where ${W} order by created_at desc, id desc limit 25 offset 0) p on true`;
    const count = `select count(*) from payments where ${W}`;
    const page = `select ${cols} from payments where ${W} order by created_at desc, id desc limit 25 offset 0`;
    const [c1, c2] = [await pool.connect(), await pool.connect()];
    const fingerprint = (await credential())!.principal_fp;
    const admitted = () => {
      const a = admissionSql({
        tokenHash: hash,
        surface: 'rest',
        windowStart: windowStartOf(Date.now()),
        fingerprint,
        weight: 0.5,
        limit: 1e8,
      });
      const s = subject();
      const { text } = numberPlaceholders(
        `with ${a.sql}
         select adm.*, t.total, p.* from adm
          cross join (select count(*) as total from payments where account_id = ? and subject_id = ? and exists (select from ok)) t
          left join lateral (select ${cols} from payments where account_id = ? and subject_id = ? and exists (select from ok)
                              order by created_at desc, id desc limit 25) p on true
          where set_config('synchronous_commit', 'off', true) is not null`,
      );
      return { name: 'bench_admitted_page', text, values: [...a.params, accountId, s, accountId, s] };
    };
    await time('sql: select 1', () => c1.query('select 1'));
    await time('sql: the credential statement (named)', credential);
    await time('sql: floor, unnamed (planned per call)', () => c1.query(floor, [accountId, subject()]));
    await time('sql: floor, named', () => c1.query({ name: 'bench_floor', text: floor, values: [accountId, subject()] }));
    await time('sql: count and page side by side, unnamed', () => {
      const s = subject();
      return Promise.all([c1.query(count, [accountId, s]), c2.query(page, [accountId, s])]);
    });
    await time('sql: before: credential beside count and page', () => {
      const s = subject();
      return Promise.all([credential(), c1.query(count, [accountId, s]), c2.query(page, [accountId, s])]);
    });
    await time('sql: now: admission, count and page in one named statement', () => c1.query(admitted()));
    c1.release();
    c2.release();
  }

  const subjectPath = () => `/api/v3/payments?subject_id=${subject()}`;
  if (!only || only === 'app') {
    const bare = await serve((_req, res) => {
      res.setHeader('content-type', 'application/json');
      res.end('{}');
    });
    const koa = new Koa();
    koa.use((ctx) => {
      ctx.body = {};
    });
    const bareKoa = await serve(koa.callback());
    const app = await serve(createApp({ config, orm, temporal: temporal.client, log: createLogger('bench', 'warn') }).callback());
    await time('app: bare node:http', () => get(bare.port, '/'));
    await time('app: bare Koa', () => get(bareKoa.port, '/'));
    await time('app: unknown path, 404 (no credential)', () => get(app.port, '/api/v3/nothing-here'));
    await time('app: authenticated 404 (the door)', () => get(app.port, '/api/v3/payments/not-a-reference'));
    await time('app: payments by subject_id', () => get(app.port, subjectPath()));
    for (const s of [bare, bareKoa, app]) s.close();
  }
  if (!only || only === 'child') {
    const port = Number(new URL(stack.apiUrl).port);
    await time('child: /healthz (no Koa)', () => get(port, '/healthz'));
    await time('child: unknown path, 404 (no credential)', () => get(port, '/api/v3/nothing-here'));
    await time('child: authenticated 404 (the door)', () => get(port, '/api/v3/payments/not-a-reference'));
    await time('child: payments by subject_id', () => get(port, subjectPath()));
  }
  out.p50ms = Object.fromEntries(Object.entries(figures).map(([k, v]) => [k, v.p50]));
  out.p90ms = Object.fromEntries(Object.entries(figures).map(([k, v]) => [k, v.p90]));
  out.loadAverage = fs.readFileSync('/proc/loadavg', 'utf8').trim();
} finally {
  agent.destroy();
  await orm.close();
  await pool.end();
  await temporal.close();
  await stack.stop();
  fs.rmSync(dir, { recursive: true, force: true });
}
process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
