import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { admin, api, newTenant, type Tenant } from '../support/stack.js';

// The records list (issue 14 point 3): every operator against the stored values, any/all nesting,
// q, sorts both ways with nulls last, keyset pages (no repeat or skip, also with writes between
// pages), invalid cursors, with_count, limit clamping, 422/501 refusals and other accounts' tables.

let t: Tenant;
let tableId: string;
let people: string[];
/** The records as created, in creation order (so in seq order). */
const recs: { id: string; i: number; data: Record<string, any>; created_at: string; updated_at: string }[] = [];
const N = 30;

const NAMES = ['Alice', 'Bob', 'Carol', 'Dave', 'Eve', 'Frank'];
function dataOf(i: number, owners: string[]): Record<string, unknown> {
  const d: Record<string, unknown> = {};
  if (i % 7 !== 6) d.name = i === 2 ? 'Carol 02 100%' : `${NAMES[i % 6]} ${String(i).padStart(2, '0')}`;
  d.email = `user${i}@example${i % 3}.com`;
  if (i % 5 === 1) d.notes = `a NEEDLE in notes ${i}`;
  d.phone = i % 2 === 0 ? `+25571200${String(i).padStart(4, '0')}` : `+25576500${String(i).padStart(4, '0')}`;
  if (i % 5 !== 0) d.amount = (i * 7) % 23;
  d.price = i * 1.5;
  if (i % 3 !== 2) d.done = i % 3 === 0;
  if (i % 4 !== 3) d.due = `2026-01-${String(1 + i).padStart(2, '0')}`;
  d.at = `2026-02-${String(1 + (i % 28)).padStart(2, '0')}T10:00:00+03:00`;
  if (i % 8 !== 7) d.status = ['open', 'won', 'lost'][i % 3];
  const tags = [[], ['red'], ['red', 'green'], ['blue']][i % 4];
  if (tags.length) d.tags = tags;
  if (i % 3 !== 2) d.owner = owners[i % 3];
  return d;
}

// A key counts 120 requests a minute; this file makes many hundreds, so it spreads them over keys of the same issuer.
let keys: string[] = [];
let turn = 0;
const tok = () => keys[turn++ % keys.length];

const list = (query: Record<string, unknown>, token = tok(), table = tableId) => {
  const qs = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined) qs.set(k, typeof v === 'string' ? v : JSON.stringify(v));
  return api('GET', `/api/v3/data/tables/${table}/records?${qs}`, token);
};

/** Every page of a query, by cursor: the ids in the order served, refusing a repeat. */
async function walk(query: Record<string, unknown>, between?: (page: number) => Promise<void>): Promise<string[]> {
  const seen: string[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < 200; page++) {
    const r = await list({ ...query, cursor });
    assert.equal(r.status, 200, r.text);
    for (const rec of r.body.records) {
      assert.ok(!seen.includes(rec.id), `record ${rec.id} served twice (${JSON.stringify(query)})`);
      seen.push(rec.id);
    }
    assert.equal(r.body.has_more, r.body.next_cursor !== null);
    if (!r.body.has_more) return seen;
    cursor = r.body.next_cursor;
    if (between) await between(page);
  }
  assert.fail('too many pages');
}

const ids = (pred: (d: Record<string, any>, r: (typeof recs)[number]) => boolean) =>
  recs
    .filter((r) => pred(r.data, r))
    .map((r) => r.id)
    .sort();
const filterIds = async (filter: unknown, extra: Record<string, unknown> = {}) => (await walk({ filter, limit: 7, ...extra })).sort();
const empty = (v: unknown) => v === undefined || v === null || v === '' || (Array.isArray(v) && !v.length);

