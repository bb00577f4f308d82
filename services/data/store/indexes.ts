import type { EntityManager } from '@mikro-orm/postgresql';
import { exec, many, one } from '../../../entities/db.js';
import { tablesOf, type Row } from '../../../entities/database.js';
import {
  columnIndexName,
  columnStatisticsName,
  searchExpression,
  searchIndexName,
  searchStatisticsName,
  tablePredicate,
  valueExpression,
} from '../../../domain/data/expressions.js';
import type { FieldType } from '../../../domain/data/vocabulary.js';

// Index state and DDL of data tables (notes/commerce-and-data-tables.md §4.7): the index_status
// moves of data_columns and search_index_status moves of data_tables (each UPDATE guarded by the
// state it expects, so a request that lost a race changes nothing), the catalog reads of an index
// or statistics object on data_records, and the DDL text that builds them from the expressions of
// domain/data/expressions.ts (which the records query repeats exactly, so the indexes apply).

// ---- DDL -----------------------------------------------------------------------------------------

/**
 * The sort/filter index of a column (§4.4): `((v) IS NULL), (v), seq` over the table's live
 * records. Ascending pages walk it forwards with nulls last; descending pages walk the non-null
 * part backwards, then the null part (so nulls stay last both ways); equality, ranges and `in` use it too.
 */
export function columnIndexDdl(tableId: string, columnId: string, key: string, type: FieldType): string {
  const v = valueExpression(key, type);
  return `CREATE INDEX CONCURRENTLY "${columnIndexName(columnId)}" ON data_records ((${v} IS NULL), ${v}, seq) WHERE ${tablePredicate(tableId)}`;
}

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

export function searchIndexDdl(tableId: string, keys: readonly string[]): string {
  return `CREATE INDEX CONCURRENTLY "${searchIndexName(tableId)}" ON data_records USING gin (${searchExpression(keys)} gin_trgm_ops) WHERE ${tablePredicate(tableId)}`;
}

/** What fills every statistics object on the records (a fixed sample, whatever the table's size). */
export const ANALYZE_RECORDS = 'ANALYZE data_records';

// ---- The catalog ---------------------------------------------------------------------------------

/** Whether the index on the records is valid (built and usable); null when there is none. */
export async function indexValidity(em: EntityManager, indexName: string): Promise<boolean | null> {
  const row = await one<{ valid: boolean }>(
    em,
    `select (i.indisvalid and i.indisready) as valid from pg_index i join pg_class c on c.oid = i.indexrelid
      where c.relname = ? and c.relnamespace = (select relnamespace from pg_class where oid = 'data_records'::regclass)`,
    [indexName],
  );
  return row ? row.valid : null;
}

/** Whether the statistics object on the records has been analyzed; null when there is none. pg_stats_ext lists analyzed objects only. */
export async function statisticsFilled(em: EntityManager, name: string): Promise<boolean | null> {
  const row = await one<{ filled: boolean }>(
    em,
    `select exists (select 1 from pg_stats_ext e where e.statistics_name = s.stxname and e.statistics_schemaname = n.nspname) as filled
       from pg_statistic_ext s join pg_namespace n on n.oid = s.stxnamespace
      where s.stxname = ? and s.stxrelid = 'data_records'::regclass`,
    [name],
  );
  return row ? row.filled : null;
}

// ---- Column indexes ------------------------------------------------------------------------------

/** What a column index build needs of the column (null when the column is gone). */
export function indexedColumn(em: EntityManager, accountId: number, tableId: string, columnId: string) {
  return tablesOf(em, 'data')
    .selectFrom('data_columns')
    .select(['key', 'type', 'indexed', 'index_status'])
    .where('id', '=', columnId)
    .where('table_id', '=', tableId)
    .where('account_id', '=', accountId)
    .executeTakeFirst();
}

/** Marks the columns' indexes dropping (the index activity drops only an index its row says is dropping, or whose row is gone). */
export async function markColumnsDropping(em: EntityManager, columnIds: string[]): Promise<void> {
  await exec(em, `update data_columns set indexed = false, index_status = 'dropping', updated_at = now() where id = any(?::uuid[])`, [
    columnIds,
  ]);
}

/** A drop asked for: the column's index says dropping (unless it already does). */
export async function askColumnIndexDrop(em: EntityManager, columnId: string): Promise<void> {
  await exec(
    em,
    `update data_columns set index_status = 'dropping', updated_at = now() where id = ? and index_status is distinct from 'dropping'`,
    [columnId],
  );
}

/** pending, building or ready → building, with the index's name; false when the column moved on. */
export async function startColumnIndexBuild(em: EntityManager, columnId: string, indexName: string): Promise<boolean> {
  return (
    (await exec(
      em,
      `update data_columns set index_status = 'building', index_name = ?, index_error = null, index_progress = null, updated_at = now()
        where id = ? and indexed and index_status in ('pending', 'building', 'ready')`,
      [indexName, columnId],
    )) > 0
  );
}

/** A building column's progress (null clears it). */
export async function columnIndexProgress(em: EntityManager, columnId: string, progress: object | null): Promise<void> {
  await exec(em, `update data_columns set index_progress = ?::jsonb where id = ? and index_status = 'building'`, [
    progress ? JSON.stringify(progress) : null,
    columnId,
  ]);
}

