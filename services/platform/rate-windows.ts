import type { EntityManager } from '@mikro-orm/postgresql';
import { dropWindowsBefore } from './store.js';

/**
 * Sliding one-minute windows, counted in PostgreSQL (`rate_limit_windows`, unlogged) so every API
 * process shares the count. Each bucket keeps one counter per fixed minute; a request is judged on
 * the current minute's count plus the previous minute's weighted by the share of it that still lies
 * inside the last 60 seconds. With fixed windows alone a client could spend its budget at 00:59 and
 * again at 01:00 (twice the limit in about a second); here the previous minute's spending still
 * weighs almost fully at 01:00. A token's window is counted inside its authentication statement
 * (services/account/store.ts), so the decision costs no extra round trip. The statements are in
 * services/platform/store.ts.
 */
export const WINDOW_MS = 60_000;
export const windowStartOf = (now: number) => Math.floor(now / WINDOW_MS) * WINDOW_MS;

export { countInWindowSql, previousWindowSql } from './store.js';
/** The provider budgets' per-second counts (activities/messaging/dispatch.ts), in the same table. */
export { countProviderCalls, dropProviderSecondsBefore } from './store.js';

/** Now and then (one call in a thousand) drop windows older than two minutes; nobody waits for it. */
export function sweepOldWindows(em: EntityManager, windowStart: number): void {
  if (Math.random() < 0.001) dropWindowsBefore(em, windowStart - 2 * WINDOW_MS);
}
