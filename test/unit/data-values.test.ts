import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ColumnDef, StatusField } from '../../domain/data/definitions.js';
import type { FieldType } from '../../domain/data/vocabulary.js';
import type { DataCaller } from '../../domain/data/access.js';
import {
  AUTO_NUMBER_REFUSAL,
  checkStatusMoves,
  checkWrite,
  coerceValue,
  dataBytes,
  parseDatetime,
  parseEmail,
  roundHalfAwayFromZero,
  type ValueEnv,
} from '../../domain/data/values.js';
import { MASK_FULL, maskData, maskValue, maskedTitle, titleColumn, titleText } from '../../domain/data/masks.js';
import { phoneRule } from '../../services/data/records.js';

// Field value rules for writes, one row of the contract's table at a time, with the real phone rule.

let pos = 0;
const col = (key: string, type: FieldType, extra: Partial<ColumnDef> = {}): ColumnDef => ({
  id: `00000000-0000-4000-8000-${String(++pos).padStart(12, '0')}`,
  key,
  label: key,
  type,
  stored_type: null,
  position: pos,
  required: false,
  unique: false,
  indexed: false,
  index_status: null,
  index_error: null,
  config: {},
  ui: {},
  ...extra,
});
const env: ValueEnv = { phone: phoneRule };
const accept = (c: ColumnDef, v: unknown, want: unknown) => {
  const r = coerceValue(c, v, env);
  assert.ok(r.ok, `${c.type} ${JSON.stringify(v)} refused: ${r.ok ? '' : r.error}`);
  assert.deepEqual(r.value, want, `${c.type} ${JSON.stringify(v)}`);
};
const refuse = (c: ColumnDef, v: unknown) => {
  const r = coerceValue(c, v, env);
  assert.ok(!r.ok, `${c.type} ${JSON.stringify(v)} should be refused, got ${JSON.stringify(r.ok && r.value)}`);
};

test('text and long_text: strings within max_length (default 1000 / 100000 characters), counted in characters', () => {
  const t = col('t', 'text');
  accept(t, 'hello', 'hello');
  accept(t, 'x'.repeat(1000), 'x'.repeat(1000));
  refuse(t, 'x'.repeat(1001));
  accept(t, '😀'.repeat(1000), '😀'.repeat(1000)); // 2000 UTF-16 units, 1000 characters
  refuse(t, 12);
  refuse(t, true);
  refuse(t, { a: 1 });
  refuse(t, 'a\0b');
  const short = col('s', 'text', { config: { max_length: 3 } });
  accept(short, 'abc', 'abc');
  refuse(short, 'abcd');
  const long = col('l', 'long_text');
  accept(long, 'y'.repeat(100_000), 'y'.repeat(100_000));
  refuse(long, 'y'.repeat(100_001));
});

test('number: JSON numbers and numeric strings, min/max inclusive, precision half away from zero, finite only', () => {
  const n = col('n', 'number');
  accept(n, 12, 12);
  accept(n, '12.50', 12.5);
  accept(n, ' -3e2 ', -300);
  accept(n, '.5', 0.5);
  accept(n, -0, 0);
  refuse(n, '12abc');
  refuse(n, '');
  refuse(n, 'NaN');
  refuse(n, 'Infinity');
  refuse(n, Infinity);
  refuse(n, '1e400');
  refuse(n, true);
  refuse(n, [1]);
  const p = col('p', 'number', { config: { precision: 2, min: -5, max: 10 } });
  accept(p, 1.005, 1.01);
  accept(p, -1.005, -1.01);
  accept(p, '2.345', 2.35);
  accept(p, -2.345, -2.35);
  accept(p, 10, 10);
  accept(p, -5, -5);
  accept(p, 10.004, 10); // rounded first, then bounded
  refuse(p, 10.01);
  refuse(p, -5.01);
  const whole = col('w', 'number', { config: { precision: 0 } });
  accept(whole, 2.5, 3);
  accept(whole, -2.5, -3);
  accept(whole, -0.4, 0);
  assert.equal(roundHalfAwayFromZero(0.125, 2), 0.13);
  assert.equal(roundHalfAwayFromZero(-0.125, 2), -0.13);
});

test('currency: a plain amount (not minor units), zero decimals by default, precision configurable', () => {
  const c = col('c', 'currency');
  accept(c, 1500, 1500);
  accept(c, '1500.5', 1501);
  accept(c, 1499.4, 1499);
  accept(c, -2.5, -3);
  refuse(c, 'TZS 1500');
  refuse(c, 'abc');
  const usd = col('u', 'currency', { config: { currency: 'USD', precision: 2 } });
  accept(usd, 19.999, 20);
  accept(usd, '19.995', 20);
  accept(usd, 19.994, 19.99);
});

