import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DummyDriver, Kysely, PostgresAdapter, PostgresIntrospector, PostgresQueryCompiler, sql } from 'kysely';
import { FilterError, countLeaves, normalizeDatetime, parseFilter, type FilterLeaf } from '../../domain/data/filter.js';
import { canonical, decodeCursor, encodeCursor, queryHash, validSortValue, type CursorKey } from '../../domain/data/cursor.js';
import { DATA_LIMITS, OPERATORS, TYPE_INFO, type FieldType } from '../../domain/data/vocabulary.js';
import { DomainError } from '../../services/platform/errors.js';
import { clampLimit, planQuery } from '../../services/data/records-query.js';
import { openCursor, sealCursor } from '../../services/data/cursor-seal.js';
import type { LoadedTable } from '../../services/data/tables.js';
import type { ColumnDef } from '../../domain/data/definitions.js';

const COLUMNS: { key: string; type: FieldType }[] = [
  { key: 'name', type: 'text' },
  { key: 'notes', type: 'long_text' },
  { key: 'amount', type: 'number' },
  { key: 'price', type: 'currency' },
  { key: 'done', type: 'boolean' },
  { key: 'due', type: 'date' },
  { key: 'at', type: 'datetime' },
  { key: 'phone', type: 'phone' },
  { key: 'email', type: 'email' },
  { key: 'status', type: 'select' },
  { key: 'tags', type: 'multi_select' },
  { key: 'owner', type: 'relation' },
  { key: 'doc', type: 'file' },
  { key: 'no', type: 'auto_number' },
  { key: 'legacy', type: 'unknown' },
];

const parse = (tree: unknown) => parseFilter(typeof tree === 'string' ? tree : JSON.stringify(tree), COLUMNS);
function refused(tree: unknown, kind: 'invalid' | 'not_supported' = 'invalid', pattern?: RegExp): FilterError {
  try {
    parse(tree);
  } catch (e) {
    assert.ok(e instanceof FilterError, `expected a FilterError, got ${String(e)}`);
    assert.equal(e.kind, kind, `${JSON.stringify(tree)}: ${e.message}`);
    if (pattern) assert.match(e.problems.map((p) => p.message).join(' | '), pattern);
    return e;
  }
  assert.fail(`accepted ${JSON.stringify(tree)}`);
}
const leaf = (column: string, op: string, value?: unknown) => (value === undefined ? { column, op } : { column, op, value });
const nest = (depth: number, inner: unknown): unknown => (depth === 0 ? inner : { all: [nest(depth - 1, inner)] });

test('absent, empty and {} filters select everything', () => {
  assert.equal(parseFilter(undefined, COLUMNS), null);
  assert.equal(parseFilter('', COLUMNS), null);
  assert.equal(parseFilter('  ', COLUMNS), null);
  assert.equal(parseFilter('{}', COLUMNS), null);
});

test('a leaf, all and any parse into a typed tree with stored-form values', () => {
  const tree = parse({
    all: [
      leaf('name', 'contains', 'ann'),
      {
        any: [
          leaf('amount', 'between', [1, 5]),
          leaf('at', 'greater_than', '2026-01-31T13:00:00+03:00'),
          leaf('$id', 'in', ['A0B1C2D3-0000-4000-8000-000000000001']),
        ],
      },
    ],
  });
  assert.ok(tree && tree.kind === 'all');
  assert.equal(countLeaves(tree), 4);
  const any = tree.nodes[1];
  assert.ok(any.kind === 'any');
  assert.deepEqual((any.nodes[0] as FilterLeaf).value, [1, 5]);
  // Normalized to the fixed-width UTC form the column stores.
  assert.equal((any.nodes[1] as FilterLeaf).value, '2026-01-31T10:00:00.000Z');
  assert.deepEqual((any.nodes[2] as FilterLeaf).value, ['a0b1c2d3-0000-4000-8000-000000000001']);
  assert.equal((any.nodes[2] as FilterLeaf).column.system, '$id');
});

test('40 leaves pass, 41 are refused', () => {
  const many = (n: number) => ({ any: Array.from({ length: n }, (_, i) => leaf('amount', 'equals', i)) });
  assert.equal(countLeaves(parse(many(DATA_LIMITS.filterLeaves))), 40);
  refused(many(DATA_LIMITS.filterLeaves + 1), 'invalid', /at most 40 conditions/);
  // Spread over nested groups, the total counts.
  const split = { all: [many(20), { any: [many(20), leaf('name', 'equals', 'x')] }] };
  refused(split, 'invalid', /at most 40/);
  // Empty groups are no way around it either.
  refused({ all: Array.from({ length: 500 }, () => ({ all: [] })) }, 'invalid', /at most 160 nodes/);
});

