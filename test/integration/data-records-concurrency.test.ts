import { test, after } from 'node:test';
// The one-statement create under concurrency: quotas exact, auto numbers contiguous, a unique value
// taken once, and every count (records, bytes, history, guards) agreeing with the rows.
import assert from 'node:assert/strict';
import { openOrm } from '../../entities/orm.js';
import { one, many, exec } from '../../entities/db.js';
import { admin, api, newTenant } from '../support/stack.js';

const orm = await openOrm(process.env.DATABASE_URL!, 4);
after(() => orm.close());
const em = () => orm.em.fork();
const T = (table: string) => `/api/v3/data/tables/${table}/records`;
const t = await newTenant();
// A key per test: each sends dozens of requests at once, and a key may send 120 a minute.
const newKey = async () =>
  (await admin('POST', `/accounts/${t.accountId}/keys`, { name: 'k', user_id: t.userId })).body.data.token as string;
const mk = async (body: any) => {
  const r = await admin('POST', `/accounts/${t.accountUid}/data/tables`, body);
  assert.equal(r.status, 201, r.text);
  return r.body.data ?? r.body;
};
const state = (id: string) =>
  one<any>(
    em(),
    `select records_count, storage_bytes::text as s, auto_number_seq::text as n,
    (select count(*) from data_records where table_id = t.id)::int as recs,
    (select coalesce(sum(size_bytes),0) from data_records where table_id = t.id)::text as bytes,
    (select count(*) from data_record_history where table_id = t.id)::int as hist,
    (select count(*) from data_unique_values where table_id = t.id)::int as guards from data_tables t where id = ?::uuid`,
    [id],
  );

test('records quota exact under concurrency (plain and auto_number tables)', async () => {
  const key = await newKey();
  for (const cols of [
    [{ key: 'v', type: 'text' }],
    [
      { key: 'v', type: 'text' },
      { key: 'no', type: 'auto_number' },
    ],
  ]) {
    const tb = await mk({ name: `Q ${Date.now()} ${cols.length}`, quotas: { records: 10 }, columns: cols });
    const rs = await Promise.all(Array.from({ length: 40 }, (_, i) => api('POST', T(tb.id), key, { data: { v: `x${i}` } })));
    const st = rs.map((r) => r.status).sort();
    assert.equal(st.filter((s) => s === 201).length, 10, JSON.stringify(st));
    assert.equal(st.filter((s) => s === 402).length, 30);
    const s = await state(tb.id);
    assert.equal(s.records_count, 10);
    assert.equal(s.recs, 10);
    assert.equal(s.hist, 10);
    assert.equal(s.s, s.bytes);
    if (cols.length === 2) {
      assert.equal(s.n, '10');
      const nos = (
        await many<any>(em(), `select (data->>'no')::int as no from data_records where table_id = ?::uuid order by 1`, [tb.id])
      ).map((r) => r.no);
      assert.deepEqual(nos, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    }
  }
});

test('auto_number digits counted in size, history lists the number; oversize by digits refused with nothing written', async () => {
  const key = await newKey();
  const tb = await mk({
    name: `A ${Date.now()}`,
    columns: [
      { key: 'note', type: 'long_text' },
      { key: 'no', type: 'auto_number' },
    ],
  });
  await exec(em(), 'update data_tables set auto_number_seq = 8 where id = ?::uuid', [tb.id]);
  const a = await api('POST', T(tb.id), key, { data: { note: 'a' } });
  assert.equal(a.status, 201, a.text);
  assert.deepEqual(a.body.record.data, { note: 'a', no: 9 });
  const b = await api('POST', T(tb.id), key, { data: { note: 'b' } });
  assert.deepEqual(b.body.record.data, { note: 'b', no: 10 });
  const sizes = await many<any>(em(), 'select size_bytes, data::text as d from data_records where table_id = ?::uuid order by seq', [
    tb.id,
  ]);
  assert.deepEqual(
    sizes.map((x) => x.size_bytes),
    [Buffer.byteLength(JSON.stringify({ note: 'a', no: 9 })), Buffer.byteLength(JSON.stringify({ note: 'b', no: 10 }))],
  );
  const s = await state(tb.id);
  assert.equal(s.s, s.bytes);
  const h = await api('GET', `${T(tb.id)}/${b.body.record.id}/history`, key);
  assert.equal(h.status, 200, h.text);
  assert.deepEqual(h.body.entries[0].after, { note: 'b', no: 10 });
  assert.deepEqual(h.body.entries[0].before, { note: null, no: null });
  assert.equal(h.body.entries[0].action, 'create');
  assert.equal(h.body.entries[0].actor.kind, 'api_key');
  // {"note":"…","no":99} : 9 + 8 + 2 digits; at seq 99 → 100 the record grows a byte over the limit.
  await exec(em(), 'update data_tables set auto_number_seq = 99 where id = ?::uuid', [tb.id]);
  const fill = 8192 - Buffer.byteLength(JSON.stringify({ note: '', no: 100 })) + 1;
  const before = await state(tb.id);
  const over = await api('POST', T(tb.id), key, { data: { note: 'x'.repeat(fill) } });
  assert.equal(over.status, 422, over.text);
  assert.equal(over.body.error.field, 'data');
  assert.deepEqual(await state(tb.id), before);
  const fits = await api('POST', T(tb.id), key, { data: { note: 'x'.repeat(fill - 1) } });
  assert.equal(fits.status, 201, fits.text);
  assert.equal((await state(tb.id)).n, '100');
});

test('unique: a burst of creates of one value gives one 201; guards and counts agree', async () => {
  const key = await newKey();
  const tb = await mk({
    name: `U ${Date.now()}`,
    columns: [
      { key: 'code', type: 'text', unique: true },
      { key: 'no', type: 'auto_number' },
    ],
  });
  const tb2 = await mk({ name: `U2 ${Date.now()}`, columns: [{ key: 'code', type: 'text', unique: true }] });
  for (const id of [tb.id, tb2.id]) {
    const rs = await Promise.all(Array.from({ length: 12 }, () => api('POST', T(id), key, { data: { code: 'SAME' } })));
    const st = rs.map((r) => r.status);
    assert.equal(st.filter((s) => s === 201).length, 1, JSON.stringify(st));
    assert.ok(
      st.every((s) => [201, 409, 422].includes(s)),
      JSON.stringify(rs.filter((r) => r.status >= 500).map((r) => r.text)),
    );
    const s = await state(id);
    assert.equal(s.records_count, 1);
    assert.equal(s.recs, 1);
    assert.equal(s.hist, 1);
    assert.equal(s.guards, 1);
  }
});
