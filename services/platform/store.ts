import type { EntityManager } from '@mikro-orm/postgresql';
import { exec, one } from '../../entities/db.js';
import type { Row } from '../../entities/database.js';

// The platform's one table, `rate_limit_windows` (unlogged, no entity): the API's per-key windows
// (services/platform/rate-windows.ts) and the provider budgets of the dispatch count into it. Only
// this module names it; the authentication statement embeds the fragments below.

/** The upsert that counts this request: `bucketExpr` is an SQL expression for the bucket, the window start is the next `?`. */
export const countInWindowSql = (bucketExpr: string, from = '') =>
  `insert into rate_limit_windows (bucket, window_start, count) select ${bucketExpr}, ?::bigint, 1 ${from}
   on conflict (bucket, window_start) do update set count = rate_limit_windows.count + 1
   returning count`;

/** The previous minute's count of a bucket (0 when it has none); the previous window's start is the next `?`. */
export const previousWindowSql = (bucketExpr: string) =>
  `coalesce((select count from rate_limit_windows where bucket = ${bucketExpr} and window_start = ?::bigint), 0)`;

/** Drops every window that started before `before` (ms); nobody waits for it, a failure is dropped. */
export function dropWindowsBefore(em: EntityManager, before: number): void {
  void exec(em, 'delete from rate_limit_windows where window_start < ?', [before]).catch(() => {});
}

/** `count` calls into the current second of the bucket (the database clock); what a provider budget grants from. */
const COUNT_SQL = `with now_ms as (select floor(extract(epoch from clock_timestamp()) * 1000)::bigint as ms)
       insert into rate_limit_windows (bucket, window_start, count)
       select ?::varchar, ms - ms % 1000, ?::int from now_ms
       on conflict (bucket, window_start) do update set count = rate_limit_windows.count + excluded.count
       returning count, (select 1000 - ms % 1000 from now_ms)::int as wait_ms, window_start`;

/**
 * Counts `calls` provider calls into this second of `bucket`: the second's count after them, the
 * milliseconds left of the second and its start. For the provider budgets of activities/messaging/dispatch.ts.
 */
export const countProviderCalls = (em: EntityManager, bucket: string, calls: number) =>
  one<Pick<Row<'platform', 'rate_limit_windows'>, 'count' | 'window_start'> & { wait_ms: number }>(em, COUNT_SQL, [bucket, calls]);

/** Drops a provider bucket's seconds that started before `before` (ms). */
export const dropProviderSecondsBefore = (em: EntityManager, bucket: string, before: number) =>
  exec(em, 'delete from rate_limit_windows where bucket = ? and window_start < ?::bigint', [bucket, before]);