test('6 nested groups pass, 7 are refused', () => {
  const ok = parse(nest(DATA_LIMITS.filterDepth, leaf('name', 'equals', 'x')));
  assert.equal(countLeaves(ok), 1);
  refused(nest(DATA_LIMITS.filterDepth + 1, leaf('name', 'equals', 'x')), 'invalid', /6 groups deep/);
});

test('malformed trees are 422', () => {
  refused('{not json', 'invalid', /JSON condition tree/);
  refused('[]', 'invalid', /condition object/);
  refused('"text"', 'invalid');
  refused('42', 'invalid');
  refused({ all: leaf('name', 'equals', 'x') }, 'invalid', /array/);
  refused({ all: [], any: [] }, 'invalid', /only "all"/);
  refused({ all: [], extra: 1 }, 'invalid', /only "all"/);
  refused({ all: ['x'] }, 'invalid');
  refused({ column: 'name', op: 'equals', value: 'x', negate: true }, 'invalid', /unknown keys/);
  refused({ op: 'equals', value: 'x' }, 'invalid', /column/);
  refused({ column: 'name', value: 'x' }, 'invalid', /op/);
  refused({ column: 7, op: 'equals', value: 'x' }, 'invalid');
});

test('unknown columns and operators are 422, however they are spelled', () => {
  refused(leaf('nope', 'equals', 'x'), 'invalid', /no column "nope"/);
  refused(leaf("name'; drop table data_records; --", 'equals', 'x'), 'invalid', /no column/);
  refused(leaf('data->>name', 'equals', 'x'), 'invalid');
  refused(leaf('__proto__', 'equals', 'x'), 'invalid');
  refused('{"column":"__proto__","op":"equals","value":"x"}', 'invalid');
  refused(leaf('$seq', 'equals', 1), 'invalid');
  refused(leaf('$deleted_at', 'is_empty'), 'invalid');
  refused(leaf('name', 'like', 'x'), 'invalid', /not an operator/);
  refused(leaf('name', 'EQUALS', 'x'), 'invalid');
  refused(leaf('amount', '>=', 1), 'invalid');
});

test('every operator a type does not advertise is 501, every advertised one parses', () => {
  const sample: Record<FieldType, unknown> = {
    text: 'x',
    long_text: 'x',
    number: 1,
    currency: 2.5,
    boolean: true,
    date: '2026-01-31',
    datetime: '2026-01-31T10:00:00Z',
    phone: '+255700000001',
    email: 'a@example.com',
    select: 'open',
    multi_select: 'red',
    relation: '00000000-0000-4000-8000-000000000001',
    file: null,
    auto_number: 3,
    unknown: null,
  };
  for (const c of COLUMNS) {
    const advertised = TYPE_INFO[c.type].operators;
    for (const op of OPERATORS) {
      const v = sample[c.type];
      const value = op === 'between' ? [v, v] : op === 'in' ? [v] : op === 'is_empty' || op === 'is_not_empty' ? undefined : v;
      if (advertised.includes(op)) {
        const tree = parse(leaf(c.key, op, value)) as FilterLeaf;
        assert.equal(tree.op, op, `${c.type} ${op}`);
      } else {
        const e = refused(leaf(c.key, op, value ?? v), 'not_supported');
        assert.equal(e.problems[0].column, c.key);
        assert.equal(e.problems[0].op, op);
      }
    }
  }
  // System columns advertise their own lists.
  refused(leaf('$id', 'contains', 'x'), 'not_supported');
  refused(leaf('$created_at', 'is_empty'), 'not_supported');
  refused(leaf('$source', 'contains', 'a'), 'not_supported');
  parse(leaf('$source', 'starts_with', 'ap'));
  parse(leaf('$updated_at', 'between', ['2026-01-01T00:00:00Z', '2026-02-01T00:00:00Z']));
});

test('a malformed tree wins over an unsupported operator', () => {
  const e = refused({ all: [leaf('amount', 'contains', 'x'), leaf('nope', 'equals', 1)] }, 'invalid');
  assert.ok(e.problems.some((p) => p.kind === 'not_supported'));
});

