// Date-times from requests: the one reading behind the schemas' `format: date-time` and every
// parser of a date-time a client sends (schedule_time, data-table datetime values and filters, the
// overview's range), so an instant a request can name is always one PostgreSQL's timestamptz
// accepts and JavaScript's Date can hold. PostgreSQL refuses a zone offset of 16 hours or more
// ("time zone displacement out of range") and the year 0000, which RFC 3339 admits (offsets up to
// 23:59, years 0000-9999): those reached a statement as text and failed it (a 500) instead of the
// request (a 422). Pure: no I/O.

import { TRIM_WHITESPACE } from './text-patterns.js';

/** The largest zone offset PostgreSQL accepts is 15:59 (its limit is 16 hours, exclusive). */
export const MAX_OFFSET_HOURS = 15;

const YEAR = '(?:[1-9][0-9]{3}|0[1-9][0-9]{2}|00[1-9][0-9]|000[1-9])';
const MONTH = '(?:0[1-9]|1[0-2])';
const DAY = '(?:0[1-9]|[12][0-9]|3[01])';
// Digits as [0-9], never \d: a generator reading these patterns in Python (Schemathesis) takes \d for
// any Unicode digit, which JavaScript's \d is not.
const CLOCK = '(?:[01][0-9]|2[0-3]):[0-5][0-9]';

/** A zone: Z, or ±hh, ±hhmm or ±hh:mm with hours 00-15. */
export const OFFSET_PATTERN = '(?:[Zz]|[+-](?:0[0-9]|1[0-5])(?::?[0-5][0-9])?)';

/**
 * What a `format: date-time` field admits, as a pattern the OpenAPI document states beside the
 * format (withStorageBounds adds it): RFC 3339 with years 0001-9999, a zone offset of at most
 * 15:59, at most nine fraction digits. The format check (isDateTime) adds what a pattern cannot say:
 * the day exists, and a leap second (:60) only at 23:59 UTC.
 */
export const DATE_TIME_PATTERN = `^${YEAR}-${MONTH}-${DAY}[Tt ]${CLOCK}:(?:[0-5][0-9]|60)(?:\\.[0-9]{1,9})?${OFFSET_PATTERN}$`;

/** The same, unanchored, for hand-written fields that let the seconds go (schedule_time: 2026-12-01T09:00+03:00). */
export const LENIENT_DATE_TIME = `${YEAR}-${MONTH}-${DAY}[Tt ]${CLOCK}(?::(?:[0-5][0-9]|60)(?:\\.[0-9]{1,9})?)?${OFFSET_PATTERN}`;

/**
 * A bound of a data overview's window (from, to), as parseBound reads it once trimmed: a date, or a
 * date and time in the lenient form. The schema states the shape; whether the day exists and the
 * window is in order are the range rule's (422 on the field).
 */
export const RANGE_BOUND_PATTERN = `^[${TRIM_WHITESPACE}]*(?:${YEAR}-${MONTH}-${DAY}|${LENIENT_DATE_TIME})[${TRIM_WHITESPACE}]*$`;

/** Words for a refusal, in the style of the other field messages. */
export const DATE_TIME_RULE = 'an ISO 8601 date and time with a zone offset between -15:59 and +15:59 (Z or ±hh:mm), years 0001-9999';

const READ = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:([.,])(\d{1,9}))?)?(?:([Zz])|([+-])(\d{2})(?::?(\d{2}))?)$/;

const leap = (y: number) => (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
const daysIn = (y: number, m: number) => [31, leap(y) ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][m - 1];

/**
 * `rfc3339`: the schema format (seconds required, a '.' before the fraction). `iso8601`: the
 * hand-written fields, which also let the seconds go and take ',' before the fraction.
 */
export type DateTimeForm = 'rfc3339' | 'iso8601';

/**
 * The instant a date-time names, or null when it names none PostgreSQL would accept: a day that
 * does not exist, an hour past 23, an offset beyond ±15:59, the year 0000, a leap second anywhere
 * but 23:59:60 UTC (read, as PostgreSQL reads it, as the next day's first second). Digits past
 * milliseconds are cut, not rounded (rounding could move a value past a day).
 */
export function readDateTime(text: string, form: DateTimeForm = 'rfc3339'): Date | null {
  const m = READ.exec(text);
  if (!m) return null;
  const [, y, mo, d, h, mi, s, sep, frac, zulu, sign, oh, om] = m;
  if (form === 'rfc3339' && (s === undefined || sep === ',')) return null;
  const [year, month, day, hour, minute, second] = [+y, +mo, +d, +h, +mi, s === undefined ? 0 : +s];
  if (year < 1 || month < 1 || month > 12 || day < 1 || day > daysIn(year, month)) return null;
  if (hour > 23 || minute > 59 || second > 60) return null;
  let offset = 0;
  if (!zulu) {
    const [hours, minutes] = [+oh, om === undefined ? 0 : +om];
    if (hours > MAX_OFFSET_HOURS || minutes > 59) return null;
    offset = (sign === '-' ? -1 : 1) * (hours * 60 + minutes);
  }
  // setUTCFullYear, not Date.UTC: Date.UTC reads years 0-99 as 1900-1999.
  const t = new Date(0);
  t.setUTCFullYear(year, month - 1, day);
  t.setUTCHours(hour, minute - offset, Math.min(second, 59), frac ? +frac.slice(0, 3).padEnd(3, '0') : 0);
  if (second < 60) return t;
  if (t.getUTCHours() !== 23 || t.getUTCMinutes() !== 59) return null;
  return new Date(t.getTime() + 1000);
}

/** The `date-time` format of every schema: true when readDateTime reads an instant. */
export const isDateTime = (text: string): boolean => readDateTime(text, 'rfc3339') !== null;