before(async () => {
  t = await newTenant();
  keys = [t.token];
  for (let k = 0; k < 24; k++) {
    const key = await admin('POST', `/accounts/${t.accountId}/keys`, { name: `list ${k}`, user_id: t.userId });
    assert.equal(key.status, 201, key.text);
    keys.push(key.body.data.token);
  }
  const ppl = await admin('POST', `/accounts/${t.accountUid}/data/tables`, { name: 'People', columns: [{ key: 'name', type: 'text' }] });
  assert.equal(ppl.status, 201, ppl.text);
  people = [];
  for (const name of ['Ann', 'Ben', 'Cid']) {
    const r = await api('POST', `/api/v3/data/tables/${ppl.body.data.id}/records`, tok(), { data: { name } });
    assert.equal(r.status, 201, r.text);
    people.push(r.body.record.id);
  }
  const tab = await admin('POST', `/accounts/${t.accountUid}/data/tables`, {
    name: 'Deals',
    columns: [
      { key: 'name', type: 'text' },
      { key: 'email', type: 'email' },
      { key: 'notes', type: 'long_text' },
      { key: 'phone', type: 'phone' },
      { key: 'amount', type: 'number' },
      { key: 'price', type: 'currency', config: { precision: 2 } },
      { key: 'done', type: 'boolean' },
      { key: 'due', type: 'date' },
      { key: 'at', type: 'datetime' },
      {
        key: 'status',
        type: 'select',
        config: { options: ['open', 'won', 'lost'].map((key) => ({ key, label: key })) },
      },
      {
        key: 'tags',
        type: 'multi_select',
        config: { options: ['red', 'green', 'blue'].map((key) => ({ key, label: key })) },
      },
      { key: 'owner', type: 'relation', config: { table_id: ppl.body.data.id } },
      { key: 'no', type: 'auto_number' },
    ],
  });
  assert.equal(tab.status, 201, tab.text);
  tableId = tab.body.data.id;
  for (let i = 0; i < N; i++) {
    const r = await api('POST', `/api/v3/data/tables/${tableId}/records`, tok(), { data: dataOf(i, people) });
    assert.equal(r.status, 201, r.text);
    recs.push({
      id: r.body.record.id,
      i,
      data: r.body.record.data,
      created_at: r.body.record.created_at,
      updated_at: r.body.record.updated_at,
    });
  }
});

test('default page: newest created first, 50 a page, count null, served_at', async () => {
  const r = await list({});
  assert.equal(r.status, 200, r.text);
  assert.deepEqual(
    r.body.records.map((x: any) => x.id),
    [...recs].reverse().map((x) => x.id),
  );
  assert.equal(r.body.has_more, false);
  assert.equal(r.body.next_cursor, null);
  assert.equal(r.body.count, null);
  assert.ok(!('count_is_exact' in r.body));
  assert.ok(Math.abs(Date.parse(r.body.served_at) - Date.now()) < 60_000);
  const first = r.body.records.at(-1);
  assert.deepEqual(Object.keys(first.data), Object.keys(recs[0].data));
  assert.equal(first.source, 'api');
  // An empty tree selects everything too.
  assert.equal((await list({ filter: '{}' })).body.records.length, N);
});

test('text-like operators: equals, not_equals (also empty), contains and starts_with case-insensitive, in, empty checks', async () => {
  assert.deepEqual(
    await filterIds({ column: 'name', op: 'equals', value: 'Bob 01' }),
    ids((d) => d.name === 'Bob 01'),
  );
  assert.equal((await filterIds({ column: 'name', op: 'equals', value: 'bob 01' })).length, 0, 'equals is exact');
  assert.deepEqual(
    await filterIds({ column: 'name', op: 'not_equals', value: 'Bob 01' }),
    ids((d) => d.name !== 'Bob 01'),
  );
  assert.deepEqual(
    await filterIds({ column: 'name', op: 'contains', value: 'ALICE' }),
    ids((d) => /alice/i.test(d.name ?? '')),
  );
  // LIKE metacharacters are literal.
  assert.deepEqual(
    await filterIds({ column: 'name', op: 'contains', value: '0%' }),
    ids((d) => (d.name ?? '').includes('0%')),
  );
  assert.equal((await filterIds({ column: 'name', op: 'contains', value: '_' })).length, 0);
  assert.deepEqual(
    await filterIds({ column: 'name', op: 'starts_with', value: 'car' }),
    ids((d) => /^car/i.test(d.name ?? '')),
  );
  assert.deepEqual(
    await filterIds({ column: 'name', op: 'in', value: ['Eve 04', 'Frank 05', 'nobody'] }),
    ids((d) => ['Eve 04', 'Frank 05'].includes(d.name)),
  );
  assert.deepEqual(
    await filterIds({ column: 'name', op: 'is_empty' }),
    ids((d) => empty(d.name)),
  );
  assert.deepEqual(
    await filterIds({ column: 'notes', op: 'is_not_empty' }),
    ids((d) => !empty(d.notes)),
  );
  assert.deepEqual(
    await filterIds({ column: 'email', op: 'contains', value: '@EXAMPLE1.' }),
    ids((d) => d.email.includes('@example1.')),
  );
  assert.deepEqual(
    await filterIds({ column: 'phone', op: 'starts_with', value: '+2557120' }),
    ids((d) => d.phone.startsWith('+2557120')),
  );
  // A SQL-looking value is only a value.
  assert.deepEqual(await filterIds({ column: 'name', op: 'equals', value: "x' or '1'='1" }), []);
});

