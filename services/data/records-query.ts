import { sql, type RawBuilder } from 'kysely';
import type { RequestContext } from '../platform/context.js';
import { DomainError, notSupported } from '../platform/errors.js';
import { StaleDefinition, definitionCheck, withTableDefinition, type LoadedTable } from './tables.js';
import { presentRecords, type RecordView } from './present.js';
import { cappedCount, estimatedCount, recordsPage, type Db, type PageRow } from './store/records-query.js';
import {
  DATA_LIMITS,
  TYPE_INFO,
  containsPattern,
  masksFor,
  prefixPattern,
  searchColumns,
  searchExpression,
  sqlKind,
  valueExpression,
  type FieldType,
} from '../../domain/data/index.js';
import { FilterError, leafColumns, parseFilter, type FilterLeaf, type FilterNode, type FilterScalar } from '../../domain/data/filter.js';
import {
  canonical,
  decodeCursor,
  encodeCursor,
  queryHash,
  type CursorKey,
  type CursorPosition,
  type SortValueKind,
} from '../../domain/data/cursor.js';
import { openCursor, recordsCursorBinding, sealCursor } from './cursor-seal.js';

// The records list (Endpoints > Data tables, Records list query): the condition tree, q, a keyset
// walk in the requested order with nulls last both ways, and an optional capped count. Every
// statement carries the table's partial predicate (table_id, deleted_at is null) and repeats the
// column expressions of domain/data/expressions.ts exactly, so the per-column and search indexes
// apply (notes/commerce-and-data-tables.md §4.3-4.6). Column expressions come from stored
// definitions and are pattern-checked there; every value from the request is a bound parameter.
// Field masks hold here too: a column masked for the caller is never a condition, a sort key or a
// searched column of its query (else its values could be read back a digit at a time from which
// rows match), and the cursor leaves the service sealed (cursor-seal.ts).

export type ListRecordsQuery = {
  filter?: string;
  q?: string;
  sort?: string;
  dir?: 'asc' | 'desc';
  limit?: number;
  cursor?: string;
  with_count?: boolean;
};

export type RecordPage = {
  records: RecordView[];
  next_cursor: string | null;
  has_more: boolean;
  count: number | null;
  /** Only when counted: false when the count is the planner's estimate (more than countCap rows). */
  count_is_exact?: boolean;
  served_at: string;
};

type Sql = RawBuilder<unknown>;

const invalid = (field: string, message: string) =>
  new DomainError('invalid', message, { code: 'validation_error', field, errors: { [field]: [message] } });

/** A filter or sort naming a column masked for the caller: 403, naming the column (field and details.column). */
const maskedColumn = (column: string, parameter: 'filter' | 'sort') =>
  new DomainError(
    'forbidden',
    parameter === 'filter'
      ? `Column ${column} is masked for you: it cannot be a filter condition.`
      : `Column ${column} is masked for you: records cannot be sorted by it.`,
    { code: 'permission_denied', field: column, details: { reason: 'masked_column', column, parameter } },
  );

const cursorBinding = (t: LoadedTable) => recordsCursorBinding(t.table.account_id, t.table.id);

/** The page size the contract asks for: default 50, anything else clamped into 1..200. */
export function clampLimit(limit: number | undefined): number {
  if (limit === undefined || limit === null) return DATA_LIMITS.pageDefault;
  return Math.min(DATA_LIMITS.pageMax, Math.max(1, Math.trunc(limit)));
}

export function listRecords(rc: RequestContext, tableRef: string, query: ListRecordsQuery): Promise<RecordPage> {
  return withTableDefinition(rc, tableRef, 'view', (t) => listPage(rc, t, query));
}

async function listPage(rc: RequestContext, t: LoadedTable, query: ListRecordsQuery): Promise<RecordPage> {
  const plan = planQuery(t, query);
  const db: Db = rc.em.getKysely();
  const limit = clampLimit(query.limit);

  const rows = await fetchPage(db, plan, limit + 1);
  // The page was read in the same statement as the table's definition_version: built on the one it read, or run again.
  const version = String(t.table.definition_version);
  if (!rows.length) await definitionCheck(rc, t);
  else if (rows.some((r) => r.definition_version !== version)) throw new StaleDefinition();
  const hasMore = rows.length > limit;
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  const next =
    hasMore && last
      ? sealCursor(
          encodeCursor(plan.key, { last: last.sort_value, seq: String(last.seq), nulls: plan.sort.nullable && last.sort_value === null }),
          cursorBinding(t),
        )
      : null;

  let count: number | null = null;
  let exact: boolean | undefined;
  if (query.with_count === true) {
    // A first page that holds every match is its own exact count: no statement for it.
    if (!plan.position && !hasMore) ({ count, exact } = { count: rows.length, exact: true });
    else ({ count, exact } = await countRows(db, plan.where));
  }

  return {
    records: await presentRecords(rc, t, page),
    next_cursor: next,
    has_more: hasMore,
    count,
    ...(exact === undefined ? {} : { count_is_exact: exact }),
    served_at: new Date().toISOString(),
  };
}

