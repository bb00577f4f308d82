import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DATE_TIME_PATTERN, isDateTime, readDateTime } from '../../domain/platform/date-time.js';
import { validateBody, validateQuery, withStorageBounds } from '../../services/platform/validation.js';
import { DomainError } from '../../services/platform/errors.js';
import { parseScheduleTime } from '../../services/messaging/messages.js';
import { parseDatetime } from '../../domain/data/values.js';
import { normalizeDatetime } from '../../domain/data/filter.js';
import { parseBound } from '../../domain/data/ranges.js';

// The one date-time rule (domain/platform/date-time.ts): RFC 3339 narrowed to what PostgreSQL's
// timestamptz accepts. Each refused value below is one RFC 3339 (and ajv-formats) admits and
// PostgreSQL refuses; each admitted edge is one PostgreSQL reads as the same instant.

const REFUSED = [
  '2026-01-01T00:00:00+16:00', // PostgreSQL: time zone displacement out of range
  '2026-01-01T00:00:00-16:00',
  '2026-01-01T00:00:00+23:59',
  '2026-01-01T00:00:00+1600',
  '2026-01-01T00:00:00+16',
  '2026-01-01T00:00:00+99:00',
  '2026-01-01T00:00:00+15:60',
  '0000-01-01T00:00:00Z', // PostgreSQL: date/time field value out of range
  '2026-02-29T00:00:00Z',
  '2026-01-01T24:00:00Z',
  '2026-06-30T12:30:60Z', // a leap second only ends a UTC day
  `2026-01-01T00:00:00.${'1'.repeat(200)}Z`, // PostgreSQL reads at most 128 characters
  '2026-01-01T00:00:00', // no zone
  '2026-01-01T00:00Z', // the format wants seconds
];

const ADMITTED: [string, string][] = [
  ['2026-01-01T00:00:00+15:59', '2025-12-31T08:01:00.000Z'],
  ['2026-01-01T00:00:00-15:59', '2026-01-01T15:59:00.000Z'],
  ['2026-01-01T00:00:00+0530', '2025-12-31T18:30:00.000Z'],
  ['2026-01-01T00:00:00+05', '2025-12-31T19:00:00.000Z'],
  ['2026-01-01t00:00:00z', '2026-01-01T00:00:00.000Z'],
  ['2026-01-01 00:00:00Z', '2026-01-01T00:00:00.000Z'],
  ['2016-12-31T23:59:60Z', '2017-01-01T00:00:00.000Z'], // as PostgreSQL reads a leap second
  ['2017-01-01T02:59:60+03:00', '2017-01-01T00:00:00.000Z'],
  ['2026-01-01T00:00:00.123456789Z', '2026-01-01T00:00:00.123Z'],
  ['0001-01-01T00:00:00+15:00', '0000-12-31T09:00:00.000Z'], // 1 BC in PostgreSQL's words
  ['9999-12-31T23:59:59-15:59', '+010000-01-01T15:58:59.000Z'],
];

test('the date-time rule: offsets up to ±15:59, years 0001-9999, real days, leap seconds at 23:59 UTC', () => {
  for (const s of REFUSED) {
    assert.equal(readDateTime(s), null, s);
    assert.equal(isDateTime(s), false, s);
  }
  for (const [s, instant] of ADMITTED) {
    assert.equal(readDateTime(s)?.toISOString(), instant, s);
    assert.ok(new RegExp(DATE_TIME_PATTERN).test(s), `the documented pattern admits ${s}`);
  }
  // What the pattern can say, it says: offsets and years PostgreSQL refuses never match it.
  for (const s of REFUSED.slice(0, 8)) assert.ok(!new RegExp(DATE_TIME_PATTERN).test(s), s);
});

/** The field problems of a value against a schema made as every operation's are (withStorageBounds). */
function problems(validate: 'body' | 'query', field: Record<string, unknown>, value: string): Record<string, string[]> {
  const schema = withStorageBounds({ type: 'object', properties: { at: field } });
  try {
    if (validate === 'body') validateBody(schema, { at: value });
    else validateQuery(schema, { at: value });
    return {};
  } catch (err) {
    assert.ok(err instanceof DomainError);
    return err.detail.errors ?? {};
  }
}

test('format date-time in every operation schema: the narrowed rule, stated as a pattern in the document', () => {
  const field = { type: 'string', format: 'date-time' };
  assert.equal(
    (withStorageBounds({ type: 'object', properties: { at: field } }).properties.at as { pattern?: string }).pattern,
    DATE_TIME_PATTERN,
  );
  for (const door of ['body', 'query'] as const) {
    assert.deepEqual(problems(door, field, '2026-01-01T00:00:00+16:00'), { at: ['The at format is invalid.'] }, door);
    assert.deepEqual(problems(door, field, '0000-01-01T00:00:00Z'), { at: ['The at format is invalid.'] }, door);
    // 12:30:60 passes the pattern; the format itself refuses it.
    assert.deepEqual(problems(door, field, '2026-06-30T12:30:60Z'), { at: ['The at format is invalid.'] }, door);
    assert.deepEqual(problems(door, field, '2026-01-01T00:00:00+15:59'), {}, door);
    assert.deepEqual(problems(door, { type: ['string', 'null'], format: 'date-time' }, '2026-01-01T00:00:00-16:00'), {
      at: ['The at format is invalid.'],
    });
  }
});

test('the hand-written date-time fields read by the same rule', () => {
  assert.throws(() => parseScheduleTime('2026-12-01T09:00:00+16:00'), DomainError);
  assert.throws(() => parseScheduleTime('0000-12-01T09:00Z'), DomainError);
  assert.equal(parseScheduleTime('2026-12-01T09:00+15:00')?.toISOString(), '2026-11-30T18:00:00.000Z');
  assert.equal(parseDatetime('2026-01-01T00:00:00+16:00'), null);
  assert.equal(parseDatetime('2026-01-01T00:00:00,5+15:00'), '2025-12-31T09:00:00.500Z');
  assert.equal(normalizeDatetime('2026-01-01T00:00:00+16:00'), null);
  assert.equal(parseBound('2026-01-01T00:00:00+16:00', 'from'), null);
  assert.equal(parseBound('2026-01-01T00:00+15:00', 'from')?.toISOString(), '2025-12-31T09:00:00.000Z');
});