test('numbers: equals, not_equals with empties, ranges inclusive, in, empty checks; currency and auto_number', async () => {
  assert.deepEqual(
    await filterIds({ column: 'amount', op: 'equals', value: 7 }),
    ids((d) => d.amount === 7),
  );
  assert.deepEqual(
    await filterIds({ column: 'amount', op: 'not_equals', value: 7 }),
    ids((d) => d.amount !== 7),
  );
  assert.deepEqual(
    await filterIds({ column: 'amount', op: 'greater_than', value: 10 }),
    ids((d) => typeof d.amount === 'number' && d.amount > 10),
  );
  assert.deepEqual(
    await filterIds({ column: 'amount', op: 'less_than', value: 10 }),
    ids((d) => typeof d.amount === 'number' && d.amount < 10),
  );
  assert.deepEqual(
    await filterIds({ column: 'amount', op: 'between', value: [5, 14] }),
    ids((d) => typeof d.amount === 'number' && d.amount >= 5 && d.amount <= 14),
  );
  assert.deepEqual(
    await filterIds({ column: 'amount', op: 'in', value: [1, 2, 3, 99] }),
    ids((d) => [1, 2, 3].includes(d.amount)),
  );
  assert.deepEqual(
    await filterIds({ column: 'amount', op: 'is_empty' }),
    ids((d) => empty(d.amount)),
  );
  assert.deepEqual(
    await filterIds({ column: 'amount', op: 'is_not_empty' }),
    ids((d) => !empty(d.amount)),
  );
  assert.deepEqual(
    await filterIds({ column: 'price', op: 'greater_than', value: 30.5 }),
    ids((d) => d.price > 30.5),
  );
  assert.deepEqual(
    await filterIds({ column: 'no', op: 'between', value: [3, 5] }),
    ids((d) => d.no >= 3 && d.no <= 5),
  );
  assert.ok((await filterIds({ column: 'no', op: 'between', value: [3, 5] })).length === 3, 'auto numbers are issued 1, 2, 3…');
});

