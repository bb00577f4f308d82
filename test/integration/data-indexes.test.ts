import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { Client, Connection } from '@temporalio/client';
import {
  columnIndexName,
  columnStatisticsName,
  searchIndexName,
  searchStatisticsName,
  tablePredicate,
  valueExpression,
} from '../../domain/data/expressions.js';
import { dataIndexWorkflowId } from '../../workflows/data/column-index.starter.js';
import { indexStateQuery } from '../../workflows/data/column-index.js';
import { OPERATOR_TOKEN, admin, eventually, http, newTenant, type Tenant } from '../support/stack.js';
import { privateStack } from '../support/private-stack.js';

// @test-alone: two tests here hold an open writer on data_records so a build is surely under way;
// every other file's index build (CREATE INDEX CONCURRENTLY on the same physical table) would wait
// for it, and this file's build would queue behind theirs. scripts/test.ts runs it by itself.

// Indexes built by a workflow (issue 14 point 7): a column marked indexed through the operator API
// gets its partial expression index by CREATE INDEX CONCURRENTLY from the index workflow, and
// index_status moves pending → building → ready (or failed with index_error, the invalid index
// dropped); unmarking it moves through dropping to null. Records are written straight into
// data_records (thousands at once): the build, not the write path, is under test here.
const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 4 });
const connection = await Connection.connect({ address: process.env.TEMPORAL_ADDRESS ?? '127.0.0.1:7233' });
const temporal = new Client({ connection });
after(async () => {
  await pool.end();
  await connection.close();
});
const q = async <T = any>(sql: string, params: unknown[] = []) => (await pool.query(sql, params)).rows as T[];

type Admin = (method: string, path: string, body?: unknown) => ReturnType<typeof admin>;
const body = (r: { body: any }) => r.body?.data ?? r.body;

async function createTable(t: Tenant, columns: unknown[], call: Admin = admin) {
  const res = await call('POST', `/accounts/${t.accountUid}/data/tables`, { name: `Indexed ${Date.now()}`, columns });
  assert.equal(res.status, 201, res.text);
  return body(res) as { id: string; columns: { id: string; key: string; index_status: string | null }[] };
}

const column = async (tableId: string, key: string) =>
  (
    await q<{ id: string; indexed: boolean; index_status: string | null; index_error: string | null; index_name: string | null }>(
      'select id, indexed, index_status, index_error, index_name from data_columns where table_id = $1 and key = $2',
      [tableId, key],
    )
  )[0];

/** Every column index (dx_…) of data_records over this table's column `key`, found by its definition. */
const indexesOn = (tableId: string, key: string) =>
  q<{ name: string; valid: boolean }>(
    `select c.relname as name, i.indisvalid and i.indisready as valid
       from pg_index i join pg_class c on c.oid = i.indexrelid
      where i.indrelid = 'data_records'::regclass and c.relname like 'dx\\_%' and pg_get_indexdef(i.indexrelid) like $1 and pg_get_indexdef(i.indexrelid) like $2`,
    [`%${tableId}%`, `%'${key}'%`],
  );

async function insertRecords(t: Tenant, tableId: string, n: number, data: string) {
  await q(
    `insert into data_records (id, account_id, table_id, data, source, size_bytes, created_at, updated_at)
     select gen_random_uuid(), $1, $2, ${data}, 'api', 64, now(), now() from generate_series(1, $3::int) g`,
    [t.accountId, tableId, n],
  );
}

/** The statistics object of that name on data_records: its definition and whether ANALYZE has filled it. */
const statisticsNamed = (name: string) =>
  q<{ def: string; filled: boolean }>(
    `select pg_get_statisticsobjdef(s.oid) as def, exists (select 1 from pg_stats_ext e where e.statistics_name = s.stxname) as filled
       from pg_statistic_ext s where s.stxname = $1 and s.stxrelid = 'data_records'::regclass`,
    [name],
  );

const settled = (s: string | null) => s === 'ready' || s === 'failed' || s === null;

