import type { EntityManager } from '@mikro-orm/postgresql';
import { many, one } from '../../../entities/db.js';

// The group overview's figures (services/data/overview.ts): each one set-based statement over
// data_records, bounded by the window on the (table_id, created_at) and (table_id, updated_at)
// indexes of live records. Aggregate select lists come from valueExpression (stored keys, checked).

/** The first live record's creation time over the tables: one index probe per table. */
export async function firstRecordAt(em: EntityManager, tableIds: string[]): Promise<string | Date | null> {
  const row = await one<{ first: string | Date | null }>(
    em,
    `select min(x.first) as first
       from unnest(?::uuid[]) as t(id),
            lateral (select min(r.created_at) as first from data_records r where r.table_id = t.id and r.deleted_at is null) x`,
    [tableIds],
  );
  return row?.first ?? null;
}

/** Per table: live records created and updated in the window, and the last update. */
export function windowActivity(em: EntityManager, tableIds: string[], from: Date, to: Date) {
  return many<{ table_id: string; created: string; updated: string; last_updated_at: string | Date | null }>(
    em,
    `select t.id::text as table_id,
            (select count(*) from data_records r
              where r.table_id = t.id and r.deleted_at is null and r.created_at >= ? and r.created_at < ?) as created,
            (select count(*) from data_records r
              where r.table_id = t.id and r.deleted_at is null and r.updated_at >= ? and r.updated_at < ?
                and r.updated_at > r.created_at) as updated,
            (select max(r.updated_at) from data_records r where r.table_id = t.id and r.deleted_at is null) as last_updated_at
       from unnest(?::uuid[]) as t(id)`,
    [from, to, from, to, tableIds],
  );
}

/** Live records created in the window per table and bucket (bucket start as epoch milliseconds, UTC wall clock). */
export function createdPerBucket(em: EntityManager, bucket: string, tableIds: string[], from: Date, to: Date) {
  return many<{ table_id: string; at: string | number; n: string }>(
    em,
    `select r.table_id::text as table_id,
            (extract(epoch from date_trunc(?, r.created_at at time zone 'UTC')) * 1000)::bigint as at,
            count(*) as n
       from data_records r
      where r.table_id = any(?::uuid[]) and r.deleted_at is null and r.created_at >= ? and r.created_at < ?
      group by 1, 2`,
    [bucket, tableIds, from, to],
  );
}

/** `aggregates` (a select list of valueExpression aggregates) over the table's live records created in the window. */
export function aggregatesInWindow(em: EntityManager, aggregates: string, tableId: string, from: Date, to: Date) {
  return one<Record<string, string | null>>(
    em,
    `select ${aggregates} from data_records where table_id = ?::uuid and deleted_at is null and created_at >= ? and created_at < ?`,
    [tableId, from, to],
  );
}

/** The table's live records counted, with `aggregates` (a select list of valueExpression aggregates) beside. */
export function countWithAggregates(em: EntityManager, aggregates: string, tableId: string) {
  return one<Record<string, string>>(
    em,
    `select count(*) as total, ${aggregates} from data_records where table_id = ?::uuid and deleted_at is null`,
    [tableId],
  );
}
