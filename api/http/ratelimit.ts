import { WINDOW_MS, windowStartOf } from '../../services/platform/rate-windows.js';

// The rate decisions of the doors (pure, tested with a controlled clock); the shared counting in
// PostgreSQL is services/platform/rate-windows.ts.
export { WINDOW_MS, windowStartOf };

export interface RateDecision {
  limit: number;
  remaining: number;
  resetAt: number;
  retryAfter: number;
  allowed: boolean;
}

/**
 * The decision for a request already counted in `current` (this minute) with `previous` requests in
 * the minute before. Pure, so the boundary behaviour is tested with a controlled clock. `refusedCount`
 * says whether a refused request stays counted (the table's upsert counts every request), which
 * decides how long Retry-After must be.
 */
export function rateDecision(
  current: number,
  limit: number,
  windowStart: number,
  now: number,
  previous = 0,
  refusedCount = true,
): RateDecision {
  const elapsed = Math.min(Math.max(now - windowStart, 0), WINDOW_MS);
  const used = current + previous * windowWeight(windowStart, now);
  const allowed = used <= limit;
  const remaining = Math.max(0, Math.floor(limit - used));
  let resetAt = windowStart + WINDOW_MS;
  if (!allowed) resetAt = now + waitMs(refusedCount ? current : current - 1, previous, limit, elapsed);
  return { limit, remaining, resetAt, allowed, retryAfter: Math.max(1, Math.ceil((resetAt - now) / 1000)) };
}

/** The share of the previous minute still inside the last 60 s (a write's own statement makes the same sum: credentials.ts admissionSql). */
export function windowWeight(windowStart: number, now: number): number {
  const elapsed = Math.min(Math.max(now - windowStart, 0), WINDOW_MS);
  return (WINDOW_MS - elapsed) / WINDOW_MS;
}

/** How long until one more request fits beside `current` counted ones: first while the previous minute's weight drains, then the current one's. */
function waitMs(current: number, previous: number, limit: number, elapsed: number): number {
  const room = limit - 1 - current;
  if (room >= 0 && previous > 0) {
    // previous * (WINDOW_MS - t) / WINDOW_MS <= room  ⇔  t >= WINDOW_MS * (1 - room / previous)
    return Math.max(0, Math.ceil(WINDOW_MS * (1 - room / previous)) - elapsed);
  }
  // This minute alone is over: in the next one it becomes the previous minute and drains the same way.
  const untilNext = WINDOW_MS - elapsed;
  if (current <= 0 || limit - 1 >= current) return untilNext;
  return untilNext + Math.ceil(WINDOW_MS * (1 - (limit - 1) / current));
}

/**
 * Failures per key (a client address, a credential's hint), in this process's memory: a guesser is
 * slowed without a database write per guess, and a flood of bad tokens cannot grow a table. The
 * same sliding window as the rate limit. With several API processes a key gets the limit in each
 * of them (documented in docs/security.md).
 */
export class FailureThrottle {
  private readonly windows = new Map<string, { start: number; current: number; previous: number }>();

  constructor(
    readonly limit: number,
    private readonly clock: () => number = Date.now,
    private readonly maxAddresses = 100_000,
  ) {}

  /** A refusal decision when the address has already failed `limit` times in the sliding minute, else null. */
  blocked(address: string): RateDecision | null {
    const w = this.window(address, false);
    if (!w) return null;
    const now = this.clock();
    // One more failure would be judged like this; the address is blocked when even that would be over.
    const d = rateDecision(w.current + 1, this.limit, w.start, now, w.previous, false);
    return d.allowed ? null : d;
  }

  fail(address: string): void {
    this.window(address, true)!.current++;
  }

  private window(address: string, create: boolean) {
    const now = this.clock();
    const start = windowStartOf(now);
    let w = this.windows.get(address);
    if (w && w.start !== start) {
      w = { start, current: 0, previous: w.start === start - WINDOW_MS ? w.current : 0 };
      this.windows.set(address, w);
    }
    if (!w && create) {
      if (this.windows.size >= this.maxAddresses) this.sweep(start);
      w = { start, current: 0, previous: 0 };
      this.windows.set(address, w);
    }
    return w;
  }

  private sweep(start: number): void {
    for (const [a, w] of this.windows) if (w.start < start - WINDOW_MS) this.windows.delete(a);
    // Still full: the oldest entries go (a Map iterates in insertion order).
    for (const a of this.windows.keys()) {
      if (this.windows.size < this.maxAddresses) break;
      this.windows.delete(a);
    }
  }
}

/** Who a failed authentication is held against: the client address, and the hint of the credential presented (null: none). */
export interface AuthAttempt {
  address: string;
  credential: string | null;
}

/**
 * The failure throttle of a door that takes a secret. A failed check is counted against the client
 * address and against the presented credential's hint (never the secret), and once either has
 * failed `limit` times in the sliding minute the door's failures answer 429 instead of 401: a
 * guesser from one address, or one aiming at one key from many addresses, is throttled. It is
 * asked only about failures: every presented credential is checked first (a guess is exactly
 * that check), so a credential that checks is never refused here, whoever else shares its
 * address or its hint; its key's own rate limit still applies. A failure answered 429 is not
 * counted again, so Retry-After is when the next failure would be answered 401 again.
 */
export class AuthFailureThrottle {
  private readonly addresses: FailureThrottle;
  private readonly credentials: FailureThrottle;

  constructor(
    readonly limit: number,
    clock: () => number = Date.now,
    maxEntries = 100_000,
  ) {
    // Two maps: a flood of random guesses (a new hint each) evicts only hints, never the addresses.
    this.addresses = new FailureThrottle(limit, clock, maxEntries);
    this.credentials = new FailureThrottle(limit, clock, maxEntries);
  }

  /** A failed check: the refusal (the longer wait) when the address or the credential is already over the limit, else null once counted. */
  failed(attempt: AuthAttempt): RateDecision | null {
    const byAddress = this.addresses.blocked(attempt.address);
    const byCredential = attempt.credential === null ? null : this.credentials.blocked(attempt.credential);
    if (byAddress || byCredential) {
      if (!byAddress) return byCredential;
      if (!byCredential) return byAddress;
      return byAddress.retryAfter >= byCredential.retryAfter ? byAddress : byCredential;
    }
    this.addresses.fail(attempt.address);
    if (attempt.credential !== null) this.credentials.fail(attempt.credential);
    return null;
  }
}
