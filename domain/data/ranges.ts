import { NAMED_RANGES } from './vocabulary.js';
import { readDateTime } from '../platform/date-time.js';

// The time window of a group overview (GET /data/groups/{group}/overview): a named range such as
// last_30_days, a JSON object {"from","to"}, or from/to query parameters; and the bucket its time
// series is cut into. All in UTC: calendar ranges (today, this_month…) start at UTC midnight, and
// buckets are aligned the way PostgreSQL's date_trunc aligns them (weeks start on Monday), so the
// buckets the SQL groups by and the ones listed here are the same instants.

export type NamedRange = (typeof NAMED_RANGES)[number];
export type Bucket = 'hour' | 'day' | 'week' | 'month';

/** A half-open window [from, to). `range` is the named range, or `custom` for explicit bounds. */
export interface Window {
  from: Date;
  to: Date;
  range: NamedRange | 'custom';
}

export type RangeResult = { ok: true; window: Window; bucket: Bucket } | { ok: false; field: 'range' | 'from' | 'to'; message: string };

export const DEFAULT_RANGE: NamedRange = 'last_30_days';
/** A window longer than this is refused: its monthly series would stop being a summary. */
export const MAX_WINDOW_YEARS = 20;

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
/** Where each bucket size takes over: up to two days by hour, up to a quarter by day, up to two years by week. */
const BUCKET_LIMITS: readonly [Bucket, number][] = [
  ['hour', 2 * DAY],
  ['day', 92 * DAY],
  ['week', 732 * DAY],
];

/** The bucket a window's series is cut into, from its length. */
export function chooseBucket(from: Date, to: Date): Bucket {
  const span = to.getTime() - from.getTime();
  for (const [bucket, limit] of BUCKET_LIMITS) if (span <= limit) return bucket;
  return 'month';
}

const startOfDay = (d: Date) => new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate()));
const startOfMonth = (d: Date, monthsBack = 0) => new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() - monthsBack, 1));

/** The window of a named range at `now`; all_time starts at the earliest record (or today when there is none). */
export function namedWindow(name: NamedRange, now: Date, earliest: Date | null = null): Window {
  const days = (n: number) => new Date(now.getTime() - n * DAY);
  const w = (from: Date, to: Date = now): Window => ({ from, to, range: name });
  switch (name) {
    case 'today':
      return w(startOfDay(now));
    case 'yesterday':
      return w(new Date(startOfDay(now).getTime() - DAY), startOfDay(now));
    case 'last_7_days':
      return w(days(7));
    case 'last_30_days':
      return w(days(30));
    case 'last_90_days':
      return w(days(90));
    case 'this_month':
      return w(startOfMonth(now));
    case 'last_month':
      return w(startOfMonth(now, 1), startOfMonth(now));
    case 'this_year':
      return w(new Date(Date.UTC(now.getUTCFullYear(), 0, 1)));
    case 'all_time': {
      const from = earliest && earliest < now ? earliest : startOfDay(now);
      return w(from);
    }
  }
}

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

/**
 * One bound: a date (UTC midnight; as `to`, the end of that day, so `to=2026-01-31` includes the
 * 31st) or a date and time with an explicit offset. Anything else, or a day that does not exist, is null.
 */
export function parseBound(text: string, as: 'from' | 'to'): Date | null {
  const s = text.trim();
  const d = DATE.exec(s);
  if (d) {
    const [y, m, day] = [Number(d[1]), Number(d[2]), Number(d[3])];
    const t = new Date(Date.UTC(y, m - 1, day));
    if (t.getUTCFullYear() !== y || t.getUTCMonth() !== m - 1 || t.getUTCDate() !== day) return null;
    return as === 'to' ? new Date(t.getTime() + DAY) : t;
  }
  // The rule every date-time of a request follows (offsets up to ±15:59, real days).
  return readDateTime(s, 'iso8601');
}

const MIN = Date.UTC(1970, 0, 1);
const MAX = Date.UTC(10_000, 0, 1);

