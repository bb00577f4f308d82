import { test } from 'node:test';
import assert from 'node:assert/strict';
import { bucketStarts, chooseBucket, namedWindow, parseBound, resolveRange, truncate, type RangeResult } from '../../domain/data/ranges.js';
import { NAMED_RANGES } from '../../domain/data/vocabulary.js';

const NOW = new Date('2026-11-25T14:35:12.345Z'); // a Wednesday
const iso = (d: Date) => d.toISOString();
function ok(r: RangeResult) {
  assert.ok(r.ok, `expected a window, got ${JSON.stringify(r)}`);
  return r;
}
function refused(r: RangeResult) {
  assert.ok(!r.ok, `expected a refusal, got ${JSON.stringify(r)}`);
  return r;
}

test('no range means last_30_days, bucketed by day', () => {
  const r = ok(resolveRange({}, NOW));
  assert.equal(r.window.range, 'last_30_days');
  assert.equal(iso(r.window.from), '2026-10-26T14:35:12.345Z');
  assert.equal(iso(r.window.to), iso(NOW));
  assert.equal(r.bucket, 'day');
  assert.equal(ok(resolveRange({ range: '  ', from: '', to: '' }, NOW)).window.range, 'last_30_days');
});

test('every named range resolves to a window that starts before it ends', () => {
  for (const name of NAMED_RANGES) {
    const r = ok(resolveRange({ range: name }, NOW, new Date('2025-03-01T00:00:00Z')));
    assert.equal(r.window.range, name);
    assert.ok(r.window.from < r.window.to, name);
  }
});

test('calendar ranges start at UTC midnight or the first of the month', () => {
  assert.equal(iso(namedWindow('today', NOW).from), '2026-11-25T00:00:00.000Z');
  const y = namedWindow('yesterday', NOW);
  assert.deepEqual([iso(y.from), iso(y.to)], ['2026-11-24T00:00:00.000Z', '2026-11-25T00:00:00.000Z']);
  assert.equal(iso(namedWindow('this_month', NOW).from), '2026-11-01T00:00:00.000Z');
  const lm = namedWindow('last_month', NOW);
  assert.deepEqual([iso(lm.from), iso(lm.to)], ['2026-10-01T00:00:00.000Z', '2026-11-01T00:00:00.000Z']);
  assert.deepEqual(
    [iso(namedWindow('last_month', new Date('2026-01-10T00:00:00Z')).from)],
    ['2025-12-01T00:00:00.000Z'],
    'last_month in January is December of the year before',
  );
  assert.equal(iso(namedWindow('this_year', NOW).from), '2026-01-01T00:00:00.000Z');
  assert.equal(iso(namedWindow('last_7_days', NOW).from), '2026-11-18T14:35:12.345Z');
});

test('all_time starts at the earliest record, or today without records', () => {
  assert.equal(iso(namedWindow('all_time', NOW, new Date('2024-02-03T04:05:06Z')).from), '2024-02-03T04:05:06.000Z');
  assert.equal(iso(namedWindow('all_time', NOW, null).from), '2026-11-25T00:00:00.000Z');
  assert.equal(ok(resolveRange({ range: 'all_time' }, NOW, new Date('2025-02-03T04:05:06Z'))).bucket, 'week');
  assert.equal(ok(resolveRange({ range: 'all_time' }, NOW, new Date('2020-02-03T04:05:06Z'))).bucket, 'month');
});

test('the bucket follows the window length', () => {
  const at = (days: number) => chooseBucket(new Date(NOW.getTime() - days * 86_400_000), NOW);
  assert.equal(at(1), 'hour');
  assert.equal(at(2), 'hour');
  assert.equal(at(2.1), 'day');
  assert.equal(at(90), 'day');
  assert.equal(at(93), 'week');
  assert.equal(at(730), 'week');
  assert.equal(at(800), 'month');
  assert.equal(ok(resolveRange({ range: 'today' }, NOW)).bucket, 'hour');
  assert.equal(ok(resolveRange({ range: 'last_90_days' }, NOW)).bucket, 'day');
  assert.equal(ok(resolveRange({ range: 'this_year' }, NOW)).bucket, 'week');
});

