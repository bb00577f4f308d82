import { DATA_LIMITS, TYPE_INFO, type FieldType } from './vocabulary.js';

// The SQL expressions a column is read, filtered, sorted and indexed by. A query uses an index only
// when it repeats the index's expression exactly (notes/commerce-and-data-tables.md §4.3), so both
// the index DDL (services/data/store/indexes.ts) and the records query take them from here. Keys and ids are checked against
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

/** A column's statistics object (beside its index; dropped with it). */
export const columnStatisticsName = (columnId: string) => `ds_${safeUuid(columnId).replace(/-/g, '')}`;
/** A table's search expression statistics object (beside its search index). */
export const searchStatisticsName = (tableId: string) => `dsq_${safeUuid(tableId).replace(/-/g, '')}`;

/** What `q` searches: the first six searchable columns' text joined by spaces (an immutable expression). */
export function searchExpression(keys: readonly string[]): string {
  if (!keys.length) throw new Error('no searchable columns');
  return `(${keys.map((k) => `coalesce(data->>'${safeKey(k)}', '')`).join(` || ' ' || `)})`;
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