/** building → ready; false when the column moved on. */
export async function columnIndexReady(em: EntityManager, columnId: string): Promise<boolean> {
  return (
    (await exec(
      em,
      `update data_columns set index_status = 'ready', index_error = null, index_progress = null, updated_at = now()
        where id = ? and index_status = 'building'`,
      [columnId],
    )) > 0
  );
}

/** pending or building → failed, with why. */
export async function columnIndexFailed(em: EntityManager, columnId: string, error: string): Promise<void> {
  await exec(
    em,
    `update data_columns set index_status = 'failed', index_error = ?, index_progress = null, index_name = null, updated_at = now()
      where id = ? and index_status in ('pending', 'building')`,
    [error, columnId],
  );
}

/** dropping → no index (indexed false). */
export async function columnIndexDropped(em: EntityManager, columnId: string): Promise<void> {
  await exec(
    em,
    `update data_columns set index_status = null, indexed = false, index_name = null, index_progress = null, index_error = null, updated_at = now()
      where id = ? and index_status = 'dropping'`,
    [columnId],
  );
}

/** Column indexes left pending or dropping for longer than `olderThanSeconds` (a request lost on its way), oldest first. */
export function owedColumnIndexes(em: EntityManager, olderThanSeconds: number) {
  return many<Pick<Row<'data', 'data_columns'>, 'account_id' | 'table_id' | 'id' | 'key'> & { index_status: 'pending' | 'dropping' }>(
    em,
    `select account_id, table_id, id, key, index_status from data_columns
      where index_status in ('pending', 'dropping') and updated_at < now() - make_interval(secs => ?)
      order by updated_at limit 100`,
    [olderThanSeconds],
  );
}

// ---- Search indexes ------------------------------------------------------------------------------

/** The table's search index state (null when the table is gone). */
export function searchIndexState(em: EntityManager, accountId: number, tableId: string) {
  return one<Pick<Row<'data', 'data_tables'>, 'search_index_status' | 'search_index_columns'>>(
    em,
    'select search_index_status, search_index_columns from data_tables where id = ? and account_id = ?',
    [tableId, accountId],
  );
}

/** Key, type and position of the table's columns (which of them `q` searches). */
export function searchableColumns(em: EntityManager, tableId: string) {
  return tablesOf(em, 'data').selectFrom('data_columns').select(['key', 'type', 'position']).where('table_id', '=', tableId).execute();
}

/** Asks for the search index: pending (columns to cover) or dropping (none left). */
export async function askSearchIndex(em: EntityManager, tableId: string, status: 'pending' | 'dropping'): Promise<void> {
  await exec(em, 'update data_tables set search_index_status = ?, search_index_error = null, updated_at = now() where id = ?', [
    status,
    tableId,
  ]);
}

/** Search indexes left pending or dropping for longer than `olderThanSeconds`, oldest first. */
export function owedSearchIndexes(em: EntityManager, olderThanSeconds: number) {
  return many<Pick<Row<'data', 'data_tables'>, 'account_id' | 'id'>>(
    em,
    `select account_id, id from data_tables
      where search_index_status in ('pending', 'dropping') and updated_at < now() - make_interval(secs => ?)
      order by updated_at limit 100`,
    [olderThanSeconds],
  );
}

/** A search index with no columns left to cover: dropping. */
export async function searchIndexDropping(em: EntityManager, tableId: string): Promise<void> {
  await exec(em, `update data_tables set search_index_status = 'dropping' where id = ? and search_index_status is not null`, [tableId]);
}

/** dropping (or none) → no search index. */
export async function searchIndexDropped(em: EntityManager, tableId: string): Promise<void> {
  await exec(
    em,
    `update data_tables set search_index_status = null, search_index_columns = null, search_index_error = null, updated_at = now()
      where id = ? and (search_index_status = 'dropping' or search_index_status is null)`,
    [tableId],
  );
}

/** → building over the columns `columnsJson`. */
export async function searchIndexBuilding(em: EntityManager, tableId: string, columnsJson: string): Promise<void> {
  await exec(
    em,
    `update data_tables set search_index_status = 'building', search_index_columns = ?::jsonb, search_index_error = null, updated_at = now()
      where id = ?`,
    [columnsJson, tableId],
  );
}

const BUILDING_GUARD = `where id = ? and search_index_status = 'building' and search_index_columns = ?::jsonb`;

/** building (over the same columns) → failed, with why. */
export async function searchIndexFailed(em: EntityManager, tableId: string, columnsJson: string, error: string | undefined): Promise<void> {
  await exec(em, `update data_tables set search_index_status = 'failed', search_index_error = ?, updated_at = now() ${BUILDING_GUARD}`, [
    error,
    tableId,
    columnsJson,
  ]);
}

/** building (over the same columns) → ready; false when the table moved on. */
export async function searchIndexReady(em: EntityManager, tableId: string, columnsJson: string): Promise<boolean> {
  return (
    (await exec(em, `update data_tables set search_index_status = 'ready', updated_at = now() ${BUILDING_GUARD}`, [tableId, columnsJson])) >
    0
  );
}
