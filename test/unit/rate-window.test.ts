import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AuthFailureThrottle, FailureThrottle, rateDecision, windowStartOf, WINDOW_MS } from '../../api/http/ratelimit.js';

/**
 * The rate_limit_windows table as the authentication statement uses it: every request is counted in
 * its minute (refused ones too), and judged on that count and the previous minute's.
 */
function store(limit: number, sliding = true) {
  const counts = new Map<number, number>();
  return (now: number) => {
    const ws = windowStartOf(now);
    const current = (counts.get(ws) ?? 0) + 1;
    counts.set(ws, current);
    return rateDecision(current, limit, ws, now, sliding ? (counts.get(ws - WINDOW_MS) ?? 0) : 0);
  };
}

const T0 = 1_800_000_000_000 - (1_800_000_000_000 % WINDOW_MS); // a minute boundary

test('a burst straddling a minute boundary gets no second budget (fixed windows gave twice the limit)', () => {
  const limit = 10;
  const times = Array.from({ length: 200 }, (_, i) => T0 + WINDOW_MS - 2_000 + i * 20); // 4 s around the boundary
  const allowed = (hit: ReturnType<typeof store>) => times.filter((t) => hit(t).allowed).length;
  assert.ok(allowed(store(limit)) <= limit + 1, `sliding: ${allowed(store(limit))}`);
  assert.equal(allowed(store(limit, false)), 2 * limit, 'the fixed-window double burst this replaces');
});

test('a client hammering across two boundaries: at most the limit plus one within 5 s of a boundary', () => {
  const limit = 10;
  const hit = store(limit);
  const accepted: number[] = [];
  for (let t = T0 + 50_000; t < T0 + 3 * WINDOW_MS; t += 250) if (hit(t).allowed) accepted.push(t);
  for (const start of accepted) {
    const inSpan = accepted.filter((t) => t >= start && t < start + WINDOW_MS).length;
    assert.ok(inSpan <= 2 * limit, `${inSpan} in the minute from ${start - T0}`);
  }
  const aroundBoundary = accepted.filter((t) => t >= T0 + 55_000 && t < T0 + 65_000).length;
  assert.ok(aroundBoundary <= limit + 1, `${aroundBoundary} within 5 s of the boundary`);
});

test('a client below the limit is never refused, across many boundaries', () => {
  const limit = 10;
  const hit = store(limit);
  for (let t = T0 + 1; t < T0 + 10 * WINDOW_MS; t += 6_700) assert.ok(hit(t).allowed, `refused at ${t - T0}`);
});

test('Retry-After is honest: refused, then allowed after waiting exactly that long', () => {
  const limit = 10;
  const refusedThenRetry = (retryAt: (refused: number) => number) => {
    const hit = store(limit);
    for (let i = 0; i < limit; i++) assert.ok(hit(T0 + 59_500).allowed);
    const refused = hit(T0 + 60_500);
    assert.equal(refused.allowed, false);
    assert.ok(refused.retryAfter >= 1 && refused.retryAfter <= 60, String(refused.retryAfter));
    return hit(T0 + 60_500 + retryAt(refused.retryAfter * 1000)).allowed;
  };
  assert.equal(
    refusedThenRetry((ms) => ms - 1_000),
    false,
    'a second early is still refused',
  );
  assert.equal(
    refusedThenRetry((ms) => ms),
    true,
  );
});

test('the headers: remaining counts down in a fresh window, reset is the window end while allowed', () => {
  const d = rateDecision(1, 120, T0, T0 + 5_000);
  assert.deepEqual(
    { remaining: d.remaining, allowed: d.allowed, resetAt: d.resetAt },
    { remaining: 119, allowed: true, resetAt: T0 + WINDOW_MS },
  );
  assert.equal(rateDecision(121, 120, T0, T0 + 5_000).allowed, false);
  assert.equal(rateDecision(60, 120, T0, T0 + 30_000, 120).remaining, 0);
});

