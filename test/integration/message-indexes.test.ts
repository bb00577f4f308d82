import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { openOrm } from '../../entities/orm.js';
import { many } from '../../entities/db.js';

// A status move rewrites a message in place (a heap-only update: one WAL record, no index entries)
// only while no index names a column a move changes, in its keys, expressions or predicate
// (docs/decisions.md "No index names a column a status move changes"; docs/benchmarks.md "Cost per
// message"). An index added on one of these would double a campaign's WAL without failing anything else.
const orm = await openOrm(process.env.DATABASE_URL!, 1);
after(() => orm.close());

const MOVING = ['status', 'gateway_message_id', 'error_message', 'sent_at', 'delivered_at', 'read_at', 'updated_at'];

test('no index of messages names a column a status move changes', async () => {
  const rows = await many<{ name: string; columns: string[] }>(
    orm.em.fork(),
    `select i.indexrelid::regclass::text as name,
            array(select a.attname::text from pg_attribute a
                   where a.attrelid = i.indrelid and a.attnum > 0
                     and (a.attnum = any(i.indkey)
                          or pg_get_expr(i.indexprs, i.indrelid) ~ ('\\m' || a.attname || '\\M')
                          or pg_get_expr(i.indpred, i.indrelid) ~ ('\\m' || a.attname || '\\M'))) as columns
       from pg_index i where i.indrelid = 'messages'::regclass`,
  );
  assert.ok(rows.length >= 4, JSON.stringify(rows));
  const offending = rows.filter((r) => r.columns.some((c) => MOVING.includes(c)));
  assert.deepEqual(offending, [], 'each of these turns every move into a new row version with an entry in every index');
  // And the page keeps room for the moves' versions.
  const options = await many<{ reloptions: string[] | null }>(
    orm.em.fork(),
    `select reloptions from pg_class where oid = 'messages'::regclass`,
  );
  assert.ok(options[0].reloptions?.includes('fillfactor=50'), JSON.stringify(options));
});
