// Records the data-table index workflow's histories for the replay test:
//   npx tsx scripts/record-data.ts
// A stack of its own; tables and columns made through the operator API (which asks for the
// indexes), records written straight into data_records: test/replay/histories/dataIndexWorkflow/
// <scenario>.json. Re-record after a change to workflows/data/column-index.ts.
import pg from 'pg';
import { dataIndexWorkflowId, SEARCH_TARGET } from '../workflows/data/column-index.starter.js';
import { withRecorder } from './recorder.js';

const TYPE = 'dataIndexWorkflow';

await withRecorder('svc-record-data', {}, 'Data index recorder', async ({ stack, client, account, admin, save }) => {
  const db = new pg.Pool({ connectionString: stack.databaseUrl, max: 2 });
  const status = async (tableId: string, key: string) =>
    (await db.query<{ s: string | null }>('select index_status as s from data_columns where table_id = $1 and key = $2', [tableId, key]))
      .rows[0]?.s;
  const until = async (what: string, ok: () => Promise<boolean>) => {
    for (let i = 0; i < 600; i++) {
      if (await ok()) return;
      await new Promise((r) => setTimeout(r, 200));
    }
    throw new Error(`gave up waiting: ${what}`);
  };
  const insert = (tableId: string, n: number, data: string) =>
    db.query(
      `insert into data_records (id, account_id, table_id, data, source, size_bytes, created_at, updated_at)
       select gen_random_uuid(), $1, $2, ${data}, 'api', 64, now(), now() from generate_series(1, $3::int) g`,
      [account.id, tableId, n],
    );
  const columnPath = (tableId: string, key: string) => `/accounts/${account.id}/data/tables/${tableId}/columns/${key}`;
  const handle = (tableId: string, target: string) => client.workflow.getHandle(dataIndexWorkflowId(account.id, tableId, target));
  try {
    // Built: a column created indexed over a table with records, and the table's search index.
    const built = (
      await admin('POST', `/accounts/${account.id}/data/tables`, {
        name: 'Recorded products',
        columns: [
          { key: 'name', type: 'text' },
          { key: 'price', type: 'number' },
        ],
      })
    ).data;
    await insert(built.id, 2000, `jsonb_build_object('name', 'Product ' || g, 'price', g)`);
    await admin('PATCH', columnPath(built.id, 'price'), { indexed: true });
    await save(TYPE, 'built', handle(built.id, 'price'));
    await save(TYPE, 'search-built', handle(built.id, SEARCH_TARGET));

    // Failed: a value too long for a B-tree entry ends the build failed, the invalid index dropped.
    await insert(
      built.id,
      1,
      `jsonb_build_object('name', (select string_agg(md5(x::text || random()::text), '') from generate_series(1, 190) x))`,
    );
    await admin('PATCH', columnPath(built.id, 'name'), { indexed: true });
    await save(TYPE, 'failed', handle(built.id, 'name'));

    // Dropped: the operator unmarks a built column (a new run of the same workflow id).
    await admin('PATCH', columnPath(built.id, 'price'), { indexed: false });
    await save(TYPE, 'dropped', handle(built.id, 'price'));

    // Dropped during the build: an open writer holds the build in its first wait (long enough for a
    // progress sample), the operator unmarks the column, the build is cancelled and the drop runs.
    const holder = new pg.Client({ connectionString: stack.databaseUrl });
    await holder.connect();
    try {
      await holder.query('begin');
      await holder.query(
        `insert into data_records (id, account_id, table_id, data, source, size_bytes, created_at, updated_at)
         values (gen_random_uuid(), $1, $2, '{"price": 0}', 'api', 16, now(), now())`,
        [account.id, built.id],
      );
      await admin('PATCH', columnPath(built.id, 'price'), { indexed: true });
      await until('price building', async () => (await status(built.id, 'price')) === 'building');
      await new Promise((r) => setTimeout(r, 12_000));
      await admin('PATCH', columnPath(built.id, 'price'), { indexed: false });
      // The cancellation reaches the build at its next heartbeat: its statement is cancelled and the
      // cleanup's DROP INDEX (which waits for this writer too) starts.
      await until('build cancelled', async () => {
        const { rows } = await db.query(
          `select 1 from pg_stat_activity where application_name like 'svc-data-index:dx%' and query like 'DROP INDEX%'`,
        );
        return rows.length > 0;
      });
    } finally {
      // The cancelled build's cleanup and the drop wait for this writer too.
      await holder.query('rollback').catch(() => undefined);
      await holder.end();
    }
    await save(TYPE, 'dropped-during-build', handle(built.id, 'price'));
    await until('price dropped', async () => (await status(built.id, 'price')) === null);
  } finally {
    await db.end();
  }
});