test('a column marked indexed is built concurrently: pending → building → ready, valid, used by an equality filter', async () => {
  const t = await newTenant();
  const table = await createTable(t, [
    { key: 'name', type: 'text' },
    { key: 'code', type: 'text', indexed: true },
    { key: 'amount', type: 'number' },
  ]);
  // The create answers once the build is asked for; its workflow may already have begun (building)
  // by the time the answer reads the column back (seen once in a CI rehearsal), but never finished.
  assert.ok(['pending', 'building'].includes(table.columns.find((c) => c.key === 'code')!.index_status!), 'the build is under way');
  await insertRecords(t, table.id, 4000, `jsonb_build_object('name', 'Name ' || g, 'code', 'C' || g, 'amount', g)`);
  // A second column marked indexed once the records are there: this build has rows to read.
  const patched = await admin('PATCH', `/accounts/${t.accountUid}/data/tables/${table.id}/columns/amount`, { indexed: true });
  assert.equal(patched.status, 200, patched.text);

  for (const key of ['code', 'amount']) {
    const c = await eventually(
      () => column(table.id, key),
      (r) => settled(r.index_status),
      60_000,
    );
    assert.equal(c.index_status, 'ready', `${key}: ${c.index_error}`);
    assert.equal(c.index_error, null);
    assert.equal(c.index_name, columnIndexName(c.id));
    assert.deepEqual(await indexesOn(table.id, key), [{ name: columnIndexName(c.id), valid: true }], `${key}: exactly one valid index`);
    // Made and analyzed by the build before it said ready (nothing in this test has run ANALYZE yet).
    const [stats, ...more] = await statisticsNamed(columnStatisticsName(c.id));
    assert.equal(more.length, 0);
    assert.ok(stats, `${key}: a statistics object beside the index`);
    assert.ok(stats.def.includes('table_id') && stats.def.includes(`'${key}'`), stats.def);
    assert.equal(stats.filled, true, `${key}: statistics analyzed`);
  }
  const amount = await column(table.id, 'amount');
  const view = await admin('GET', `/accounts/${t.accountUid}/data/tables/${table.id}`);
  assert.equal(body(view).columns.find((c: { key: string }) => c.key === 'amount').index_status, 'ready');

  // The search index covers the text columns (name, code) and is a valid trigram index.
  const search = await eventually(
    () =>
      q<{ status: string | null; columns: string[] | null }>(
        'select search_index_status as status, search_index_columns as columns from data_tables where id = $1',
        [table.id],
      ),
    (r) => r[0].status === 'ready' || r[0].status === 'failed',
    60_000,
  );
  assert.deepEqual(search[0], { status: 'ready', columns: ['name', 'code'] });
  const trgm = await q<{ def: string; valid: boolean }>(
    `select pg_get_indexdef(i.indexrelid) as def, i.indisvalid as valid from pg_index i join pg_class c on c.oid = i.indexrelid where c.relname = $1`,
    [searchIndexName(table.id)],
  );
  assert.equal(trgm.length, 1);
  assert.ok(trgm[0].valid);
  assert.match(trgm[0].def, /gin_trgm_ops/);
  const searchStats = await statisticsNamed(searchStatisticsName(table.id));
  assert.equal(searchStats.length, 1, 'statistics on the search expression');
  assert.ok(searchStats[0].def.includes(`'name'`) && searchStats[0].def.includes(`'code'`), searchStats[0].def);
  assert.equal(searchStats[0].filled, true);

  // Statistics for the planner. A build elsewhere in the run can make ANALYZE the victim of a
  // deadlock (each waits for the other's snapshot): asked again then.
  for (let i = 0; ; i++) {
    const err = await q('analyze data_records').then(
      () => null,
      (e: { code?: string }) => e,
    );
    if (!err) break;
    if (err.code !== '40P01' || i >= 5) throw err;
  }
  // The planner takes the index for an equality on the column's typed expression over live records.
  const plan = async (where: string) =>
    JSON.stringify(await q(`explain (format json) select seq from data_records where ${tablePredicate(table.id)} and ${where}`));
  assert.match(await plan(`${valueExpression('amount', 'number')} = 1234`), new RegExp(columnIndexName(amount.id)));
  assert.match(await plan(`${valueExpression('code', 'text')} = 'C77'`), new RegExp(columnIndexName((await column(table.id, 'code')).id)));

  // The workflow tells what it did.
  const state = await temporal.workflow.getHandle(dataIndexWorkflowId(t.accountId, table.id, 'amount')).query(indexStateQuery);
  assert.equal(state.last?.outcome, 'ready');
  const desc = await temporal.workflow.getHandle(dataIndexWorkflowId(t.accountId, table.id, 'amount')).describe();
  assert.equal(desc.searchAttributes.ResourceType?.[0], 'data_column_index');
  assert.equal(desc.searchAttributes.ResourceId?.[0], table.id);
});

