import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';

// A request id travels with everything a request does: its log lines, its response header and the
// memo of every workflow it starts (temporal/starters.ts). It is carried by AsyncLocalStorage so the
// starters, several calls below the door, need no extra argument threaded through every service.

/**
 * What a caller's X-Request-Id may look like to be kept: UUIDs, ULIDs, trace ids (`Root=1-…`) and
 * the like. Anything else (spaces, control characters, quotes, very long values) would end up in log
 * lines and in the Temporal UI as it was sent, so it is replaced by an id of our own.
 */
const SANE = /^[A-Za-z0-9._:=+/@-]{1,128}$/;

/** The caller's id when it is a sane token; null when it is absent or not one. */
export function acceptedRequestId(header: string | string[] | undefined): string | null {
  const value = Array.isArray(header) ? header[0] : header;
  return value !== undefined && SANE.test(value) ? value : null;
}

/** The caller's id when sane, else a new one. */
export function requestIdFor(header: string | string[] | undefined): string {
  return acceptedRequestId(header) ?? randomUUID();
}

const scope = new AsyncLocalStorage<string>();

/** Runs `fn` (and everything it awaits or schedules) as part of request `id`. */
export function withRequestId<T>(id: string, fn: () => T): T {
  return scope.run(id, fn);
}

/** The id of the request this code runs for; undefined outside a request (worker, reconciler, CLI). */
export function currentRequestId(): string | undefined {
  return scope.getStore();
}
