import { sql, type QueryExecutorProvider, type RawBuilder } from 'kysely';
import type { StoredRecord } from './records.js';

// The records list's statements (services/data/records-query.ts plans them): the page and the
// capped count over data_records. The condition, the order and the sort value are built by the
// planner from the column expressions of domain/data/expressions.ts, values bound; the text is
// kept exactly as it is, so each shape keeps its plans and the per-column indexes apply.

type Sql = RawBuilder<unknown>;
export type Db = QueryExecutorProvider;

/** A page row: the record, its sort value as text, and the table's definition_version read by the same statement. */
export type PageRow = StoredRecord & { sort_value: string | null; definition_version: string };

/** Live records of the table matching `where`, in `order`, with `sortText` as the sort value; `limit` at most. */
export async function recordsPage(db: Db, tableId: string, where: Sql, sortText: string, order: string, limit: number): Promise<PageRow[]> {
  // definition_version is an init plan, read once per statement (see withTableDefinition).
  const res = await sql<PageRow>`select id, seq, table_id, data, source, size_bytes, created_at, updated_at,
      ${sql.raw(sortText)} as sort_value,
      (select definition_version::text from data_tables where id = ${tableId}::uuid) as definition_version
    from data_records where ${where} order by ${sql.raw(order)} limit ${limit}`.execute(db);
  return res.rows;
}

/** How many records match, counting at most `cap` + 1 of them. */
export async function cappedCount(db: Db, where: Sql, cap: number): Promise<number> {
  const res = await sql<{ n: string }>`select count(*) as n from (select 1 from data_records where ${where} limit ${cap + 1}) s`.execute(
    db,
  );
  return Number(res.rows[0]?.n ?? 0);
}

/** The planner's estimate of the rows matching `where`. */
export async function estimatedCount(db: Db, where: Sql): Promise<number> {
  const plan = await sql<{ 'QUERY PLAN': unknown }>`explain (format json) select 1 from data_records where ${where}`.execute(db);
  const doc = plan.rows[0]?.['QUERY PLAN'];
  const parsed = (typeof doc === 'string' ? JSON.parse(doc) : doc) as { Plan?: { 'Plan Rows'?: number } }[];
  return Math.round(Number(parsed?.[0]?.Plan?.['Plan Rows'] ?? 0));
}