test('an index the database cannot build ends failed with its error, and no invalid index is left', async () => {
  const t = await newTenant();
  const table = await createTable(t, [
    { key: 'title', type: 'text' },
    { key: 'notes', type: 'long_text' },
  ]);
  await insertRecords(t, table.id, 200, `jsonb_build_object('title', 'T' || g, 'notes', 'short ' || g)`);
  // One note of 6,000 characters of hex (md5 digests do not compress): a B-tree entry holds at
  // most 2,704 bytes, so the build stops with "index row size … exceeds btree … maximum". Within
  // the contract's 8 KB record, and a failure no retry will cure.
  await q(
    `insert into data_records (id, account_id, table_id, data, source, size_bytes, created_at, updated_at)
     values (gen_random_uuid(), $1, $2, jsonb_build_object('title', 'long', 'notes', (select string_agg(md5(g::text || random()::text), '') from generate_series(1, 190) g)), 'api', 6100, now(), now())`,
    [t.accountId, table.id],
  );
  const patched = await admin('PATCH', `/accounts/${t.accountUid}/data/tables/${table.id}/columns/notes`, { indexed: true });
  assert.equal(patched.status, 200, patched.text);
  const c = await eventually(
    () => column(table.id, 'notes'),
    (r) => settled(r.index_status),
    60_000,
  );
  assert.equal(c.index_status, 'failed');
  assert.match(c.index_error ?? '', /index row size \d+ exceeds/);
  assert.equal(c.index_name, null);
  assert.deepEqual(await indexesOn(table.id, 'notes'), [], 'the invalid index was dropped');
  const view = await admin('GET', `/accounts/${t.accountUid}/data/tables/${table.id}`);
  const shown = body(view).columns.find((x: { key: string }) => x.key === 'notes');
  assert.equal(shown.index_status, 'failed');
  assert.match(shown.index_error, /exceeds/);
});

test('unmarking an indexed column moves it through dropping to null and the index is gone', async () => {
  const t = await newTenant();
  const table = await createTable(t, [{ key: 'sku', type: 'text', indexed: true }]);
  await insertRecords(t, table.id, 1000, `jsonb_build_object('sku', 'S' || g)`);
  const ready = await eventually(
    () => column(table.id, 'sku'),
    (r) => settled(r.index_status),
    60_000,
  );
  assert.equal(ready.index_status, 'ready');
  assert.equal((await indexesOn(table.id, 'sku')).length, 1);
  const statsName = columnStatisticsName(ready.id);
  assert.equal((await statisticsNamed(statsName)).length, 1, 'statistics beside the ready index');
  const patched = await admin('PATCH', `/accounts/${t.accountUid}/data/tables/${table.id}/columns/sku`, { indexed: false });
  assert.equal(patched.status, 200, patched.text);
  assert.equal(body(patched).columns[0].index_status, 'dropping');
  const dropped = await eventually(
    () => column(table.id, 'sku'),
    (r) => r.index_status === null,
    60_000,
  );
  assert.deepEqual(
    { status: dropped.index_status, indexed: dropped.indexed, name: dropped.index_name },
    { status: null, indexed: false, name: null },
  );
  assert.deepEqual(await indexesOn(table.id, 'sku'), []);
  assert.deepEqual(await statisticsNamed(statsName), [], 'the statistics went with the index');

  // Marked again: built again (a new run of the same workflow id).
  await admin('PATCH', `/accounts/${t.accountUid}/data/tables/${table.id}/columns/sku`, { indexed: true });
  const again = await eventually(
    () => column(table.id, 'sku'),
    (r) => settled(r.index_status),
    60_000,
  );
  assert.equal(again.index_status, 'ready');
  assert.equal((await indexesOn(table.id, 'sku')).length, 1);
  assert.equal((await statisticsNamed(statsName)).length, 1, 'statistics made again');
});

/** A writer left open on the table: a concurrent build waits for it before its first scan. */
async function openWriter(t: Tenant, tableId: string, data: string) {
  const holder = new pg.Client({ connectionString: process.env.DATABASE_URL });
  await holder.connect();
  await holder.query('begin');
  await holder.query(
    `insert into data_records (id, account_id, table_id, data, source, size_bytes, created_at, updated_at)
     values (gen_random_uuid(), $1, $2, $3::jsonb, 'api', 16, now(), now())`,
    [t.accountId, tableId, data],
  );
  return {
    close: async (how: 'commit' | 'rollback') => {
      await holder.query(how).catch(() => {});
      await holder.end();
    },
  };
}

const sessionsOf = (indexName: string) =>
  q<{ query: string; phase: string | null }>(
    `select a.query, p.phase from pg_stat_activity a left join pg_stat_progress_create_index p on p.pid = a.pid where a.application_name = $1`,
    [`svc-data-index:${indexName}`],
  );

