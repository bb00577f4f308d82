// A 5,000-row product batch (POST …/products/batch) from the request to its run `completed`, beside
// the database's own floor in the same run: the same 5,000 rows written by one bare set-based
// upsert (insert … select from jsonb_to_recordset … on conflict (catalogue_id, sku) do update).
//   npx tsx bench/catalogue-batch.ts [-- --rows 5000 --runs 5 --channels none|storefront|whatsapp]
import pg from 'pg';
import fs from 'node:fs';
import { benchStack, numberArg, percentile, stackCpuSeconds } from './lib.js';

const rows = numberArg('rows', 5000);
const runs = numberArg('runs', 5);
const channelArg = process.argv.includes('--channels') ? process.argv[process.argv.indexOf('--channels') + 1] : 'none';
const channels = channelArg === 'none' ? [] : channelArg.split(',');

const { stack, dir, accountId, operator } = await benchStack();
const pool = new pg.Pool({ connectionString: stack.databaseUrl, max: 2 });
const out: Record<string, unknown> = { rows, runs, channels };

// Catalogue routes need a key with an issuer (a family added after 7 September 2026).
const adminPost = async (p: string, body: unknown) =>
  (
    (await (
      await fetch(`${stack.apiUrl}/admin/v1${p}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${operator}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      })
    ).json()) as any
  ).data;
const user = await adminPost(`/accounts/${accountId}/users`, { email: 'bench@example.com', name: 'Bench', permissions: ['*'] });
const token = (await adminPost(`/accounts/${accountId}/keys`, { name: 'bench issued', user_id: user.id })).token as string;
const call = async (method: string, p: string, body?: unknown) => {
  const res = await fetch(`${stack.apiUrl}${p}`, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as any };
};

/** The batch rows of run `n`: every documented field a shop feed usually carries; `n` changes prices so a re-sync updates every row. */
const payload = (n: number) =>
  Array.from({ length: rows }, (_, i) => ({
    sku: `BENCH-${String(i).padStart(5, '0')}`,
    name: `Bench product ${i}`,
    description: `A product of the benchmark, number ${i}.`,
    price: 1000 + i + n,
    currency: 'USD',
    image_url: `https://img.example.com/p/${i}.jpg`,
    inventory: i % 50,
    condition: 'new',
    brand: `Brand ${i % 20}`,
    category: `Category ${i % 10}`,
  }));

const newShop = async (name: string) => {
  const r = await call('POST', '/api/v3/catalogues', { name, channels, default_currency: 'USD' });
  if (r.status !== 201) throw new Error(`shop create: ${JSON.stringify(r.body)}`);
  return r.body.data.id as number;
};

/**
 * One batch: POST, then poll its report every 20 ms. Two clocks: `ms` ends at the run's own
 * finished_at (when the finishing transaction set completed; the database and this process share
 * the machine's clock), so the poll interval and the poll request are not counted; `polledMs` ends
 * when a poll first saw completed (the figure before 2026-11-24, 10-30 ms longer).
 */
async function timedBatch(shop: number, body: unknown) {
  const wall0 = Date.now();
  const t0 = performance.now();
  const r = await call('POST', `/api/v3/catalogues/${shop}/products/batch`, body);
  if (r.status !== 202) throw new Error(`batch: ${r.status} ${JSON.stringify(r.body).slice(0, 300)}`);
  const acceptedMs = performance.now() - t0;
  for (;;) {
    const v = (await call('GET', `/api/v3/catalogues/${shop}/syncs/${r.body.data.id}`)).body.data;
    if (v.status === 'completed' || v.status === 'failed') {
      const polledMs = performance.now() - t0;
      return { ms: Date.parse(v.finished_at) - wall0, polledMs, acceptedMs, report: v };
    }
    if (performance.now() - t0 > 120_000) throw new Error('batch did not finish in 120 s');
    await new Promise((res) => setTimeout(res, 20));
  }
}

// The floor: the same rows by one bare upsert into a shop of their own, brand and category ids given.
async function floorUpsert(n: number, catalogueId: number): Promise<number> {
  const t0 = performance.now();
  await pool.query(
    `insert into products as p (account_id, catalogue_id, sku, name, description, price, currency, image_url, availability, condition, inventory,
                                revision, created_at, updated_at)
     select $1, $2, v.sku, v.name, v.description, v.price, v.currency, v.image_url, 'in stock', v.condition, v.inventory, 1, now(), now()
       from jsonb_to_recordset($3::jsonb) as v(sku text, name text, description text, price bigint, currency text, image_url text,
                                               condition text, inventory int)
     on conflict (catalogue_id, sku) do update set name = excluded.name, description = excluded.description, price = excluded.price,
        currency = excluded.currency, image_url = excluded.image_url, condition = excluded.condition, inventory = excluded.inventory,
        revision = p.revision + 1, updated_at = now()`,
    [accountId, catalogueId, JSON.stringify(payload(n))],
  );
  return performance.now() - t0;
}

const median = (xs: number[]) =>
  percentile(
    [...xs].sort((a, b) => a - b),
    50,
  );
const r2 = (ms: number) => Math.round(ms) / 1000;
try {
  // Warm-up (workflow bundle loaded in the worker, plans cached), not measured.
  await timedBatch(await newShop('Warm-up'), { products: payload(0).slice(0, 100) });

  const floorShop = await newShop('Floor');
  const cpuAtStart = stackCpuSeconds(stack, dir);
  const firstLoad: number[] = [];
  const reSync: number[] = [];
  const firstPolled: number[] = [];
  const rePolled: number[] = [];
  const floorFirst: number[] = [];
  const floorRe: number[] = [];
  const accepted: number[] = [];
  let lastReport: Record<string, unknown> = {};
  for (let n = 1; n <= runs; n++) {
    // Floor: a fresh shop's first load (all inserts), then the same rows with new prices (all updates).
    await pool.query('delete from products where catalogue_id = $1', [floorShop]);
    floorFirst.push(await floorUpsert(n, floorShop));
    floorRe.push(await floorUpsert(n + 1000, floorShop));

    const shop = await newShop(`Bench ${n}`);
    const first = await timedBatch(shop, { products: payload(n) });
    if (first.report.created !== rows) throw new Error(`first load: ${JSON.stringify(first.report).slice(0, 300)}`);
    firstLoad.push(first.ms);
    firstPolled.push(first.polledMs);
    accepted.push(first.acceptedMs);
    const again = await timedBatch(shop, { products: payload(n + 1000) });
    if (again.report.updated !== rows) throw new Error(`re-sync: ${JSON.stringify(again.report).slice(0, 300)}`);
    reSync.push(again.ms);
    rePolled.push(again.polledMs);
    const { problems: _p, ...report } = again.report;
    lastReport = report;
  }
  const cpuAtEnd = stackCpuSeconds(stack, dir);
  out.floor = { firstLoadSeconds: floorFirst.map(r2), reSyncSeconds: floorRe.map(r2) };
  out.batch = {
    firstLoadSeconds: firstLoad.map(r2),
    reSyncSeconds: reSync.map(r2),
    acceptedSeconds: accepted.map(r2),
    firstLoadPolledSeconds: firstPolled.map(r2),
    reSyncPolledSeconds: rePolled.map(r2),
  };
  out.median = {
    floorFirstLoad: r2(median(floorFirst)),
    batchFirstLoad: r2(median(firstLoad)),
    ratioFirstLoad: Math.round((median(firstLoad) / median(floorFirst)) * 100) / 100,
    floorReSync: r2(median(floorRe)),
    batchReSync: r2(median(reSync)),
    ratioReSync: Math.round((median(reSync) / median(floorRe)) * 100) / 100,
    accepted202: r2(median(accepted)),
    polledFirstLoad: r2(median(firstPolled)),
    polledRatioFirstLoad: Math.round((median(firstPolled) / median(floorFirst)) * 100) / 100,
    polledReSync: r2(median(rePolled)),
    polledRatioReSync: Math.round((median(rePolled) / median(floorRe)) * 100) / 100,
  };
  out.lastReport = lastReport;
  // With EMBEDDED_PG_SETTINGS="shared_preload_libraries=pg_stat_statements": where the database's time went.
  if (process.env.EMBEDDED_PG_SETTINGS?.includes('pg_stat_statements')) {
    await pool.query('create extension if not exists pg_stat_statements');
    out.statements = (
      await pool.query(`select calls, round(total_exec_time)::int as ms, rows, left(regexp_replace(query, '\\s+', ' ', 'g'), 140) as query
      from pg_stat_statements order by total_exec_time desc limit 14`)
    ).rows;
  }
  out.cpuSeconds = Object.fromEntries(Object.entries(cpuAtEnd).map(([k, v]) => [k, Math.round((v - (cpuAtStart[k] ?? 0)) * 10) / 10]));
} finally {
  await pool.end();
  await stack.stop();
  fs.rmSync(dir, { recursive: true, force: true });
}
process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
