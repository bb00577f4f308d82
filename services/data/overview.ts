import type { RequestContext } from '../platform/context.js';
import { DomainError } from '../platform/errors.js';
import { masksFor, valueExpression, type ColumnDef } from '../../domain/data/index.js';
import { bucketStarts, resolveRange, type Bucket, type Window } from '../../domain/data/ranges.js';
import { RANGE_BOUND_PATTERN } from '../../domain/platform/date-time.js';
import { columnsOf, dataCaller, type TableRow } from './tables.js';
import { groupObject, groupObjectSchema, loadGroup } from './groups.js';
import { aggregatesInWindow, countWithAggregates, createdPerBucket, firstRecordAt, windowActivity } from './store/overview.js';
import { iso } from '../platform/time.js';

// GET /data/groups/{group}/overview: what a dashboard of a group shows for a window. Every figure
// is one set-based statement over data_records (never a query per record or per bucket), bounded by
// the window on the indexes every table has ((table_id, created_at) and (table_id, updated_at) on
// live records). Column keys reach SQL only from stored definitions, through valueExpression,
// which checks them again; the window, the bucket unit and the table ids travel as bind parameters.
// Counts are of live records (a deleted record leaves every figure, as it leaves records_count).

export const overviewQuerySchema = {
  type: 'object',
  properties: {
    range: {
      type: 'string',
      maxLength: 400,
      description:
        'a named range (today, yesterday, last_7_days, last_30_days, last_90_days, this_month, last_month, this_year, all_time) ' +
        'or a JSON object {"from": …, "to": …}; default last_30_days',
    },
    from: {
      type: 'string',
      maxLength: 64,
      pattern: RANGE_BOUND_PATTERN,
      description: 'instead of range: a date (YYYY-MM-DD, UTC) or a date and time with a timezone',
    },
    to: {
      type: 'string',
      maxLength: 64,
      pattern: RANGE_BOUND_PATTERN,
      description: 'with from: the end (a date includes that whole day); default now',
    },
  },
} as const;

const count = { type: 'integer' } as const;
const uuid = { type: 'string', format: 'uuid' } as const;
export const overviewAnswerSchema = {
  type: 'object',
  required: ['group', 'window', 'bucket', 'totals', 'tables', 'headlines', 'series', 'relationships'],
  properties: {
    group: groupObjectSchema,
    window: {
      type: 'object',
      required: ['from', 'to', 'range'],
      description: 'the half-open window [from, to), in UTC',
      properties: {
        from: { type: 'string', format: 'date-time' },
        to: { type: 'string', format: 'date-time' },
        range: { type: 'string', description: 'the named range, or custom' },
      },
    },
    bucket: { enum: ['hour', 'day', 'week', 'month'], description: 'chosen from the window length' },
    totals: {
      type: 'object',
      properties: {
        records: { ...count, description: 'live records of the member tables' },
        created_in_window: count,
        updated_in_window: { ...count, description: 'live records changed after their creation within the window' },
      },
    },
    tables: {
      type: 'array',
      description: 'member-table cards',
      items: {
        type: 'object',
        properties: {
          id: uuid,
          name: { type: 'string' },
          records_count: count,
          created_in_window: count,
          updated_in_window: count,
          last_updated_at: { type: ['string', 'null'], format: 'date-time' },
        },
      },
    },
    headlines: {
      type: 'array',
      description: 'sum and average of each number and currency column over the records created in the window (masked columns left out)',
      items: {
        type: 'object',
        properties: {
          table_id: uuid,
          column: { type: 'string' },
          label: { type: 'string' },
          currency: { type: ['string', 'null'] },
          sum: { type: 'number' },
          avg: { type: ['number', 'null'] },
          count: { ...count, description: 'records holding a value' },
        },
      },
    },
    series: {
      type: 'array',
      description: 'records created per bucket, oldest first, empty buckets included',
      items: {
        type: 'object',
        properties: {
          bucket_start: { type: 'string', format: 'date-time' },
          created: { ...count, description: 'all member tables' },
          by_table: { type: 'object', additionalProperties: count, description: 'per member table id' },
        },
      },
    },
    relationships: {
      type: 'array',
      description: 'relation columns between member tables: live records of from_table linked and not linked',
      items: {
        type: 'object',
        properties: { from_table: uuid, column: { type: 'string' }, to_table: uuid, linked: count, unlinked: count },
      },
    },
  },
} as const;

const num = (v: unknown) => (v === null || v === undefined ? 0 : Number(v));