test('boolean: true or false only', () => {
  const b = col('b', 'boolean');
  accept(b, true, true);
  accept(b, false, false);
  for (const v of ['true', 1, 0, 'yes', [], {}]) refuse(b, v);
});

test('date: YYYY-MM-DD, a real calendar day', () => {
  const d = col('d', 'date');
  accept(d, '2024-02-29', '2024-02-29');
  accept(d, '0001-01-01', '0001-01-01');
  for (const v of ['2023-02-29', '2024-13-01', '2024-00-10', '2024-04-31', '2024-4-1', '2024-04-01T00:00:00Z', '24-04-01', 20240401])
    refuse(d, v);
});

test('datetime: ISO 8601 with an explicit timezone, stored as fixed-width UTC', () => {
  const dt = col('dt', 'datetime');
  accept(dt, '2024-05-01T10:00:00Z', '2024-05-01T10:00:00.000Z');
  accept(dt, '2024-05-01T13:00:00+03:00', '2024-05-01T10:00:00.000Z');
  accept(dt, '2024-05-01T01:30:00.123456-02:30', '2024-05-01T04:00:00.123Z');
  accept(dt, '2024-12-31T23:30+0100', '2024-12-31T22:30:00.000Z');
  accept(dt, '2025-01-01T00:30:00+03:00', '2024-12-31T21:30:00.000Z');
  accept(dt, '0050-06-01T00:00:00Z', '0050-06-01T00:00:00.000Z'); // not read as 1950
  for (const v of [
    '2024-05-01T10:00:00', // no timezone: ambiguous
    '2024-05-01',
    '2024-05-01T24:00:00Z',
    '2024-02-30T10:00:00Z',
    '2024-05-01T10:60:00Z',
    '2024-05-01T10:00:00+25:00',
    '0001-01-01T00:00:00+01:00', // before year 1 in UTC
    'yesterday',
    1714557600000,
  ])
    refuse(dt, v);
  assert.equal(parseDatetime('2024-05-01T10:00:00.5Z'), '2024-05-01T10:00:00.500Z');
});

test('phone: E.164 with the column region, TZ when unspecified; invalid numbers refused', () => {
  const ph = col('ph', 'phone');
  accept(ph, '0712 345 678', '+255712345678');
  accept(ph, '+255712345678', '+255712345678');
  accept(ph, '+1 415 555 2671', '+14155552671');
  refuse(ph, '0212345678'); // right length, not a Tanzanian numbering-plan range
  refuse(ph, '12');
  refuse(ph, 'call me');
  refuse(ph, 255712345678);
  const ke = col('ke', 'phone', { config: { region: 'KE' } });
  accept(ke, '0712 345678', '+254712345678');
  const badRegion = col('xx', 'phone', { config: { region: 'ZZ' } });
  refuse(badRegion, '0712345678');
});

test('email: a sane address, domain lowercased, at most 254 characters', () => {
  const e = col('e', 'email');
  accept(e, 'Jane.Doe+tag@Example.CO.TZ', 'Jane.Doe+tag@example.co.tz');
  accept(e, '  a@b.io ', 'a@b.io');
  for (const v of ['plain', 'a@b', 'a@@b.io', '@b.io', 'a@b.io.', 'a..b@c.io', '.a@c.io', 'a@-b.io', 'a b@c.io', 'a@b.c1', 5]) refuse(e, v);
  refuse(e, `${'a'.repeat(64)}@${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(60)}.io`);
  refuse(e, `${'a'.repeat(65)}@b.io`);
  assert.equal(parseEmail('x@xn--bcher-kva.example'), 'x@xn--bcher-kva.example');
});

test('select and multi_select: option keys only; multi_select distinct, stored in option order', () => {
  const options = [
    { key: 'red', label: 'Red' },
    { key: 'green', label: 'Green' },
    { key: 'blue', label: 'Blue' },
  ];
  const s = col('s', 'select', { config: { options } });
  accept(s, 'green', 'green');
  refuse(s, 'Green'); // a label is not a key
  refuse(s, 'purple');
  refuse(s, ['red']);
  const m = col('m', 'multi_select', { config: { options } });
  accept(m, ['blue', 'red'], ['red', 'blue']);
  refuse(m, ['red', 'red']);
  refuse(m, ['red', 'purple']);
  refuse(m, 'red');
  refuse(m, [1]);
});

