import type { EntityManager } from '@mikro-orm/postgresql';
import { one } from '../../entities/db.js';

export interface RateDecision {
  limit: number;
  remaining: number;
  resetAt: number;
  retryAfter: number;
  allowed: boolean;
}

/**
 * Fixed one-minute windows, counted in PostgreSQL (`rate_limit_windows`, unlogged) so every API
 * process shares the count. A token's window is counted inside its authentication statement
 * (api/auth.ts); `hitRateLimit` counts any other bucket with one upsert of its own.
 */
export const windowStartOf = (now: number) => Math.floor(now / 60_000) * 60_000;

/** The upsert both callers use: `bucketExpr` is an SQL expression for the bucket, the window start is the next `?`. */
export const countInWindowSql = (bucketExpr: string, from = '') =>
  `insert into rate_limit_windows (bucket, window_start, count) select ${bucketExpr}, ?::bigint, 1 ${from}
   on conflict (bucket, window_start) do update set count = rate_limit_windows.count + 1
   returning count`;

export function rateDecision(count: number, limit: number, windowStart: number, now: number): RateDecision {
  const resetAt = windowStart + 60_000;
  return {
    limit,
    remaining: Math.max(0, limit - count),
    resetAt,
    allowed: count <= limit,
    retryAfter: Math.max(1, Math.ceil((resetAt - now) / 1000)),
  };
}

/** Now and then (one call in a thousand) drop windows older than two minutes; nobody waits for it. */
export function sweepOldWindows(em: EntityManager, windowStart: number): void {
  if (Math.random() < 0.001) {
    void em.execute('delete from rate_limit_windows where window_start < ?', [windowStart - 120_000]).catch(() => {});
  }
}

export async function hitRateLimit(em: EntityManager, bucket: string, limit: number, now = Date.now()): Promise<RateDecision> {
  const windowStart = windowStartOf(now);
  const row = await one<{ count: number }>(em, countInWindowSql('?::varchar'), [bucket, windowStart]);
  sweepOldWindows(em, windowStart);
  return rateDecision(Number(row!.count), limit, windowStart, now);
}