export async function groupOverview(rc: RequestContext, ref: string, query: { range?: string; from?: string; to?: string }) {
  const v = await loadGroup(rc, ref);
  const tables = v.tables;
  const ids = tables.map((t) => t.id);
  const now = new Date();
  const earliest = query.range?.trim() === 'all_time' ? await earliestRecord(rc, ids) : null;
  const resolved = resolveRange(query, now, earliest);
  if (!resolved.ok)
    throw new DomainError('invalid', resolved.message, {
      code: 'validation_error',
      field: resolved.field,
      errors: { [resolved.field]: [resolved.message] },
    });
  const { window, bucket } = resolved;

  const columns = new Map<string, ColumnDef[]>();
  for (const t of tables) columns.set(t.id, await columnsOf(rc, t.id));

  const cards = await tableCards(rc, tables, window);
  const series = await createdSeries(rc, ids, window, bucket);
  const headlines = [];
  for (const t of tables) headlines.push(...(await amountHeadlines(rc, t, columns.get(t.id)!, window)));
  const relationships = [];
  for (const t of tables) relationships.push(...(await relationSummaries(rc, t, columns.get(t.id)!, new Set(ids))));

  return {
    group: groupObject(v),
    window: { from: iso(window.from), to: iso(window.to), range: window.range },
    bucket,
    totals: {
      records: tables.reduce((s, t) => s + t.records_count, 0),
      created_in_window: cards.reduce((s, c) => s + c.created_in_window, 0),
      updated_in_window: cards.reduce((s, c) => s + c.updated_in_window, 0),
    },
    tables: cards,
    headlines,
    series,
    relationships,
  };
}

/** The first live record's creation time over the tables (all_time starts there): one index probe per table. */
async function earliestRecord(rc: RequestContext, ids: string[]): Promise<Date | null> {
  const first = await firstRecordAt(rc.em, ids);
  return first ? new Date(first) : null;
}

async function tableCards(rc: RequestContext, tables: TableRow[], w: Window) {
  const rows = await windowActivity(
    rc.em,
    tables.map((t) => t.id),
    w.from,
    w.to,
  );
  const byId = new Map(rows.map((r) => [r.table_id, r]));
  return tables.map((t) => {
    const r = byId.get(t.id);
    return {
      id: t.id,
      name: t.name,
      records_count: t.records_count,
      created_in_window: num(r?.created),
      updated_in_window: num(r?.updated),
      last_updated_at: r?.last_updated_at ? iso(r.last_updated_at) : null,
    };
  });
}

async function createdSeries(rc: RequestContext, ids: string[], w: Window, bucket: Bucket) {
  // date_trunc over the UTC wall clock, read back as epoch milliseconds: the same instants bucketStarts lists.
  const rows = await createdPerBucket(rc.em, bucket, ids, w.from, w.to);
  const counts = new Map<number, Record<string, number>>();
  for (const r of rows) {
    const at = Number(r.at);
    const entry = counts.get(at) ?? counts.set(at, {}).get(at)!;
    entry[r.table_id] = num(r.n);
  }
  return bucketStarts(w, bucket).map((start) => {
    const found = counts.get(start.getTime()) ?? {};
    const byTable = Object.fromEntries(ids.map((id) => [id, found[id] ?? 0]));
    return {
      bucket_start: start.toISOString(),
      created: Object.values(byTable).reduce((s, x) => s + x, 0),
      by_table: byTable,
    };
  });
}

/** Sum and average of each number and currency column the caller sees unmasked, over records created in the window: one statement per table. */
async function amountHeadlines(rc: RequestContext, t: TableRow, columns: ColumnDef[], w: Window) {
  const masked = masksFor(t.masks ?? [], dataCaller(rc));
  const amounts = columns.filter((c) => (c.type === 'number' || c.type === 'currency') && !masked.has(c.key));
  if (!amounts.length) return [];
  const select = amounts
    .map((c, i) => {
      const e = valueExpression(c.key, c.type);
      return `sum(${e}) as s${i}, round(avg(${e}), 4) as a${i}, count(${e}) as n${i}`;
    })
    .join(', ');
  const row = await aggregatesInWindow(rc.em, select, t.id, w.from, w.to);
  return amounts.map((c, i) => ({
    table_id: t.id,
    column: c.key,
    label: c.label,
    currency: c.type === 'currency' ? (c.config.currency ?? 'TZS') : null,
    sum: num(row?.[`s${i}`]),
    avg: row?.[`a${i}`] === null || row?.[`a${i}`] === undefined ? null : Number(row[`a${i}`]),
    count: num(row?.[`n${i}`]),
  }));
}

/** Relation columns of a member table pointing at another member table: live records linked and not. */
async function relationSummaries(rc: RequestContext, t: TableRow, columns: ColumnDef[], members: Set<string>) {
  const relations = columns.filter((c) => c.type === 'relation' && typeof c.config.table_id === 'string' && members.has(c.config.table_id));
  if (!relations.length) return [];
  const select = relations
    .map((c, i) => {
      const e = valueExpression(c.key, c.type);
      return `count(*) filter (where ${e} is not null and ${e} <> '') as l${i}`;
    })
    .join(', ');
  const row = await countWithAggregates(rc.em, select, t.id);
  const total = num(row?.total);
  return relations.map((c, i) => {
    const linked = num(row?.[`l${i}`]);
    return { from_table: t.id, column: c.key, to_table: c.config.table_id!, linked, unlinked: total - linked };
  });
}