test('relation: a UUID or {id: UUID}, normalized to the lowercase UUID', () => {
  const r = col('r', 'relation', { config: { table_id: '11111111-1111-4111-8111-111111111111' } });
  const id = 'AAAAAAAA-BBBB-4CCC-8DDD-EEEEEEEEEEEE';
  accept(r, id, id.toLowerCase());
  accept(r, { id }, id.toLowerCase());
  accept(r, { id, title: 'ignored' }, id.toLowerCase());
  for (const v of ['not-a-uuid', { uuid: id }, [id], 42]) refuse(r, v);
  refuse(col('r2', 'relation'), id); // no related table configured
});

test('file: a descriptor {name, url?, size?, mime?}, or a list when config.multiple', () => {
  const f = col('f', 'file');
  accept(
    f,
    { name: 'a.pdf', url: 'https://x.test/a.pdf', size: 10, mime: 'Application/PDF' },
    {
      name: 'a.pdf',
      url: 'https://x.test/a.pdf',
      size: 10,
      mime: 'application/pdf',
    },
  );
  accept(f, { name: 'b.txt' }, { name: 'b.txt' });
  refuse(f, [{ name: 'a' }]);
  refuse(f, { url: 'https://x.test' });
  refuse(f, { name: 'a', url: 'javascript:alert(1)' });
  refuse(f, { name: 'a', size: -1 });
  refuse(f, { name: 'a', bytes: 'AAAA' });
  refuse(f, 'a.pdf');
  const many = col('fs', 'file', { config: { multiple: true } });
  accept(many, [{ name: 'a' }, { name: 'b' }], [{ name: 'a' }, { name: 'b' }]);
  accept(many, { name: 'a' }, [{ name: 'a' }]);
  refuse(many, [{ name: 'a' }, 'b']);
});

test('auto_number and unknown: never written by a client', () => {
  const a = col('a', 'auto_number');
  const u = col('u', 'unknown', { stored_type: 'formula' });
  refuse(a, 5);
  refuse(u, 'x');
  const r = checkWrite([a, u], { a: null, u: 'x' }, null, env);
  assert.deepEqual(r.errors.a, [AUTO_NUMBER_REFUSAL]);
  assert.ok(r.errors.u);
});

test('checkWrite: unknown keys, required, defaults, null clears, merge, several errors at once', () => {
  const name = col('name', 'text', { required: true });
  const qty = col('qty', 'number', { config: { default: '3' } });
  const note = col('note', 'text');
  const cols = [name, qty, note];

  const created = checkWrite(cols, { name: 'A', note: 'n' }, null, env);
  assert.deepEqual(created.errors, {});
  assert.deepEqual(created.data, { name: 'A', qty: 3, note: 'n' }); // default filled and coerced
  assert.deepEqual(created.changed, ['name', 'qty', 'note']);

  const many = checkWrite(cols, { qty: 'x', bogus: 1, __proto__x: 2, note: 5 }, null, env);
  assert.deepEqual(Object.keys(many.errors).sort(), ['__proto__x', 'bogus', 'name', 'note', 'qty']);

  const proto = checkWrite(cols, JSON.parse('{"__proto__": 1, "name": "A"}'), null, env);
  assert.deepEqual(Object.keys(proto.errors), ['__proto__']);

  assert.deepEqual(checkWrite(cols, { name: '   ' }, null, env).errors.name, ['This field is required.']);
  assert.deepEqual(checkWrite(cols, { name: 'A', qty: null }, null, env).data, { name: 'A' }); // null is sent: no default

  const current = { name: 'A', qty: 3, note: 'n' };
  const patch = checkWrite(cols, { note: null, qty: '4' }, current, env);
  assert.deepEqual(patch.errors, {});
  assert.deepEqual(patch.data, { name: 'A', qty: 4 });
  assert.deepEqual(patch.changed, ['qty', 'note']);
  assert.deepEqual(checkWrite(cols, { name: null }, current, env).errors.name, ['This field is required.']);
  assert.deepEqual(checkWrite(cols, { qty: 3 }, current, env).changed, []); // same value: nothing changes
  // A PATCH not naming a required key leaves it alone even when the stored record lacks it.
  assert.deepEqual(checkWrite(cols, { note: 'x' }, { qty: 1 }, env).errors, {});
});

const caller = (permissions: string[]): DataCaller => ({ permissions, userId: 1, unrestricted: false });
const machine: StatusField = {
  column: 'status',
  label: 'Status',
  required: true,
  strict: true,
  initial: ['new'],
  moves: [
    { from: 'new', to: 'open' },
    { from: 'open', to: 'done', permission: 'data.grants.closer' },
    { from: '*', to: 'cancelled' },
  ],
};