test('booleans, dates, datetimes with a timezone, selects, multi-selects and relations', async () => {
  assert.deepEqual(
    await filterIds({ column: 'done', op: 'equals', value: true }),
    ids((d) => d.done === true),
  );
  assert.deepEqual(
    await filterIds({ column: 'done', op: 'equals', value: false }),
    ids((d) => d.done === false),
  );
  assert.deepEqual(
    await filterIds({ column: 'done', op: 'is_empty' }),
    ids((d) => empty(d.done)),
  );
  assert.deepEqual(
    await filterIds({ column: 'due', op: 'between', value: ['2026-01-05', '2026-01-10'] }),
    ids((d) => !!d.due && d.due >= '2026-01-05' && d.due <= '2026-01-10'),
  );
  assert.deepEqual(
    await filterIds({ column: 'due', op: 'greater_than', value: '2026-01-20' }),
    ids((d) => !!d.due && d.due > '2026-01-20'),
  );
  // 2026-02-10T10:00+03:00 is 07:00Z: the value is compared in UTC, as stored.
  assert.deepEqual(
    await filterIds({ column: 'at', op: 'less_than', value: '2026-02-10T09:00:00+02:00' }),
    ids((d) => d.at < '2026-02-10T07:00:00.000Z'),
  );
  assert.deepEqual(
    await filterIds({ column: 'at', op: 'equals', value: '2026-02-03T07:00:00Z' }),
    ids((d) => d.at === '2026-02-03T07:00:00.000Z'),
  );
  assert.ok((await filterIds({ column: 'at', op: 'equals', value: '2026-02-03T07:00:00Z' })).length >= 1);
  assert.deepEqual(
    await filterIds({ column: 'status', op: 'equals', value: 'won' }),
    ids((d) => d.status === 'won'),
  );
  assert.deepEqual(
    await filterIds({ column: 'status', op: 'not_equals', value: 'won' }),
    ids((d) => d.status !== 'won'),
  );
  assert.deepEqual(
    await filterIds({ column: 'status', op: 'in', value: ['open', 'lost'] }),
    ids((d) => ['open', 'lost'].includes(d.status)),
  );
  assert.deepEqual(
    await filterIds({ column: 'status', op: 'is_empty' }),
    ids((d) => empty(d.status)),
  );
  assert.deepEqual(
    await filterIds({ column: 'tags', op: 'contains', value: 'green' }),
    ids((d) => (d.tags ?? []).includes('green')),
  );
  assert.deepEqual(
    await filterIds({ column: 'tags', op: 'in', value: ['green', 'blue'] }),
    ids((d) => (d.tags ?? []).some((x: string) => x === 'green' || x === 'blue')),
  );
  assert.deepEqual(
    await filterIds({ column: 'tags', op: 'is_empty' }),
    ids((d) => empty(d.tags)),
  );
  assert.deepEqual(
    await filterIds({ column: 'tags', op: 'is_not_empty' }),
    ids((d) => !empty(d.tags)),
  );
  assert.deepEqual(
    await filterIds({ column: 'owner', op: 'equals', value: people[1].toUpperCase() }),
    ids((d) => d.owner === people[1]),
  );
  assert.deepEqual(
    await filterIds({ column: 'owner', op: 'in', value: [people[0], people[2]] }),
    ids((d) => d.owner === people[0]),
  );
  assert.deepEqual(
    await filterIds({ column: 'owner', op: 'is_empty' }),
    ids((d) => empty(d.owner)),
  );
});

test('system columns: $id, $created_at ranges at millisecond precision, $source', async () => {
  const pick = [recs[3].id, recs[17].id];
  assert.deepEqual(await filterIds({ column: '$id', op: 'in', value: pick }), [...pick].sort());
  assert.deepEqual(await filterIds({ column: '$id', op: 'equals', value: recs[5].id }), [recs[5].id]);
  const from = recs[10].created_at;
  const to = recs[20].created_at;
  assert.deepEqual(
    await filterIds({ column: '$created_at', op: 'between', value: [from, to] }),
    ids((_, r) => r.created_at >= from && r.created_at <= to),
  );
  assert.deepEqual(
    await filterIds({ column: '$created_at', op: 'greater_than', value: to }),
    ids((_, r) => r.created_at > to),
  );
  assert.deepEqual(
    await filterIds({ column: '$created_at', op: 'equals', value: from }),
    ids((_, r) => r.created_at === from),
  );
  assert.deepEqual(
    await filterIds({ column: '$source', op: 'equals', value: 'api' }),
    ids(() => true),
  );
  assert.deepEqual(
    await filterIds({ column: '$source', op: 'starts_with', value: 'AP' }),
    ids(() => true),
  );
  assert.deepEqual(await filterIds({ column: '$source', op: 'in', value: ['import'] }), []);
});

test('any/all nest; q searches the first text-like columns case-insensitively and combines with filter', async () => {
  const tree = {
    any: [
      {
        all: [
          { column: 'status', op: 'equals', value: 'open' },
          { column: 'amount', op: 'greater_than', value: 5 },
        ],
      },
      {
        all: [
          { column: 'tags', op: 'contains', value: 'blue' },
          {
            any: [
              { column: 'done', op: 'equals', value: true },
              { column: 'name', op: 'is_empty' },
            ],
          },
        ],
      },
    ],
  };
  assert.deepEqual(
    await filterIds(tree),
    ids(
      (d) =>
        (d.status === 'open' && typeof d.amount === 'number' && d.amount > 5) ||
        ((d.tags ?? []).includes('blue') && (d.done === true || empty(d.name))),
    ),
  );
  assert.deepEqual(
    await filterIds(undefined, { q: 'needle' }),
    ids((d) => !empty(d.notes)),
  );
  assert.deepEqual(
    await filterIds(undefined, { q: 'EXAMPLE2' }),
    ids((d) => d.email.includes('example2')),
  );
  assert.deepEqual(
    await filterIds(undefined, { q: '100%' }),
    ids((d) => (d.name ?? '').includes('100%')),
  );
  assert.deepEqual(
    await filterIds(undefined, { q: '+2557650001' }),
    ids((d) => d.phone.includes('+2557650001')),
  );
  assert.deepEqual(
    await filterIds({ column: 'status', op: 'equals', value: 'won' }, { q: 'needle' }),
    ids((d) => !empty(d.notes) && d.status === 'won'),
  );
  assert.deepEqual(await filterIds(undefined, { q: 'nothing like this' }), []);
});