test('a drop asked for during a build cancels the statement: the half-built index is dropped, the column ends null', async () => {
  const t = await newTenant();
  const table = await createTable(t, [{ key: 'qty', type: 'number' }]);
  await insertRecords(t, table.id, 1000, `jsonb_build_object('qty', g)`);
  const writer = await openWriter(t, table.id, '{"qty": 0}');
  try {
    await admin('PATCH', `/accounts/${t.accountUid}/data/tables/${table.id}/columns/qty`, { indexed: true });
    const name = columnIndexName((await column(table.id, 'qty')).id);
    const waiting = await eventually(
      () => sessionsOf(name),
      (r) => r.some((s) => /waiting/.test(s.phase ?? '')),
      60_000,
    );
    assert.ok(waiting.length, 'the build is under way');
    assert.equal((await column(table.id, 'qty')).index_status, 'building');
    const patched = await admin('PATCH', `/accounts/${t.accountUid}/data/tables/${table.id}/columns/qty`, { indexed: false });
    assert.equal(body(patched).columns[0].index_status, 'dropping');
    // The cancellation reaches the build at its next heartbeat; its statement is cancelled and it
    // drops what it left (that DROP waits for the open writer too).
    const cleanup = await eventually(
      () => sessionsOf(name),
      (r) => r.some((s) => s.query.startsWith('DROP INDEX')),
      30_000,
    );
    assert.ok(
      cleanup.some((s) => s.query.startsWith('DROP INDEX')),
      'the build was cancelled',
    );
  } finally {
    await writer.close('commit');
  }
  const c = await eventually(
    () => column(table.id, 'qty'),
    (r) => r.index_status === null,
    60_000,
  );
  assert.deepEqual({ status: c.index_status, indexed: c.indexed }, { status: null, indexed: false });
  assert.deepEqual(await indexesOn(table.id, 'qty'), []);
  const state = await temporal.workflow.getHandle(dataIndexWorkflowId(t.accountId, table.id, 'qty')).result();
  assert.equal(state.handled, 2, 'the build, then the drop');
  assert.equal(state.last?.outcome, 'dropped');
});

test('a build survives a worker killed in the middle of it: ready afterwards, with exactly one index', async () => {
  const stack = await privateStack();
  let writer: Awaited<ReturnType<typeof openWriter>> | null = null;
  try {
    const call: Admin = (method, path, payload) =>
      http(method, `${stack.apiUrl}/admin/v1${path}`, { token: OPERATOR_TOKEN, body: payload });
    const t = await newTenant();
    // A number column: no search index to build first (index builds run one at a time per worker).
    const table = await createTable(t, [{ key: 'ref', type: 'number' }], call);
    await insertRecords(t, table.id, 3000, `jsonb_build_object('ref', g)`);
    // A writer that has not committed: a concurrent build waits for it before its first scan, so
    // the build is surely under way (index in the catalog, not yet valid) when the worker dies.
    writer = await openWriter(t, table.id, '{"ref": 0}');
    const patched = await call('PATCH', `/accounts/${t.accountUid}/data/tables/${table.id}/columns/ref`, { indexed: true });
    assert.equal(patched.status, 200, patched.text);
    const ref = await column(table.id, 'ref');
    const name = columnIndexName(ref.id);
    const waiting = await eventually(
      () => sessionsOf(name),
      (r) => r.some((s) => s.phase !== null),
      60_000,
    );
    assert.match(waiting[0]?.phase ?? '', /waiting/, 'the build waits for the open writer');
    assert.equal((await column(table.id, 'ref')).index_status, 'building');

    await stack.killWorker();
    // The server notices the dead connection (client_connection_check_interval) and ends its
    // statement, leaving the half-built index invalid.
    const orphan = await eventually(
      () => q('select pid from pg_stat_activity where application_name = $1', [`svc-data-index:${name}`]),
      (r) => r.length === 0,
      20_000,
    );
    assert.equal(orphan.length, 0, 'the dead worker’s statement ended');
    assert.deepEqual(await indexesOn(table.id, 'ref'), [{ name, valid: false }], 'killed mid-build: an invalid index');
    stack.startWorker();
    await writer.close('commit');
    writer = null;

    const c = await eventually(
      () => column(table.id, 'ref'),
      (r) => settled(r.index_status),
      120_000,
      500,
    );
    assert.equal(c.index_status, 'ready', c.index_error ?? '');
    assert.deepEqual(await indexesOn(table.id, 'ref'), [{ name, valid: true }], 'exactly one index, valid');
  } finally {
    await writer?.close('rollback');
    await stack.stop();
  }
});