// ---- the plan ----------------------------------------------------------------------------------

interface SortPlan {
  key: string;
  /** The SQL expression rows are ordered by (an index expression, written exactly as indexed). */
  expr: string;
  /** Its value as text for the cursor, at full precision. */
  text: string;
  /** The SQL type a cursor's value is cast back to. */
  cast: string;
  kind: SortValueKind;
  /** User columns may be empty (nulls last both ways); the timestamps never are. */
  nullable: boolean;
}

interface QueryPlan {
  tableId: string;
  /** The table predicate, the filter and q: every row of the answer matches it. */
  where: Sql;
  sort: SortPlan;
  dir: 'asc' | 'desc';
  key: CursorKey;
  position: CursorPosition | null;
}

/** Reads and checks the query against the table: 422 and 501 refusals happen here, before any row is read. */
export function planQuery(t: LoadedTable, query: ListRecordsQuery): QueryPlan {
  let tree: FilterNode | null;
  let treeJson: unknown = null;
  try {
    tree = parseFilter(query.filter, t.columns);
    if (tree && typeof query.filter === 'string') treeJson = canonical(JSON.parse(query.filter));
  } catch (e) {
    if (!(e instanceof FilterError)) throw e;
    if (e.kind === 'invalid') {
      const messages = e.problems.filter((p) => p.kind === 'invalid').map((p) => p.message);
      throw new DomainError('invalid', messages[0], { code: 'validation_error', field: 'filter', errors: { filter: messages } });
    }
    const p = e.problems[0];
    throw notSupported(p.message, 'operator_not_supported', { reason: 'operator_not_supported', column: p.column, op: p.op });
  }
  const masks = masksFor(t.table.masks ?? [], t.caller);
  const masked = leafColumns(tree).find((k) => masks.has(k));
  if (masked) throw maskedColumn(masked, 'filter');
  const dir = query.dir ?? 'desc';
  const sort = sortPlan(t, query.sort, masks);
  const q = typeof query.q === 'string' && query.q.trim() ? query.q : null;

  const parts: Sql[] = [sql`table_id = ${t.table.id}::uuid`, sql`deleted_at is null`];
  if (tree) parts.push(compileNode(tree));
  if (q) {
    const search = searchSql(t, q, masks);
    if (search) parts.push(search);
  }
  const key: CursorKey = { sort: sort.key, dir, hash: queryHash([t.table.id, treeJson, q, sort.key, dir]) };
  const position = decodeCursor(openCursor(query.cursor, cursorBinding(t)), key, sort.kind);
  return { tableId: t.table.id, where: sql.join(parts, sql` and `), sort, dir, key, position };
}

function sortPlan(t: LoadedTable, requested: string | undefined, masks: ReadonlyMap<string, unknown>): SortPlan {
  const key = requested === undefined || requested === '' ? '$created_at' : requested;
  if (key === '$created_at' || key === '$updated_at') {
    const col = key === '$created_at' ? 'created_at' : 'updated_at';
    return {
      key,
      expr: col,
      text: `to_char(${col} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`,
      cast: 'timestamptz',
      kind: 'timestamp',
      nullable: false,
    };
  }
  const column = t.columns.find((c) => c.key === key);
  if (!column) {
    throw invalid(
      'sort',
      `The sort must be a column of the table, $created_at or $updated_at; ${JSON.stringify(key.slice(0, 64))} is not.`,
    );
  }
  if (!TYPE_INFO[column.type].sortable) throw invalid('sort', `Column ${key} (${column.type}) cannot be sorted.`);
  if (masks.has(key)) throw maskedColumn(key, 'sort');
  // The rule rests on the record count, which a cached definition does not keep current: decided on a fresh one.
  if (column.index_status !== 'ready' && t.cached) throw new StaleDefinition();
  if (t.table.records_count >= DATA_LIMITS.sortIndexThreshold && column.index_status !== 'ready') {
    throw notSupported(
      `Sorting by ${key} needs a ready index: the table holds ${DATA_LIMITS.sortIndexThreshold} or more records and the column's index is ${column.index_status ?? 'not requested'}.`,
      'sort_needs_index',
      { reason: 'sort_needs_index', column: key, index_status: column.index_status, threshold: DATA_LIMITS.sortIndexThreshold },
    );
  }
  const expr = valueExpression(column.key, column.type);
  const kind = sqlKind(column.type);
  return { key, expr, text: `(${expr})::text`, cast: kind, kind, nullable: true };
}