test('values of the wrong type are 422', () => {
  refused(leaf('amount', 'equals', '5'), 'invalid', /numbers/);
  refused(leaf('amount', 'greater_than', null), 'invalid');
  refused(leaf('price', 'less_than', true), 'invalid');
  refused(leaf('no', 'equals', '1'), 'invalid');
  refused(leaf('name', 'equals', 5), 'invalid', /text/);
  refused(leaf('name', 'equals', ['x']), 'invalid');
  refused(leaf('name', 'equals', { $ne: 1 }), 'invalid');
  refused(leaf('name', 'equals', 'x'.repeat(DATA_LIMITS.textMax + 1)), 'invalid', /longer/);
  refused(leaf('name', 'contains', 'a\u0000b'), 'invalid', /NUL/);
  refused(leaf('done', 'equals', 'true'), 'invalid', /true or false/);
  refused(leaf('due', 'equals', '2026-02-30'), 'invalid', /YYYY-MM-DD/);
  refused(leaf('due', 'greater_than', '31/01/2026'), 'invalid');
  refused(leaf('at', 'equals', '2026-01-31T10:00:00'), 'invalid', /timezone/);
  refused(leaf('at', 'equals', '2026-13-01T10:00:00Z'), 'invalid');
  refused(leaf('$created_at', 'greater_than', 1767225600000), 'invalid');
  refused(leaf('owner', 'equals', 'not-a-uuid'), 'invalid', /UUID/);
  refused(leaf('$id', 'equals', "1' or '1'='1"), 'invalid', /UUID/);
  refused(leaf('$id', 'in', ['00000000-0000-4000-8000-000000000001', 'x']), 'invalid', /UUID/);
  refused(leaf('status', 'equals', 1), 'invalid');
  refused(leaf('tags', 'contains', ['a']), 'invalid');
});

test('between needs exactly two endpoints, in a list of 1 to 100', () => {
  refused(leaf('amount', 'between', [1]), 'invalid', /two endpoints/);
  refused(leaf('amount', 'between', [1, 2, 3]), 'invalid', /two endpoints/);
  refused(leaf('amount', 'between', 1), 'invalid', /two endpoints/);
  refused(leaf('amount', 'between', [1, 'x']), 'invalid', /numbers/);
  refused(leaf('status', 'in', []), 'invalid', /1 to 100/);
  refused(leaf('status', 'in', 'open'), 'invalid', /1 to 100/);
  refused(
    leaf(
      'status',
      'in',
      Array.from({ length: 101 }, (_, i) => `s${i}`),
    ),
    'invalid',
    /1 to 100/,
  );
  assert.equal(
    (
      (
        parse(
          leaf(
            'status',
            'in',
            Array.from({ length: 100 }, (_, i) => `s${i}`),
          ),
        ) as FilterLeaf
      ).value as string[]
    ).length,
    100,
  );
});

test('is_empty and is_not_empty take no value; the others need one', () => {
  parse(leaf('name', 'is_empty'));
  parse({ column: 'name', op: 'is_not_empty', value: null });
  refused(leaf('name', 'is_empty', 'x'), 'invalid', /takes no value/);
  refused(leaf('name', 'equals'), 'invalid', /needs a value/);
});

test('date-times are normalized to fixed-width UTC', () => {
  assert.equal(normalizeDatetime('2026-01-31T10:00:00Z'), '2026-01-31T10:00:00.000Z');
  assert.equal(normalizeDatetime('2026-01-31 10:00+0300'), '2026-01-31T07:00:00.000Z');
  assert.equal(normalizeDatetime('2026-01-01T01:00:00.123456-02:30'), '2026-01-01T03:30:00.123Z');
  assert.equal(normalizeDatetime('0050-06-01T00:00:00Z'), '0050-06-01T00:00:00.000Z');
  assert.equal(normalizeDatetime('2024-02-29T00:00:00Z'), '2024-02-29T00:00:00.000Z');
  assert.equal(normalizeDatetime('2025-02-29T00:00:00Z'), null);
  assert.equal(normalizeDatetime('2026-01-31T24:00:00Z'), null);
  assert.equal(normalizeDatetime('0001-01-01T00:00:00+01:00'), null);
  assert.equal(normalizeDatetime('2026-01-31'), null);
});

