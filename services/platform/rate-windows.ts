import type { EntityManager } from '@mikro-orm/postgresql';
import { exec } from '../../entities/db.js';

/**
 * Sliding one-minute windows, counted in PostgreSQL (`rate_limit_windows`, unlogged) so every API
 * process shares the count. Each bucket keeps one counter per fixed minute; a request is judged on
 * the current minute's count plus the previous minute's weighted by the share of it that still lies
 * inside the last 60 seconds. With fixed windows alone a client could spend its budget at 00:59 and
 * again at 01:00 (twice the limit in about a second); here the previous minute's spending still
 * weighs almost fully at 01:00. A token's window is counted inside its authentication statement
 * (services/account/credentials.ts), so the decision costs no extra round trip.
 */
export const WINDOW_MS = 60_000;
export const windowStartOf = (now: number) => Math.floor(now / WINDOW_MS) * WINDOW_MS;

/** The upsert that counts this request: `bucketExpr` is an SQL expression for the bucket, the window start is the next `?`. */
export const countInWindowSql = (bucketExpr: string, from = '') =>
  `insert into rate_limit_windows (bucket, window_start, count) select ${bucketExpr}, ?::bigint, 1 ${from}
   on conflict (bucket, window_start) do update set count = rate_limit_windows.count + 1
   returning count`;

/** The previous minute's count of a bucket (0 when it has none); the previous window's start is the next `?`. */
export const previousWindowSql = (bucketExpr: string) =>
  `coalesce((select count from rate_limit_windows where bucket = ${bucketExpr} and window_start = ?::bigint), 0)`;

/** Now and then (one call in a thousand) drop windows older than two minutes; nobody waits for it. */
export function sweepOldWindows(em: EntityManager, windowStart: number): void {
  if (Math.random() < 0.001) {
    void exec(em, 'delete from rate_limit_windows where window_start < ?', [windowStart - 2 * WINDOW_MS]).catch(() => {});
  }
}