/** The order the contract asks for: by value (ties by creation), records without a value last either way. */
function expectedOrder(key: string, dir: 'asc' | 'desc', value: (r: (typeof recs)[number]) => unknown): string[] {
  const withValue = recs.filter((r) => !empty(value(r)));
  const without = recs.filter((r) => empty(value(r)));
  const cmp = (a: (typeof recs)[number], b: (typeof recs)[number]) => {
    const va = value(a) as any;
    const vb = value(b) as any;
    const c = va < vb ? -1 : va > vb ? 1 : a.i - b.i;
    return dir === 'asc' ? c : -c;
  };
  void key;
  return [...withValue.sort(cmp), ...without.sort((a, b) => (dir === 'asc' ? a.i - b.i : b.i - a.i))].map((r) => r.id);
}

test('sorts both ways with nulls last, paged by cursor without repeats or skips', async () => {
  const cases: [string, (r: (typeof recs)[number]) => unknown][] = [
    ['amount', (r) => r.data.amount],
    ['name', (r) => r.data.name],
    ['due', (r) => r.data.due],
    ['done', (r) => r.data.done],
    ['at', (r) => r.data.at],
    ['price', (r) => r.data.price],
    ['$created_at', (r) => r.created_at],
  ];
  for (const [key, value] of cases) {
    for (const dir of ['asc', 'desc'] as const) {
      for (const limit of [1, 4, 7]) {
        if (limit === 1 && key !== 'amount') continue;
        const got = await walk({ sort: key, dir, limit });
        assert.deepEqual(got, expectedOrder(key, dir, value), `${key} ${dir} limit ${limit}`);
      }
    }
  }
  // The empty part of a sort is walked by cursor too (amount has 6 empty records; pages of 4 cross into and through it).
  const desc = await walk({ sort: 'amount', dir: 'desc', limit: 4, filter: { column: 'amount', op: 'is_empty' } });
  assert.deepEqual(
    desc,
    [...recs]
      .filter((r) => empty(r.data.amount))
      .reverse()
      .map((r) => r.id),
  );
});

test('pages stay stable under inserts between pages (keyset)', async () => {
  const existing = recs.map((r) => r.id);
  const made: string[] = [];
  const insert = async () => {
    const r = await api('POST', `/api/v3/data/tables/${tableId}/records`, tok(), { data: { name: 'Zed late', amount: 3 } });
    assert.equal(r.status, 201, r.text);
    made.push(r.body.record.id);
  };
  // Newest first: rows created after the walk started sort before the cursor and are never served; every old one once.
  const desc = await walk({ limit: 5 }, insert);
  assert.deepEqual(desc, [...existing].reverse());
  // Sorted by amount ascending: new rows with amount 3 land behind and ahead of the cursor; none repeats, none old is skipped.
  const before = made.length;
  const asc = await walk({ sort: 'amount', dir: 'asc', limit: 4 }, insert);
  for (const id of existing) assert.equal(asc.filter((x) => x === id).length, 1, `old record ${id} served once`);
  assert.ok(made.length > before);
  // Clean up so other tests see the original set.
  for (const id of made) assert.equal((await api('DELETE', `/api/v3/data/tables/${tableId}/records/${id}`, tok())).status, 200);
});