test('the failure throttle blocks an address after N failures, others not, and lets it go as the window slides', () => {
  let now = T0 + 30_000;
  const throttle = new FailureThrottle(3, () => now);
  for (let i = 0; i < 3; i++) {
    assert.equal(throttle.blocked('10.0.0.1'), null, `attempt ${i + 1}`);
    throttle.fail('10.0.0.1');
  }
  const blocked = throttle.blocked('10.0.0.1');
  assert.ok(blocked && !blocked.allowed && blocked.retryAfter >= 1);
  assert.equal(throttle.blocked('10.0.0.2'), null, 'another address is not affected');
  // Retry-After is rounded up to whole seconds, so two seconds early is the first instant surely still blocked.
  now += 1_000 * blocked.retryAfter - 2_000;
  assert.notEqual(throttle.blocked('10.0.0.1'), null, 'still blocked two seconds before Retry-After');
  now += 2_000;
  assert.equal(throttle.blocked('10.0.0.1'), null, 'free once Retry-After has passed');
  now += 3 * WINDOW_MS;
  for (let i = 0; i < 3; i++) throttle.fail('10.0.0.1');
  now += 500;
  assert.notEqual(throttle.blocked('10.0.0.1'), null);
});

test('the failure throttle keeps a bounded number of addresses', () => {
  let now = T0;
  const throttle = new FailureThrottle(1, () => now, 100);
  for (let i = 0; i < 1_000; i++) {
    throttle.fail(`a${i}`);
    now += 10;
  }
  assert.ok((throttle as unknown as { windows: Map<string, unknown> }).windows.size <= 100);
  assert.notEqual(throttle.blocked('a999'), null, 'the newest addresses are kept');
});

test('the authentication failure throttle: an address is throttled, a neighbour with another credential hint is not', () => {
  let now = T0 + 30_000;
  const throttle = new AuthFailureThrottle(3, () => now);
  for (let i = 0; i < 3; i++) assert.equal(throttle.failed({ address: '10.0.0.1', credential: `g${i}…g${i}` }), null, `failure ${i + 1}`);
  const refused = throttle.failed({ address: '10.0.0.1', credential: 'h000…h000' });
  assert.ok(refused && !refused.allowed && refused.retryAfter >= 1, 'the fourth failure from the address, whatever its credential');
  assert.equal(throttle.failed({ address: '10.0.0.2', credential: 'n000…n000' }), null, 'another address is not affected');
  // A failure answered 429 is not counted again: Retry-After stays honest for a client that waits.
  for (let i = 0; i < 50; i++) assert.notEqual(throttle.failed({ address: '10.0.0.1', credential: null }), null);
  now += 1_000 * refused.retryAfter;
  assert.equal(throttle.failed({ address: '10.0.0.1', credential: 'late…late' }), null, 'free once Retry-After has passed');
});

test('the authentication failure throttle: one credential hint tried from many addresses is throttled there, not elsewhere', () => {
  const now = T0 + 10_000;
  const throttle = new AuthFailureThrottle(3, () => now);
  // A guesser aiming at one key (its hint is public in the listings) from a different address each time.
  for (let i = 0; i < 3; i++) assert.equal(throttle.failed({ address: `192.0.2.${i}`, credential: 'abcd…wxyz' }), null);
  assert.notEqual(throttle.failed({ address: '192.0.2.50', credential: 'abcd…wxyz' }), null, 'the hint is throttled from a fresh address');
  assert.equal(throttle.failed({ address: '192.0.2.51', credential: 'efgh…wxyz' }), null, 'another hint from a fresh address is not');
  assert.equal(throttle.failed({ address: '192.0.2.52', credential: null }), null, 'nor a request with no credential at all');
});

test('the authentication failure throttle: random guesses do not evict the addresses being throttled', () => {
  let now = T0;
  const throttle = new AuthFailureThrottle(3, () => now, 100);
  for (let i = 0; i < 3; i++) throttle.failed({ address: '10.9.9.9', credential: `r${i}…r${i}` });
  // Guesses from 40 addresses, a new hint each (120 hints, 41 addresses): the hints' map is swept, the addresses' is not.
  for (let i = 0; i < 120; i++) {
    assert.equal(throttle.failed({ address: `10.1.0.${i % 40}`, credential: `x${i}…x${i}` }), null);
    now += 1;
  }
  assert.notEqual(throttle.failed({ address: '10.9.9.9', credential: 'last…last' }), null, 'the first address is still throttled');
});