test('SQL-looking values are values: bound, never written into the statement', () => {
  const evil = "x'; drop table data_records; --";
  const t = table([
    { key: 'name', type: 'text' },
    { key: 'amount', type: 'number' },
    { key: 'tags', type: 'multi_select' },
  ]);
  const plan = planQuery(t, {
    filter: JSON.stringify({
      any: [leaf('name', 'equals', evil), leaf('name', 'contains', '100%_\\'), leaf('tags', 'in', [evil]), leaf('amount', 'in', [1, 2])],
    }),
    q: evil,
  });
  const compiled = sql`select 1 from data_records where ${plan.where}`.compile(compiler);
  assert.doesNotMatch(compiled.sql, /drop table/);
  assert.ok(compiled.parameters.includes(evil));
  assert.ok(compiled.parameters.includes('%100\\%\\_\\\\%'), 'LIKE metacharacters are escaped');
  assert.ok(compiled.parameters.some((p) => Array.isArray(p) && p[0] === evil));
  assert.match(compiled.sql, /table_id = \$1::uuid and deleted_at is null/);
});

test('sort: unknown and unsortable columns are 422, a big table without a ready index 501', () => {
  const t = table([
    { key: 'name', type: 'text' },
    { key: 'tags', type: 'multi_select' },
  ]);
  const domainError = (fn: () => unknown) => {
    try {
      fn();
    } catch (e) {
      assert.ok(e instanceof DomainError);
      return e;
    }
    assert.fail('accepted');
  };
  let e = domainError(() => planQuery(t, { sort: 'nope' }));
  assert.equal(e.kind, 'invalid');
  assert.equal(e.detail.field, 'sort');
  e = domainError(() => planQuery(t, { sort: 'tags' }));
  assert.equal(e.kind, 'invalid');
  assert.equal(planQuery(t, { sort: 'name' }).sort.key, 'name');
  t.table.records_count = DATA_LIMITS.sortIndexThreshold;
  e = domainError(() => planQuery(t, { sort: 'name' }));
  assert.equal(e.kind, 'not_supported');
  assert.equal(e.detail.reason, 'sort_needs_index');
  t.columns[0].index_status = 'ready';
  assert.equal(planQuery(t, { sort: 'name', dir: 'asc' }).dir, 'asc');
  // Filter refusals carry the data envelope's field and code.
  e = domainError(() => planQuery(t, { filter: '{"column":"nope","op":"equals","value":1}' }));
  assert.deepEqual(
    [e.kind, e.detail.code, e.detail.field, Object.keys(e.detail.errors ?? {})],
    ['invalid', 'validation_error', 'filter', ['filter']],
  );
  e = domainError(() => planQuery(t, { filter: '{"column":"tags","op":"equals","value":"a"}' }));
  assert.deepEqual([e.kind, e.detail.reason], ['not_supported', 'operator_not_supported']);
});

