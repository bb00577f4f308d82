import { isGrpcServiceError, WorkflowUpdateRPCTimeoutOrCancelledError } from '@temporalio/client';

/**
 * Whether an error means a dependency could not serve the request for now, rather than a fault of
 * ours or of the request: PostgreSQL refused, dropped, timed out or is restarting, or Temporal was
 * unavailable or missed its deadline. The doors answer those 503 `temporary_failure` with
 * Retry-After (api/http/errors.ts) instead of 500. Bounds: docs/architecture.md, "When a dependency fails".
 */
export type Dependency = 'database' | 'temporal';

/** Seconds a client is asked to wait before trying again after a temporary failure. */
export const RETRY_AFTER_SECONDS = 5;

/**
 * SQLSTATEs of a server that is going away or overloaded, of a statement cancelled by
 * statement_timeout or lock_timeout, and of a transaction that lost a race and may simply run again.
 */
const DATABASE_STATES = new Set([
  '57014', // query_canceled: statement_timeout
  '55P03', // lock_not_available: lock_timeout
  '57P01', // admin_shutdown: the server is stopping
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now: starting up or shutting down
  '53300', // too_many_connections
  '53000', // insufficient_resources
  '40001', // serialization_failure
  '40P01', // deadlock_detected
]);

/** Socket errors on the way to PostgreSQL (the API opens no other sockets to a service of its own). */
const SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);

/** pg's and pg-pool's own messages when a connection cannot be had, is lost or does not answer. */
const DRIVER_MESSAGES = [
  /^Connection terminated/, // unexpectedly; due to connection timeout
  /^timeout exceeded when trying to connect/, // pool acquire timeout
  /^Query read timeout/, // query_timeout
  /^Client has encountered a connection error and is not queryable/,
  /^Cannot use a pool after calling end on the pool/, // the process is stopping
];

/** gRPC status codes of a Temporal that cannot be reached or did not answer in time. */
const UNAVAILABLE = 14;
const DEADLINE_EXCEEDED = 4;

export function unavailableDependency(err: unknown): Dependency | undefined {
  // The SDK and the ORM wrap the original error in `cause` (MikroORM copies its fields instead).
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 8; e = e.cause, depth++) {
    if (e instanceof WorkflowUpdateRPCTimeoutOrCancelledError) return 'temporal';
    if (isGrpcServiceError(e)) return e.code === UNAVAILABLE || e.code === DEADLINE_EXCEEDED ? 'temporal' : undefined;
    const code = 'code' in e ? e.code : undefined;
    if (typeof code === 'string' && (DATABASE_STATES.has(code) || code.startsWith('08') || SOCKET_CODES.has(code))) return 'database';
    if (DRIVER_MESSAGES.some((m) => m.test(e.message))) return 'database';
  }
  return undefined;
}