// ---- the filter ---------------------------------------------------------------------------------

/** A parsed condition tree as a boolean SQL expression over data_records (values bound); for other readers of records too. */
export const compileFilter = (node: FilterNode): Sql => compileNode(node);

function compileNode(node: FilterNode): Sql {
  if (node.kind === 'leaf') return compileLeaf(node);
  // An empty group is no condition at all, whichever its kind.
  if (!node.nodes.length) return sql`true`;
  return sql`(${sql.join(node.nodes.map(compileNode), node.kind === 'all' ? sql` and ` : sql` or `)})`;
}

const scalars = (v: unknown) => v as FilterScalar[];
const pair = (v: unknown) => v as [FilterScalar, FilterScalar];

function compileLeaf(leaf: FilterLeaf): Sql {
  const { column, op, value } = leaf;
  switch (column.system) {
    case '$id':
      return op === 'in' ? sql`id = any(${scalars(value)}::uuid[])` : sql`id = ${value}::uuid`;
    case '$source':
      if (op === 'in') return sql`source = any(${scalars(value)}::text[])`;
      if (op === 'starts_with') return sql`source ilike ${prefixPattern(String(value))}`;
      return sql`source = ${value}`;
    case '$created_at':
    case '$updated_at':
      return timestampLeaf(sql.raw(column.system === '$created_at' ? 'created_at' : 'updated_at'), leaf);
    case null:
      break;
  }
  const jsonb = sql.raw(`(data->'${column.key}')`);
  if (column.type === 'multi_select' || column.type === 'file' || column.type === 'unknown') {
    // Stored as arrays (or documents): empty is absent, null, "" or [].
    const empty = sql`(coalesce(${jsonb}, 'null'::jsonb) in ('null'::jsonb, '""'::jsonb, '[]'::jsonb))`;
    if (op === 'is_empty') return empty;
    if (op === 'is_not_empty') return sql`not ${empty}`;
    if (op === 'contains') return sql`(${jsonb} @> jsonb_build_array(${value}::text))`;
    return sql`(${jsonb} ?| ${scalars(value)}::text[])`;
  }
  const v = sql.raw(valueExpression(column.key, column.type));
  const kind = sqlKind(column.type);
  const cast = sql.raw(kind);
  if (op === 'is_empty') return kind === 'text' ? sql`(${v} is null or ${v} = '')` : sql`(${v} is null)`;
  if (op === 'is_not_empty') return kind === 'text' ? sql`(${v} is not null and ${v} <> '')` : sql`(${v} is not null)`;
  switch (op) {
    case 'equals':
      return sql`${v} = ${value}::${cast}`;
    case 'not_equals':
      // Rows without a value are not equal to anything either.
      return sql`${v} is distinct from ${value}::${cast}`;
    case 'contains':
      return sql`${v} ilike ${containsPattern(String(value))}`;
    case 'starts_with':
      return sql`${v} ilike ${prefixPattern(String(value))}`;
    case 'greater_than':
      return sql`${v} > ${value}::${cast}`;
    case 'less_than':
      return sql`${v} < ${value}::${cast}`;
    case 'between': {
      const [a, b] = pair(value);
      return sql`${v} between ${a}::${cast} and ${b}::${cast}`;
    }
    case 'in':
      return sql`${v} = any(${scalars(value)}::${sql.raw(`${kind}[]`)})`;
  }
}

/**
 * Records show their timestamps to the millisecond while storing microseconds: a filter value is
 * a millisecond, so equals covers that whole millisecond and greater_than starts after it.
 */
function timestampLeaf(col: Sql, leaf: FilterLeaf): Sql {
  const after = (t: unknown) => sql`${t}::timestamptz + interval '1 millisecond'`;
  switch (leaf.op) {
    case 'equals':
      return sql`(${col} >= ${leaf.value}::timestamptz and ${col} < ${after(leaf.value)})`;
    case 'not_equals':
      return sql`not (${col} >= ${leaf.value}::timestamptz and ${col} < ${after(leaf.value)})`;
    case 'greater_than':
      return sql`${col} >= ${after(leaf.value)}`;
    case 'less_than':
      return sql`${col} < ${leaf.value}::timestamptz`;
    case 'between': {
      const [a, b] = pair(leaf.value);
      return sql`(${col} >= ${a}::timestamptz and ${col} < ${after(b)})`;
    }
    default:
      throw new Error(`operator ${leaf.op} reached a timestamp column`);
  }
}