test('masks: a filter or sort on a column masked for the caller is 403 naming it; q leaves masked columns out', () => {
  const t = table([
    { key: 'name', type: 'text' },
    { key: 'phone', type: 'phone' },
    { key: 'salary', type: 'number' },
    { key: 'email', type: 'email' },
  ]);
  t.table.masks = [
    { column: 'phone', unless_permission: 'data.grants.pii', style: 'last4' },
    { column: 'salary', unless_permission: 'data.grants.finance', style: 'full' },
  ];
  t.caller = { permissions: ['data.view'], userId: 1, unrestricted: false };
  const refusal = (query: Parameters<typeof planQuery>[1]) => {
    try {
      planQuery(t, query);
    } catch (e) {
      assert.ok(e instanceof DomainError);
      return [e.kind, e.detail.code, e.detail.field, e.detail.details];
    }
    assert.fail('accepted');
  };
  assert.deepEqual(refusal({ filter: JSON.stringify(leaf('salary', 'greater_than', 5)) }), [
    'forbidden',
    'permission_denied',
    'salary',
    { reason: 'masked_column', column: 'salary', parameter: 'filter' },
  ]);
  assert.deepEqual(
    refusal({ filter: JSON.stringify({ any: [leaf('name', 'is_empty'), { all: [leaf('phone', 'is_not_empty')] }] }) })[2],
    'phone',
  );
  assert.deepEqual(refusal({ sort: 'salary' }), [
    'forbidden',
    'permission_denied',
    'salary',
    { reason: 'masked_column', column: 'salary', parameter: 'sort' },
  ]);

  const where = (q: string) => sql`select 1 from data_records where ${planQuery(t, { q }).where}`.compile(compiler).sql;
  // Column by column without a ready index: the caller's own searchable columns only.
  assert.doesNotMatch(where('x'), /'phone'/);
  assert.match(where('x'), /data->>'name'.*data->>'email'/s);
  // With the index ready, the indexed expression narrows and the caller's columns decide.
  t.table.search_index_status = 'ready';
  t.table.search_index_columns = ['name', 'phone', 'email'];
  const ready = where('x');
  assert.match(ready, /coalesce\(data->>'phone', ''\).* ilike \$\d+ and \(.*data->>'name'.* or .*data->>'email'/s);
  // Granted: the index expression alone, as before.
  t.caller = { permissions: ['data.view', 'data.grants.pii', 'data.grants.finance'], userId: 1, unrestricted: false };
  assert.doesNotMatch(where('x'), / or /);
  assert.equal(planQuery(t, { sort: 'salary', filter: JSON.stringify(leaf('phone', 'starts_with', '+255')) }).sort.key, 'salary');
  // Every searched column masked: q searches nothing, so it is ignored as on a table without searchable columns.
  t.caller = { permissions: ['data.view'], userId: 1, unrestricted: false };
  t.table.masks.push(
    { column: 'name', unless_permission: 'data.grants.pii', style: 'full' },
    { column: 'email', unless_permission: 'data.grants.pii', style: 'email' },
  );
  assert.doesNotMatch(where('x'), /ilike/);
});

test('limit is clamped into 1..200, default 50', () => {
  assert.equal(clampLimit(undefined), 50);
  assert.equal(clampLimit(0), 1);
  assert.equal(clampLimit(-7), 1);
  assert.equal(clampLimit(1), 1);
  assert.equal(clampLimit(200), 200);
  assert.equal(clampLimit(201), 200);
  assert.equal(clampLimit(1e12), 200);
});

// ---- cursor -------------------------------------------------------------------------------------

const KEY: CursorKey = { sort: 'amount', dir: 'desc', hash: queryHash(['t', null, null, 'amount', 'desc']) };

test('cursors round-trip: values, nulls region, unicode text', () => {
  for (const [kind, last] of [
    ['numeric', '-12.50'],
    ['numeric', '100000000000000000000000.000001'],
    ['boolean', 'false'],
    ['text', 'Zoë — 東京 "quoted" \\ back'],
    ['timestamp', '2026-11-24T20:00:00.123456Z'],
  ] as const) {
    const c = sealCursor(encodeCursor(KEY, { last, seq: '123456789012', nulls: false }), 'b');
    assert.match(c, /^[A-Za-z0-9_-]+$/);
    assert.deepEqual(decodeCursor(openCursor(c, 'b'), KEY, kind), { last, seq: '123456789012', nulls: false });
  }
  const n = encodeCursor(KEY, { last: null, seq: '7', nulls: true });
  assert.deepEqual(decodeCursor(n, KEY, 'numeric'), { last: null, seq: '7', nulls: true });
});

test('a cursor of another query, version or garbage restarts (null)', () => {
  const c = encodeCursor(KEY, { last: '5', seq: '9', nulls: false });
  assert.equal(decodeCursor(c, { ...KEY, dir: 'asc' }, 'numeric'), null);
  assert.equal(decodeCursor(c, { ...KEY, sort: 'name' }, 'numeric'), null);
  assert.equal(decodeCursor(c, { ...KEY, hash: queryHash(['t', { column: 'a' }, null, 'amount', 'desc']) }, 'numeric'), null);
  assert.equal(decodeCursor(undefined, KEY, 'numeric'), null);
  assert.equal(decodeCursor('', KEY, 'numeric'), null);
  assert.equal(decodeCursor('not a cursor!', KEY, 'numeric'), null);
  assert.equal(decodeCursor('eyJ2Ijo', KEY, 'numeric'), null);
  assert.equal(decodeCursor(c.slice(0, -3), KEY, 'numeric'), null);
  const forge = (w: Record<string, unknown>) =>
    JSON.stringify({ v: 2, s: KEY.sort, d: KEY.dir, h: KEY.hash, l: '5', q: '9', n: false, ...w });
  assert.deepEqual(decodeCursor(forge({}), KEY, 'numeric'), { last: '5', seq: '9', nulls: false });
  assert.equal(decodeCursor(forge({ v: 1 }), KEY, 'numeric'), null);
  // Forged values the database could not take restart the list instead of failing the statement.
  assert.equal(decodeCursor(forge({ l: "5'; drop table x; --" }), KEY, 'numeric'), null);
  assert.equal(decodeCursor(forge({ l: 'NaN' }), KEY, 'numeric'), null);
  assert.equal(decodeCursor(forge({ q: '1 or 1=1' }), KEY, 'numeric'), null);
  assert.equal(decodeCursor(forge({ q: '99999999999999999999' }), KEY, 'numeric'), null);
  assert.equal(decodeCursor(forge({ q: 9 }), KEY, 'numeric'), null);
  assert.equal(decodeCursor(forge({ l: null }), KEY, 'numeric'), null);
  assert.equal(decodeCursor(forge({ l: '5', n: true }), KEY, 'numeric'), null);
  assert.equal(decodeCursor(forge({ l: 'yes' }), KEY, 'boolean'), null);
  assert.equal(decodeCursor(forge({ l: '2026-02-30T00:00:00.000000Z' }), KEY, 'timestamp'), null);
  assert.equal(decodeCursor(forge({ l: 'a\u0000b' }), KEY, 'text'), null);
});

test('a sealed cursor shows nothing of its content and opens only unaltered, under its own binding', () => {
  const content = encodeCursor(KEY, { last: '91234.5', seq: '42', nulls: false });
  const c = sealCursor(content, 'data-records:1:t');
  assert.notEqual(sealCursor(content, 'data-records:1:t'), c, 'a fresh IV each time');
  const raw = Buffer.from(c, 'base64url').toString('latin1');
  assert.doesNotMatch(raw, /91234|"l"|amount/, 'neither the sort value nor the wire keys are readable');
  assert.equal(openCursor(c, 'data-records:1:t'), content);
  assert.equal(openCursor(c, 'data-records:1:u'), null, 'another table');
  assert.equal(openCursor(c, 'data-records:2:t'), null, 'another account');
  for (const at of [0, 5, 20, Buffer.from(c, 'base64url').length - 1]) {
    const bytes = Buffer.from(c, 'base64url');
    bytes[at] ^= 1;
    assert.equal(openCursor(bytes.toString('base64url'), 'data-records:1:t'), null, `byte ${at} flipped`);
  }
  for (const bad of [undefined, '', 'not a cursor!', 'AAAA', Buffer.from(content).toString('base64url'), 'A'.repeat(20_000)])
    assert.equal(openCursor(bad, 'data-records:1:t'), null, String(bad).slice(0, 20));
});

test('the query hash is stable and tells queries apart; canonical JSON ignores key order', () => {
  const a = queryHash(['t', canonical({ column: 'x', op: 'equals', value: 1 }), null, '$created_at', 'desc']);
  const b = queryHash(['t', canonical({ value: 1, op: 'equals', column: 'x' }), null, '$created_at', 'desc']);
  assert.equal(a, b);
  assert.match(a, /^[0-9a-z]{1,12}$/);
  assert.notEqual(a, queryHash(['t', canonical({ column: 'x', op: 'equals', value: 2 }), null, '$created_at', 'desc']));
  assert.notEqual(a, queryHash(['t', canonical({ column: 'x', op: 'equals', value: 1 }), 'q', '$created_at', 'desc']));
  assert.notEqual(a, queryHash(['u', canonical({ column: 'x', op: 'equals', value: 1 }), null, '$created_at', 'desc']));
  assert.ok(validSortValue('numeric', '0'));
  assert.ok(!validSortValue('numeric', '1e5'));
});

// ---- helpers ------------------------------------------------------------------------------------

const compiler = new Kysely<Record<string, never>>({
  dialect: {
    createAdapter: () => new PostgresAdapter(),
    createDriver: () => new DummyDriver(),
    createIntrospector: (db) => new PostgresIntrospector(db),
    createQueryCompiler: () => new PostgresQueryCompiler(),
  },
});

function table(cols: { key: string; type: FieldType }[]): LoadedTable {
  const columns: ColumnDef[] = cols.map((c, i) => ({
    id: `00000000-0000-4000-8000-00000000000${i}`,
    key: c.key,
    label: c.key,
    type: c.type,
    stored_type: null,
    position: i,
    required: false,
    unique: false,
    indexed: false,
    index_status: null,
    index_error: null,
    config: {},
    ui: {},
  }));
  return {
    table: {
      id: '11111111-1111-4111-8111-111111111111',
      records_count: 0,
      search_index_status: null,
      search_index_columns: null,
    } as LoadedTable['table'],
    columns,
    caller: { permissions: ['*'], userId: null, unrestricted: true },
  };
}