test('a JSON range object: dates are whole UTC days (to includes its day), datetimes need a timezone', () => {
  const r = ok(resolveRange({ range: '{"from":"2026-01-01","to":"2026-01-31"}' }, NOW));
  assert.deepEqual(
    [iso(r.window.from), iso(r.window.to), r.window.range],
    ['2026-01-01T00:00:00.000Z', '2026-02-01T00:00:00.000Z', 'custom'],
  );
  assert.equal(r.bucket, 'day');
  const t = ok(resolveRange({ range: JSON.stringify({ from: '2026-11-25T03:00:00+03:00', to: '2026-11-25T12:00:00Z' }) }, NOW));
  assert.deepEqual([iso(t.window.from), iso(t.window.to)], ['2026-11-25T00:00:00.000Z', '2026-11-25T12:00:00.000Z']);
  assert.equal(t.bucket, 'hour');
  // to is optional: up to now
  assert.equal(iso(ok(resolveRange({ range: '{"from":"2026-11-01"}' }, NOW)).window.to), iso(NOW));
});

test('from and to query parameters', () => {
  const r = ok(resolveRange({ from: '2026-06-01', to: '2026-06-30' }, NOW));
  assert.deepEqual([iso(r.window.from), iso(r.window.to)], ['2026-06-01T00:00:00.000Z', '2026-07-01T00:00:00.000Z']);
  assert.equal(iso(ok(resolveRange({ from: '2026-11-20' }, NOW)).window.to), iso(NOW));
  assert.deepEqual(refused(resolveRange({ to: '2026-06-30' }, NOW)).field, 'from');
  assert.deepEqual(refused(resolveRange({ from: '2026-06-01', to: 'soon' }, NOW)).field, 'to');
  assert.deepEqual(refused(resolveRange({ from: 'yesterday' }, NOW)).field, 'from');
});

test('bad ranges are refused, naming the field', () => {
  const bad = [
    'last_31_days',
    'LAST_30_DAYS',
    '{"from":"2026-01-01"',
    '{"from":"2026-02-30"}',
    '{"from":"2026-01-01T10:00:00"}', // no timezone
    '{"from":"2026-01-01T25:00:00Z"}',
    '{"from":"2026-03-01","to":"2026-02-01"}',
    '{"from":"2026-03-01","to":"2026-03-01T00:00:00Z"}',
    '{"from":"1900-01-01"}',
    '{"from":"2000-01-01","to":"2030-01-01"}', // 30 years
    '{"from":"2026-01-01","extra":1}',
    '{"from":1}',
    '{"from":"2026-01-01","to":5}',
    '[1,2]',
    'null',
    "'); drop table data_records;--",
  ];
  for (const range of bad) assert.equal(refused(resolveRange({ range }, NOW)).field, 'range', range);
  assert.equal(refused(resolveRange({ range: 'today', from: '2026-01-01' }, NOW)).field, 'range');
});

test('parseBound refuses days that do not exist and accepts offsets with or without a colon', () => {
  assert.equal(parseBound('2026-02-29', 'from'), null);
  assert.equal(iso(parseBound('2028-02-29', 'from')!), '2028-02-29T00:00:00.000Z');
  assert.equal(iso(parseBound('2026-05-05T10:00+0300', 'from')!), '2026-05-05T07:00:00.000Z');
  assert.equal(iso(parseBound('2026-05-05 10:00:00.5z', 'from')!), '2026-05-05T10:00:00.500Z');
  assert.equal(parseBound('2026-5-5', 'from'), null);
});

test('buckets align as date_trunc does (weeks on Monday) and cover the whole window', () => {
  assert.equal(iso(truncate(NOW, 'hour')), '2026-11-25T14:00:00.000Z');
  assert.equal(iso(truncate(NOW, 'day')), '2026-11-25T00:00:00.000Z');
  assert.equal(iso(truncate(NOW, 'week')), '2026-11-23T00:00:00.000Z');
  assert.equal(iso(truncate(new Date('2026-11-29T23:00:00Z'), 'week')), '2026-11-23T00:00:00.000Z', 'Sunday belongs to the week before');
  assert.equal(iso(truncate(NOW, 'month')), '2026-11-01T00:00:00.000Z');

  const days = bucketStarts({ from: new Date('2026-01-30T12:00:00Z'), to: new Date('2026-02-02T00:00:00Z') }, 'day');
  assert.deepEqual(days.map(iso), ['2026-01-30T00:00:00.000Z', '2026-01-31T00:00:00.000Z', '2026-02-01T00:00:00.000Z']);
  const months = bucketStarts({ from: new Date('2025-11-15T00:00:00Z'), to: new Date('2026-02-01T00:00:00Z') }, 'month');
  assert.deepEqual(months.map(iso), ['2025-11-01T00:00:00.000Z', '2025-12-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z']);
  const r = ok(resolveRange({}, NOW));
  assert.equal(bucketStarts(r.window, r.bucket).length, 31);
  assert.equal(bucketStarts(ok(resolveRange({ range: 'today' }, NOW)).window, 'hour').length, 15);
});