/**
 * q over the first six searchable columns: through the table's trigram index when it is ready and
 * covers exactly these columns (same expression as the index), else column by column. Columns
 * masked for the caller are left out of its search; with the index ready, the indexed expression
 * still narrows the rows (a match in one column is a match in the joined text) and the caller's
 * own columns decide, one by one, so that a q spanning a visible and a masked value matches
 * nothing. A caller for whom every searched column is masked searches nothing: q is ignored, as
 * on a table without searchable columns.
 */
function searchSql(t: LoadedTable, q: string, masks: ReadonlyMap<string, unknown>): Sql | null {
  const keys = searchColumns(t.columns);
  const own = keys.filter((k) => !masks.has(k));
  if (!own.length) return null;
  const pattern = containsPattern(q);
  const indexed = t.table.search_index_columns ?? [];
  const ready = t.table.search_index_status === 'ready' && indexed.length === keys.length && indexed.every((k, i) => k === keys[i]);
  const joined = sql`${sql.raw(searchExpression(keys))} ilike ${pattern}`;
  if (ready && own.length === keys.length) return joined;
  const each = sql`(${sql.join(
    own.map((k) => sql`${sql.raw(valueExpression(k, 'text' as FieldType))} ilike ${pattern}`),
    sql` or `,
  )})`;
  return ready ? sql`(${joined} and ${each})` : each;
}

// ---- the keyset walk ----------------------------------------------------------------------------

function select(db: Db, plan: QueryPlan, cond: Sql | null, order: string, limit: number): Promise<PageRow[]> {
  return recordsPage(db, plan.tableId, cond ? sql`${plan.where} and ${cond}` : plan.where, plan.sort.text, order, limit);
}

/**
 * One page (`want` = limit + 1 rows, so the last tells whether there is more). Ascending walks the
 * column index `((v) IS NULL), (v), seq` forwards, nulls last by the first key. Descending walks
 * the non-null part backwards (`ORDER BY (v IS NULL) DESC, v DESC, seq DESC` is that index read
 * backwards, the leading key fixed by the condition), then tops up from the null part, newest seq
 * first, so nulls stay last without an index of their own.
 */
async function fetchPage(db: Db, plan: QueryPlan, want: number): Promise<PageRow[]> {
  const { sort, dir, position: at } = plan;
  const v = sql.raw(sort.expr);
  const cast = sql.raw(sort.cast);
  const last = (p: CursorPosition) => sql`${p.last}::${cast}`;
  const seq = (p: CursorPosition) => sql`${p.seq}::bigint`;

  if (!sort.nullable) {
    const cmp = sql.raw(dir === 'desc' ? '<' : '>');
    const cond = at ? sql`(${v}, seq) ${cmp} (${last(at)}, ${seq(at)})` : null;
    return select(db, plan, cond, `${sort.expr} ${dir}, seq ${dir}`, want);
  }

  const isNull = `(${sort.expr} is null)`;
  if (dir === 'asc') {
    const order = `${isNull}, ${sort.expr}, seq`;
    if (!at) return select(db, plan, null, order, want);
    if (at.nulls) return select(db, plan, sql`${sql.raw(isNull)} and seq > ${seq(at)}`, order, want);
    return select(db, plan, sql`(${sql.raw(isNull)}, ${v}, seq) > (false, ${last(at)}, ${seq(at)})`, order, want);
  }

  const order = `${isNull} desc, ${sort.expr} desc, seq desc`;
  let rows: PageRow[] = [];
  if (!at?.nulls) {
    // `(v IS NULL) < true` rather than `= false`: the planner rewrites the latter to `v IS NOT NULL`, which no longer names the index's first key.
    const cond = at ? sql`(${sql.raw(isNull)}, ${v}, seq) < (false, ${last(at)}, ${seq(at)})` : sql`${sql.raw(isNull)} < true`;
    rows = await select(db, plan, cond, order, want);
    if (rows.length >= want) return rows;
  }
  const nullCond = at?.nulls ? sql`${sql.raw(isNull)} and seq < ${seq(at)}` : sql.raw(isNull);
  return rows.concat(await select(db, plan, nullCond, order, want - rows.length));
}

// ---- with_count ---------------------------------------------------------------------------------

/** Exact up to countCap (a capped count: at most countCap + 1 rows are read); above it the planner's estimate. */
async function countRows(db: Db, where: Sql): Promise<{ count: number; exact: boolean }> {
  const cap = DATA_LIMITS.countCap;
  const n = await cappedCount(db, where, cap);
  if (n <= cap) return { count: n, exact: true };
  const estimate = await estimatedCount(db, where);
  // More than the cap was counted: an estimate below it would contradict what was seen.
  return { count: Math.max(estimate, cap + 1), exact: false };
}
