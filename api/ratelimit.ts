import type { EntityManager } from '@mikro-orm/postgresql';
import { one } from '../entities/db.js';

export interface RateDecision { limit: number; remaining: number; resetAt: number; retryAfter: number; allowed: boolean }

/**
 * Fixed one-minute window per token, counted in PostgreSQL so every API process shares the count.
 * One upsert per request; stale windows are swept now and then by the same statement's caller.
 */
export async function hitRateLimit(em: EntityManager, bucket: string, limit: number, now = Date.now()): Promise<RateDecision> {
  const windowStart = Math.floor(now / 60_000) * 60_000;
  const row = await one<{ count: number }>(em,
    `insert into rate_limit_windows (bucket, window_start, count) values (?, ?, 1)
     on conflict (bucket, window_start) do update set count = rate_limit_windows.count + 1
     returning count`, [bucket, windowStart]);
  const count = Number(row!.count);
  const resetAt = windowStart + 60_000;
  if (Math.random() < 0.001) {
    await em.execute('delete from rate_limit_windows where window_start < ?', [windowStart - 120_000]);
  }
  return {
    limit, remaining: Math.max(0, limit - count), resetAt, allowed: count <= limit,
    retryAfter: Math.max(1, Math.ceil((resetAt - now) / 1000)),
  };
}