test('status fields: initial states on create, listed moves, permissions, strictness', () => {
  const options = ['new', 'open', 'done', 'cancelled'].map((key) => ({ key, label: key }));
  const status = col('status', 'select', { config: { options } });
  const cols = [status];
  assert.deepEqual(checkWrite(cols, {}, null, env, [machine]).errors.status, ['This field is required.']);
  assert.ok(checkWrite(cols, { status: 'open' }, null, env, [machine]).errors.status[0].includes('start in one of: new'));
  assert.deepEqual(checkWrite(cols, { status: 'new' }, null, env, [machine]).errors, {});
  const optional = { ...machine, required: false };
  assert.deepEqual(checkWrite(cols, {}, null, env, [optional]).errors, {});
  assert.ok(checkWrite(cols, { status: 'done' }, null, env, [optional]).errors.status);

  const judge = (from: string | null, to: string | null, who: DataCaller, f = machine) =>
    checkStatusMoves([f], from === null ? {} : { status: from }, to === null ? {} : { status: to }, who)[0];
  assert.equal(judge('new', 'open', caller([])).refusal, undefined);
  assert.equal(judge('new', 'done', caller(['*'])).refusal, 'illegal');
  assert.equal(judge('open', 'done', caller([])).refusal, 'forbidden');
  assert.equal(judge('open', 'done', caller(['data.grants.closer'])).refusal, undefined);
  assert.equal(judge('open', 'done', caller(['data.grants.*'])).refusal, undefined);
  assert.equal(judge('done', 'cancelled', caller([])).refusal, undefined); // from '*'
  assert.equal(judge('open', null, caller(['*'])).refusal, 'illegal'); // clearing is a move to no state
  assert.equal(judge(null, 'new', caller([])).refusal, undefined); // entering at an initial state
  assert.equal(judge(null, 'open', caller([])).refusal, 'illegal');
  assert.equal(judge('open', 'open', caller([])), undefined); // not a move
  const loose = { ...machine, strict: false };
  assert.equal(judge('new', 'done', caller([]), loose).refusal, undefined);
  assert.equal(judge('open', 'done', caller([]), loose).refusal, 'forbidden'); // a listed move keeps its permission
  assert.equal(judge('open', 'done', { permissions: [], userId: null, unrestricted: true }).refusal, undefined);
});

test('serialized size: bytes of the JSON text (UTF-8)', () => {
  assert.equal(dataBytes({ note: 'x'.repeat(8181) }), 8192);
  assert.equal(dataBytes({ n: 'é' }), '{"n":"é"}'.length + 1);
});

test('masks: full, last4 and email styles; empty values stay empty; titles', () => {
  assert.equal(maskValue('full', 'secret'), MASK_FULL);
  assert.equal(maskValue('full', 42), MASK_FULL);
  assert.equal(maskValue('full', ['a']), MASK_FULL);
  assert.equal(maskValue('full', true), MASK_FULL);
  assert.equal(maskValue('full', null), null);
  assert.equal(maskValue('last4', '+255712345678'), '••••5678');
  assert.equal(maskValue('last4', 12345678), '••••5678');
  assert.equal(maskValue('last4', 'abcd'), '••••');
  assert.equal(maskValue('last4', { name: 'x' }), MASK_FULL);
  assert.equal(maskValue('email', 'jane@example.com'), 'j•••@example.com');
  assert.equal(maskValue('email', 'not an address'), MASK_FULL);
  const masks = new Map([['phone', { column: 'phone', unless_permission: 'data.grants.pii', style: 'last4' as const }]]);
  assert.deepEqual(maskData({ phone: '+255712345678', name: 'A' }, masks), { phone: '••••5678', name: 'A' });

  const cols = [col('n', 'number'), col('first', 'text'), col('second', 'text')];
  assert.equal(titleColumn(null, cols), 'first');
  assert.equal(titleColumn('second', cols), 'second');
  assert.equal(titleColumn('gone', cols), 'first');
  assert.equal(titleColumn(null, [col('n2', 'number')]), null);
  assert.equal(titleText(''), null);
  assert.equal(titleText(12), '12');
  assert.equal(titleText(['a', 'b']), 'a, b');
  assert.equal(titleText({ name: 'f.pdf' }), 'f.pdf');
  assert.equal(maskedTitle('Jane', { column: 'first', unless_permission: 'x', style: 'full' }), MASK_FULL);
  assert.equal(maskedTitle('Jane', undefined), 'Jane');
  assert.equal(maskedTitle(null, { column: 'first', unless_permission: 'x', style: 'full' }), null);
});