function explicit(fromText: unknown, toText: unknown, now: Date, field: (which: 'from' | 'to') => 'range' | 'from' | 'to'): RangeResult {
  if (typeof fromText !== 'string' || !fromText.trim())
    return { ok: false, field: field('from'), message: 'The range needs a from date (YYYY-MM-DD or a date and time with a timezone).' };
  if (toText !== undefined && toText !== null && typeof toText !== 'string')
    return { ok: false, field: field('to'), message: 'The to bound must be a date (YYYY-MM-DD) or a date and time with a timezone.' };
  const from = parseBound(fromText, 'from');
  if (!from)
    return { ok: false, field: field('from'), message: 'The from bound must be a date (YYYY-MM-DD) or a date and time with a timezone.' };
  const to = typeof toText === 'string' && toText.trim() ? parseBound(toText, 'to') : now;
  if (!to)
    return { ok: false, field: field('to'), message: 'The to bound must be a date (YYYY-MM-DD) or a date and time with a timezone.' };
  if (from.getTime() < MIN || to.getTime() > MAX)
    return { ok: false, field: field('from'), message: 'The range must lie between 1970 and 9999.' };
  if (from >= to) return { ok: false, field: field('from'), message: 'The range must start before it ends.' };
  if (to.getTime() - from.getTime() > MAX_WINDOW_YEARS * 366 * DAY)
    return { ok: false, field: field('from'), message: `The range may span at most ${MAX_WINDOW_YEARS} years.` };
  return { ok: true, window: { from, to, range: 'custom' }, bucket: chooseBucket(from, to) };
}

/**
 * The overview's window from its query: `range` (a named range, or a JSON object with from and
 * optional to), or `from` and optional `to`; neither means last_30_days. Both at once is refused,
 * since either could be meant. `earliest` is the first record's creation time (for all_time).
 */
export function resolveRange(
  query: { range?: string | null; from?: string | null; to?: string | null },
  now: Date,
  earliest: Date | null = null,
): RangeResult {
  const range = query.range?.trim() ? query.range.trim() : null;
  const hasBounds = Boolean(query.from?.trim() || query.to?.trim());
  if (range !== null && hasBounds) return { ok: false, field: 'range', message: 'Send either range or from and to, not both.' };
  if (range === null && !hasBounds) return named(DEFAULT_RANGE, now, earliest);
  if (range === null) return explicit(query.from ?? undefined, query.to ?? undefined, now, (which) => which);
  if (range.startsWith('{')) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(range);
    } catch {
      return { ok: false, field: 'range', message: 'The range is not valid JSON.' };
    }
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed))
      return { ok: false, field: 'range', message: 'The range object must be {"from": …, "to": …}.' };
    const extra = Object.keys(parsed).filter((k) => k !== 'from' && k !== 'to');
    if (extra.length) return { ok: false, field: 'range', message: 'The range object takes only from and to.' };
    const o = parsed as { from?: unknown; to?: unknown };
    return explicit(o.from, o.to, now, () => 'range');
  }
  if ((NAMED_RANGES as readonly string[]).includes(range)) return named(range as NamedRange, now, earliest);
  return { ok: false, field: 'range', message: `The range must be one of ${NAMED_RANGES.join(', ')}, or a JSON object with from and to.` };
}

function named(name: NamedRange, now: Date, earliest: Date | null): RangeResult {
  const window = namedWindow(name, now, earliest);
  return { ok: true, window, bucket: chooseBucket(window.from, window.to) };
}

/** The start of the bucket holding `t`, as date_trunc(bucket, t at time zone 'UTC') computes it. */
export function truncate(t: Date, bucket: Bucket): Date {
  const y = t.getUTCFullYear();
  const m = t.getUTCMonth();
  const d = t.getUTCDate();
  switch (bucket) {
    case 'hour':
      return new Date(Date.UTC(y, m, d, t.getUTCHours()));
    case 'day':
      return new Date(Date.UTC(y, m, d));
    case 'week': {
      const monday = (t.getUTCDay() + 6) % 7;
      return new Date(Date.UTC(y, m, d - monday));
    }
    case 'month':
      return new Date(Date.UTC(y, m, 1));
  }
}

function next(t: Date, bucket: Bucket): Date {
  switch (bucket) {
    case 'hour':
      return new Date(t.getTime() + HOUR);
    case 'day':
      return new Date(Date.UTC(t.getUTCFullYear(), t.getUTCMonth(), t.getUTCDate() + 1));
    case 'week':
      return new Date(Date.UTC(t.getUTCFullYear(), t.getUTCMonth(), t.getUTCDate() + 7));
    case 'month':
      return new Date(Date.UTC(t.getUTCFullYear(), t.getUTCMonth() + 1, 1));
  }
}

/** Every bucket start the window touches, oldest first (so a series lists empty buckets too). */
export function bucketStarts(window: Pick<Window, 'from' | 'to'>, bucket: Bucket): Date[] {
  const out: Date[] = [];
  for (let t = truncate(window.from, bucket); t < window.to; t = next(t, bucket)) out.push(t);
  return out;
}