test('an invalid or foreign cursor restarts at the first page', async () => {
  const first = await list({ sort: 'amount', dir: 'asc', limit: 3 });
  assert.equal(first.status, 200);
  const firstIds = first.body.records.map((r: any) => r.id);
  for (const cursor of ['garbage', 'eyJ2IjoxfQ', first.body.next_cursor.slice(0, -4), '!!!', 'x'.repeat(5000)]) {
    const r = await list({ sort: 'amount', dir: 'asc', limit: 3, cursor });
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(
      r.body.records.map((x: any) => x.id),
      firstIds,
      cursor.slice(0, 20),
    );
  }
  // The cursor of one query is not the cursor of another (other filter, q, sort or dir).
  const next = first.body.next_cursor;
  const other = await list({ sort: 'amount', dir: 'desc', limit: 3, cursor: next });
  assert.deepEqual(
    other.body.records.map((x: any) => x.id),
    (await list({ sort: 'amount', dir: 'desc', limit: 3 })).body.records.map((x: any) => x.id),
  );
  const filtered = await list({ sort: 'amount', dir: 'asc', limit: 3, cursor: next, q: 'a' });
  assert.deepEqual(
    filtered.body.records.map((x: any) => x.id),
    (await list({ sort: 'amount', dir: 'asc', limit: 3, q: 'a' })).body.records.map((x: any) => x.id),
  );
  // And the right cursor continues.
  const second = await list({ sort: 'amount', dir: 'asc', limit: 3, cursor: next });
  assert.equal(second.body.records.filter((x: any) => firstIds.includes(x.id)).length, 0);
});

test('with_count counts exactly (flagged), whatever the page', async () => {
  const filter = { column: 'status', op: 'equals', value: 'won' };
  const r = await list({ filter, limit: 2, with_count: true });
  assert.equal(r.status, 200, r.text);
  assert.equal(r.body.count, ids((d) => d.status === 'won').length);
  assert.equal(r.body.count_is_exact, true);
  assert.equal(r.body.records.length, 2);
  const page2 = await list({ filter, limit: 2, with_count: 'true', cursor: r.body.next_cursor });
  assert.equal(page2.body.count, r.body.count);
  assert.equal((await list({ filter, with_count: false })).body.count, null);
  assert.equal((await list({ with_count: true })).body.count, N);
});

test('limit is clamped into 1..200; a non-integer is 422', async () => {
  for (const [limit, size] of [
    ['0', 1],
    ['-5', 1],
    ['1', 1],
    ['500', N],
    ['99999999999', N],
  ] as const) {
    const r = await list({ limit });
    assert.equal(r.status, 200, `${limit}: ${r.text}`);
    assert.equal(r.body.records.length, size, `limit ${limit}`);
  }
  for (const limit of ['1.5', 'ten', '']) {
    const r = await list({ limit });
    assert.equal(r.status, 422, `limit ${JSON.stringify(limit)}: ${r.text}`);
    assert.equal(r.body.error.code, 'validation_error');
  }
});

