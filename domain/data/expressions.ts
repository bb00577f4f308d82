import { DATA_LIMITS, TYPE_INFO, type FieldType } from './vocabulary.js';

// The SQL expressions a column is read, filtered, sorted and indexed by. A query uses an index only
// when it repeats the index's expression exactly (notes/commerce-and-data-tables.md §4.3), so both
// the index workflow and the records query take them from here. Keys and ids are checked against
// their patterns before they are written into SQL text: they come from stored definitions (an
// operator's), never from a request, and these checks make sure of it a second time.

const KEY = new RegExp(DATA_LIMITS.keyPattern);
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export function safeKey(key: string): string {
  if (!KEY.test(key)) throw new Error(`not a column key: ${JSON.stringify(key)}`);
  return key;
}
function safeUuid(id: string): string {
  const s = id.toLowerCase();
  if (!UUID.test(s)) throw new Error(`not a uuid: ${JSON.stringify(id)}`);
  return s;
}

/** The kind of SQL value a column compares and sorts as. */
export type SqlKind = 'numeric' | 'boolean' | 'text';
export function sqlKind(type: FieldType): SqlKind {
  if (TYPE_INFO[type].numeric) return 'numeric';
  if (type === 'boolean') return 'boolean';
  return 'text';
}

/**
 * The typed value of a column of a `data_records` row: numbers as numeric (guarded, so one stray
 * value can never make an insert fail), booleans as boolean, everything else as the stored text
 * (dates and datetimes are fixed-width UTC strings, so text order is time order).
 */
export function valueExpression(key: string, type: FieldType): string {
  const k = safeKey(key);
  switch (sqlKind(type)) {
    case 'numeric':
      return `(CASE WHEN jsonb_typeof(data->'${k}') = 'number' THEN (data->'${k}')::numeric END)`;
    case 'boolean':
      return `(CASE WHEN jsonb_typeof(data->'${k}') = 'boolean' THEN (data->'${k}')::boolean END)`;
    default:
      return `(data->>'${k}')`;
  }
}

/** The partial predicate every index of one table carries (and every query of it repeats). */
export function tablePredicate(tableId: string): string {
  return `deleted_at IS NULL AND table_id = '${safeUuid(tableId)}'::uuid`;
}

/** A column's index name: from its UUID, so a rename of the key never orphans it. */
export const columnIndexName = (columnId: string) => `dx_${safeUuid(columnId).replace(/-/g, '')}`;
/** A table's search (trigram) index name. */
export const searchIndexName = (tableId: string) => `dq_${safeUuid(tableId).replace(/-/g, '')}`;

/**
 * The sort/filter index of a column (§4.4): `((v) IS NULL), (v), seq` over the table's live
 * records. Ascending pages walk it forwards with nulls last; descending pages walk the non-null
 * part backwards, then the null part (so nulls stay last both ways); equality, ranges and `in` use it too.
 */
export function columnIndexDdl(tableId: string, columnId: string, key: string, type: FieldType): string {
  const v = valueExpression(key, type);
  return `CREATE INDEX CONCURRENTLY "${columnIndexName(columnId)}" ON data_records ((${v} IS NULL), ${v}, seq) WHERE ${tablePredicate(tableId)}`;
}

/** A column's statistics object (beside its index; dropped with it). */
export const columnStatisticsName = (columnId: string) => `ds_${safeUuid(columnId).replace(/-/g, '')}`;
/** A table's search expression statistics object (beside its search index). */
export const searchStatisticsName = (tableId: string) => `dsq_${safeUuid(tableId).replace(/-/g, '')}`;

/**
 * Statistics for a column's expression, per table. A partial expression index gives the planner no
 * statistics on its expression (notes §4.6): without them it takes every filter at its default
 * selectivity and prefers a filter's index plus a sort of every match over the sort column's index
 * (345 ms against 1 ms measured at 1M records). Over `(table_id, expression)` the MCV list holds
 * the fractions of each large table's values, so another table storing the same key (every
 * account's `status`) does not dilute them; the expression's own statistics come with it. Made
 * over the whole of data_records (statistics objects take no WHERE), filled by the next ANALYZE.
 */
export function columnStatisticsDdl(columnId: string, key: string, type: FieldType): string {
  return `CREATE STATISTICS IF NOT EXISTS "${columnStatisticsName(columnId)}" (mcv, ndistinct) ON table_id, (${valueExpression(key, type)}) FROM data_records`;
}

/**
 * Statistics for a table's search expression (what `q` is matched against). Expression only: its
 * values are nearly all distinct, so a (table_id, expression) MCV list would hold nothing; the
 * expression's histogram is what a LIKE estimate reads.
 */
export function searchStatisticsDdl(tableId: string, keys: readonly string[]): string {
  return `CREATE STATISTICS IF NOT EXISTS "${searchStatisticsName(tableId)}" ON ${searchExpression(keys)} FROM data_records`;
}

/** Drops a statistics object named by columnStatisticsName or searchStatisticsName. */
export function dropStatisticsDdl(name: string): string {
  if (!/^dsq?_[0-9a-f]{32}$/.test(name)) throw new Error(`not a statistics name: ${name}`);
  return `DROP STATISTICS IF EXISTS "${name}"`;
}

/** What `q` searches: the first six searchable columns' text joined by spaces (an immutable expression). */
export function searchExpression(keys: readonly string[]): string {
  if (!keys.length) throw new Error('no searchable columns');
  return `(${keys.map((k) => `coalesce(data->>'${safeKey(k)}', '')`).join(` || ' ' || `)})`;
}

export function searchIndexDdl(tableId: string, keys: readonly string[]): string {
  return `CREATE INDEX CONCURRENTLY "${searchIndexName(tableId)}" ON data_records USING gin (${searchExpression(keys)} gin_trgm_ops) WHERE ${tablePredicate(tableId)}`;
}

/** The columns `q` searches: the first six text, long_text, phone and email columns by position. */
export function searchColumns<C extends { key: string; type: FieldType; position: number }>(columns: readonly C[]): string[] {
  return [...columns]
    .sort((a, b) => a.position - b.position)
    .filter((c) => TYPE_INFO[c.type].searchable)
    .slice(0, DATA_LIMITS.searchColumns)
    .map((c) => c.key);
}

/** A LIKE pattern matching `q` anywhere, with the user's %, _ and \ taken literally. */
export const containsPattern = (q: string) => `%${q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
export const prefixPattern = (q: string) => `${q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
