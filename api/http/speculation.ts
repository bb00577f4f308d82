import type { Authenticated } from './auth.js';
import { requestsInFlight } from '../../services/platform/load.js';

// Reads that start beside their authentication. Every authenticated request runs its credential
// statement (key, account, issuer, the request counted in the key's shared rate window) before
// anything else, one round trip of about 0.6 ms here: a third of a records page's time outside
// its own statement. A read that writes nothing need not wait for it: when this process
// authenticated the same token a moment ago and the caller still had room in its window, the read
// runs at once with the principal it had then, while the credential statement runs beside it.
// Its answer is used only when that statement admits the request AND returns the same principal
// (account, status, balance, key, issuer and permissions); otherwise the answer
// is dropped unseen and the read runs again with the principal just read, or the refusal
// (401, 403, 429) is answered. Nothing a refused caller could not see leaves the process, and every
// request is still counted in its window by the one shared statement.
//
// Two connections are then busy for one request, so it is done only under light load; under load
// throughput matters more than latency and requests take the plain path.

/** At most this many requests in flight in this process for a read to be started early. */
export const SPECULATE_BELOW_IN_FLIGHT = 4;
/** Tokens remembered per process (the oldest are forgotten first). */
const REMEMBERED = 10_000;

type Remembered = Omit<Authenticated, 'rate'> & { remaining: number };

const remembered = new Map<string, Remembered>();

/** What authentication said for this bearer header, kept after an admitted request. */
export function rememberAuthenticated(header: string, a: Authenticated): void {
  const { rate, ...principal } = a;
  remembered.delete(header);
  remembered.set(header, { ...principal, remaining: rate.remaining });
  if (remembered.size > REMEMBERED) remembered.delete(remembered.keys().next().value as string);
}

export function forgetAuthenticated(header: string): void {
  remembered.delete(header);
}

/**
 * The principal a read may start with before its authentication returns, or null: only a token this
 * process admitted before, whose caller had room left in its window (a caller at its limit gets no
 * work done on its behalf before the refusal), and only under light load.
 */
export function speculativePrincipal(header: string): Omit<Authenticated, 'rate'> | null {
  if (requestsInFlight() > SPECULATE_BELOW_IN_FLIGHT) return null;
  const r = remembered.get(header);
  // The window slides: what was left then is a fair guess of what is left now; a refusal is never remembered.
  if (!r || r.remaining < 2) return null;
  const { remaining: _remaining, ...principal } = r;
  return principal;
}

/**
 * The principal this process last admitted for this bearer header, whatever the load and the window:
 * a write whose own statement authenticates it (auth.ts admittedInStatement) is checked against the
 * database's digest of it and the key's window there, in the same round trip.
 */
export function rememberedPrincipal(header: string): Omit<Authenticated, 'rate'> | null {
  const r = remembered.get(header);
  if (!r) return null;
  const { remaining: _remaining, ...principal } = r;
  return principal;
}

/** Whether the fresh authentication names exactly the principal the early read used. */
export function samePrincipal(fresh: Authenticated, early: Omit<Authenticated, 'rate'>): boolean {
  const { rate: _rate, ...principal } = fresh;
  // Both are built by authenticate() from one row shape, so their keys come in the same order.
  return JSON.stringify(principal) === JSON.stringify(early);
}