test('refusals: malformed filters 422, unadvertised operators 501, sorts 422/501, in the data envelope', async () => {
  const bad = async (query: Record<string, unknown>, status: number, code: string) => {
    const r = await list(query);
    assert.equal(r.status, status, `${JSON.stringify(query)}: ${r.text}`);
    assert.equal(r.body.error.code, code);
    assert.equal(r.body.code, code);
    assert.equal(typeof r.body.error.message, 'string');
    assert.equal(r.body.error.retryable, false);
    return r.body;
  };
  let b = await bad({ filter: '{"column":' }, 422, 'validation_error');
  assert.equal(b.error.field, 'filter');
  assert.ok(Array.isArray(b.errors.filter));
  b = await bad({ filter: { column: "name' or 1=1 --", op: 'equals', value: 'x' } }, 422, 'validation_error');
  assert.equal(b.error.field, 'filter');
  await bad({ filter: { column: 'name', op: 'regex', value: '.*' } }, 422, 'validation_error');
  await bad({ filter: { column: 'amount', op: 'equals', value: 'five' } }, 422, 'validation_error');
  await bad({ filter: { column: 'amount', op: 'between', value: [1] } }, 422, 'validation_error');
  await bad({ filter: { column: 'at', op: 'equals', value: '2026-02-03T07:00:00' } }, 422, 'validation_error');
  await bad({ filter: { column: 'owner', op: 'equals', value: 'not-a-uuid' } }, 422, 'validation_error');
  await bad({ filter: { all: Array.from({ length: 41 }, () => ({ column: 'amount', op: 'equals', value: 1 })) } }, 422, 'validation_error');
  let deep: unknown = { column: 'amount', op: 'equals', value: 1 };
  for (let i = 0; i < 7; i++) deep = { any: [deep] };
  await bad({ filter: deep }, 422, 'validation_error');
  b = await bad({ filter: { column: 'amount', op: 'contains', value: 'x' } }, 501, 'not_supported');
  assert.equal(b.error.details.reason, 'operator_not_supported');
  b = await bad({ filter: { column: 'tags', op: 'equals', value: 'red' } }, 501, 'not_supported');
  assert.equal(b.error.details.reason, 'operator_not_supported');
  b = await bad({ sort: 'nope' }, 422, 'validation_error');
  assert.equal(b.error.field, 'sort');
  b = await bad({ sort: 'tags' }, 422, 'validation_error');
  assert.equal(b.error.field, 'sort');
  await bad({ sort: '$id' }, 422, 'validation_error');
  await bad({ dir: 'sideways' }, 422, 'validation_error');
  await bad({ q: 'x'.repeat(201) }, 422, 'validation_error');
  await bad({ with_count: 'perhaps' }, 422, 'validation_error');

  // A table holding sort_index_threshold records or more sorts by a user column only once its index is ready.
  const big = await admin('POST', `/accounts/${t.accountUid}/data/tables`, {
    name: 'Big',
    columns: [
      { key: 'name', type: 'text' },
      { key: 'rank', type: 'number' },
    ],
  });
  assert.equal(big.status, 201, big.text);
  const db = new pg.Client({ connectionString: process.env.DATABASE_URL });
  await db.connect();
  try {
    // The counter is what the rule reads (kept by every create and delete); 10,000 real records would only slow the test.
    await db.query('update data_tables set records_count = 10000 where id = $1', [big.body.data.id]);
  } finally {
    await db.end();
  }
  const r = await list({ sort: 'rank' }, tok(), big.body.data.id);
  assert.equal(r.status, 501, r.text);
  assert.equal(r.body.error.code, 'not_supported');
  assert.equal(r.body.error.details.reason, 'sort_needs_index');
  assert.equal((await list({ sort: '$updated_at' }, tok(), big.body.data.id)).status, 200);
  // Nothing was written by any refusal.
  assert.equal((await list({ with_count: true })).body.count, N);
});

test("another account's table, a hidden table and a made-up id are 404", async () => {
  const other = await newTenant();
  const r = await list({}, other.token);
  assert.equal(r.status, 404, r.text);
  assert.equal(r.body.error.code, 'not_found');
  assert.equal((await list({}, tok(), '00000000-0000-4000-8000-000000000000')).status, 404);
  assert.equal((await list({}, tok(), 'not-a-table')).status, 404);
  // A table whose view grant the caller lacks is not found either.
  const hidden = await admin('POST', `/accounts/${t.accountUid}/data/tables`, {
    name: 'Hidden',
    access: { view: { permissions: ['data.grants.secret'], users: [] }, write: { permissions: [], users: [] } },
    columns: [{ key: 'name', type: 'text' }],
  });
  assert.equal(hidden.status, 201, hidden.text);
  const viewer = await admin('POST', `/accounts/${t.accountId}/users`, {
    email: `viewer-${Date.now()}@example.com`,
    name: 'Viewer',
    permissions: ['data.view'],
  });
  const key = await admin('POST', `/accounts/${t.accountId}/keys`, { name: 'viewer', user_id: viewer.body.data.id });
  const token = key.body.data.token;
  assert.equal((await list({}, token, hidden.body.data.id)).status, 404);
  assert.equal((await list({ limit: 1 }, token)).status, 200);
  // Without data.view at all: 403 (the issuer's permission is checked before the table).
  const outsider = await admin('POST', `/accounts/${t.accountId}/users`, {
    email: `outsider-${Date.now()}@example.com`,
    name: 'Outsider',
    permissions: ['contacts.view'],
  });
  const outsiderKey = await admin('POST', `/accounts/${t.accountId}/keys`, { name: 'outsider', user_id: outsider.body.data.id });
  const refused = await list({}, outsiderKey.body.data.token);
  assert.equal(refused.status, 403, refused.text);
  assert.equal(refused.body.error.code, 'permission_denied');
});
