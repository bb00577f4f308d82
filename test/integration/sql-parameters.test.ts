import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { openOrm } from '../../entities/orm.js';
import { exec, many, one, onePlanned } from '../../entities/db.js';

// Every value given to the SQL helpers travels as a bind parameter, never in the statement text.
const orm = await openOrm(process.env.DATABASE_URL!, 2);
after(() => orm.close());

const NASTY = `O'Brien "quoted" \\ back $1 ? $$ -- not a comment /* nor this */ '); select 1; --`;

test('a value full of SQL metacharacters round-trips unchanged and is not part of the statement text', async () => {
  const row = await one<{ q: string; v: string; len: number }>(
    orm.em.fork(),
    'select current_query() as q, ?::text as v, length(?) as len',
    [NASTY, NASTY],
  );
  assert.equal(row!.v, NASTY);
  assert.equal(row!.len, NASTY.length);
  // current_query() is the text the server received: placeholders only, no value.
  assert.equal(row!.q, 'select current_query() as q, $1::text as v, length($2) as len');
});

test('JSON, dates, numbers, booleans, null and arrays bind as their types', async () => {
  const at = new Date('2026-03-04T05:06:07.089Z');
  const doc = { note: NASTY, n: [1, 2] };
  const row = await one<{ j: unknown; at: Date; n: string; b: boolean; z: null; hits: string }>(
    orm.em.fork(),
    `select ?::jsonb as j, ?::timestamptz as at, ?::numeric * 2 as n, ?::boolean as b, ?::text as z,
            (select count(*) from unnest(array[1, 2, 3]::bigint[]) x where x = any(?::bigint[])) as hits`,
    [JSON.stringify(doc), at, 1.25, true, undefined, [1, 3]],
  );
  assert.deepEqual(row!.j, doc);
  assert.equal(new Date(row!.at).toISOString(), at.toISOString());
  assert.deepEqual([Number(row!.n), row!.b, row!.z, Number(row!.hits)], [2.5, true, null, 2]);
  const literal = await one<{ hits: string }>(
    orm.em.fork(),
    'select count(*) as hits from unnest(array[1, 2, 3]::bigint[]) x where x = any(?::bigint[])',
    ['{2,3}'],
  );
  assert.equal(Number(literal!.hits), 2, 'a Postgres array literal string still works');
});

test('question marks in quoted text and comments are not placeholders; a count mismatch is refused', async () => {
  const row = await one<{ a: string; b: string }>(orm.em.fork(), `select 'what?' as a, ? as b -- really?`, ['x']);
  assert.deepEqual([row!.a, row!.b], ['what?', 'x']);
  await assert.rejects(() => many(orm.em.fork(), 'select ? as a, ? as b', ['only one']), /2 placeholders for 1 parameters/);
});

test('inside em.transactional the helpers run on the transaction: its connection, its rollback', async () => {
  await orm.em.fork().transactional(async (tx) => {
    // A temporary table exists only on the connection that made it, and is dropped on commit.
    await exec(tx, 'create temporary table bind_probe (v text) on commit drop');
    assert.equal(await exec(tx, 'insert into bind_probe (v) values (?), (?)', [NASTY, 'b']), 2);
    const ours = await one<{ xid: string }>(tx, 'select txid_current()::text as xid');
    const orms = (await tx.execute('select txid_current()::text as xid')) as Array<{ xid: string }>;
    assert.equal(ours!.xid, orms[0].xid);
    assert.deepEqual(await many(tx, 'select v from bind_probe where v = ?', [NASTY]), [{ v: NASTY }]);
  });
  // DDL is transactional in PostgreSQL: a table made in a rolled-back transaction never existed.
  const table = `bind_rollback_${process.pid}`;
  await assert.rejects(
    () =>
      orm.em.fork().transactional(async (tx) => {
        await exec(tx, `create table ${table} (v text)`);
        await exec(tx, `insert into ${table} (v) values (?)`, [NASTY]);
        throw new Error('roll back');
      }),
    /roll back/,
  );
  assert.deepEqual(await one(orm.em.fork(), 'select to_regclass(?)::text as t', [table]), { t: null });
});

test('a planned statement is named: one connection parses it once, binds values as one() does, and answers the same rows', async () => {
  // One connection, so its session is the one holding the statement.
  const single = await openOrm(process.env.DATABASE_URL!, 1);
  try {
    const query = `select ?::jsonb as j, ?::timestamptz as at, ?::int + 1 as n, ?::text as z, current_query() as q, 'a ? b' as lit`;
    const at = new Date('2026-03-04T05:06:07.089Z');
    const params = [JSON.stringify({ note: NASTY }), at, 41, undefined];
    const first = await onePlanned<Record<string, unknown>>(single.em.fork(), query, params);
    const again = await onePlanned<Record<string, unknown>>(single.em.fork(), query, params);
    const plain = await one<Record<string, unknown>>(single.em.fork(), query, params);
    assert.deepEqual(first, plain);
    assert.deepEqual(again, plain);
    assert.deepEqual(first!.j, { note: NASTY });
    assert.equal(first!.n, 42);
    const prepared = await many<{ name: string; statement: string }>(
      single.em.fork(),
      `select name, statement from pg_prepared_statements where statement like '%current_query() as q, ''a ? b''%' and name like 'svc_%'`,
    );
    assert.equal(prepared.length, 1, 'named once on the connection');
    // Inside a transaction it runs on the transaction's connection, unnamed.
    await single.em.fork().transactional(async (tx) => {
      const inside = await onePlanned<{ n: number }>(tx, 'select ?::int as n', [7]);
      assert.equal(inside!.n, 7);
    });
  } finally {
    await single.close();
  }
});
