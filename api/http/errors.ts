import { DomainError, type DomainErrorKind, type FieldErrors } from '../../services/platform/errors.js';
import { RETRY_AFTER_SECONDS, unavailableDependency } from '../../services/platform/dependencies.js';

export { notFound, validationFailed, forbidden, conflict, badRequest, type FieldErrors } from '../../services/platform/errors.js';

/** A refusal of the HTTP door itself (authentication, rate limit, routing, body reading), or a domain error mapped to HTTP. */
export class HttpError extends Error {
  constructor(
    public readonly status: number,
    message: string,
    public readonly extra: {
      errors?: FieldErrors;
      reason?: string;
      headers?: Record<string, string>;
      code?: string;
      details?: unknown;
      field?: string;
    } = {},
  ) {
    super(message);
  }
}

/** The contract's status for each kind of domain refusal: the one place REST decides it. */
const STATUS_OF: Record<DomainErrorKind, number> = {
  invalid: 422,
  bad_request: 400,
  too_large: 413,
  unsupported_media: 415,
  not_found: 404,
  conflict: 409,
  forbidden: 403,
  quota: 402,
  rate_limited: 429,
  provider_failure: 502,
  not_supported: 501,
};

export function toHttpError(e: DomainError): HttpError {
  const { retryAfterSeconds, ...detail } = e.detail;
  const headers = retryAfterSeconds !== undefined ? { 'Retry-After': String(retryAfterSeconds) } : undefined;
  return new HttpError(STATUS_OF[e.kind], e.message, { ...detail, ...(headers ? { headers } : {}) });
}

/** The contract's answer when a dependency could not serve the request for now: "retry only when safe". */
export const TEMPORARY_FAILURE = 'temporary_failure';

/**
 * 503 temporary_failure with Retry-After: PostgreSQL or Temporal down, hung past its deadline or
 * restarting (services/platform/dependencies.ts). A write may or may not have been committed when
 * its answer was lost, which is why the contract says to retry only when safe (an idempotency key).
 */
export function temporaryFailure(): HttpError {
  return new HttpError(503, 'The service is temporarily unable to complete this request. Retry later.', {
    reason: TEMPORARY_FAILURE,
    code: TEMPORARY_FAILURE,
    headers: { 'Retry-After': String(RETRY_AFTER_SECONDS) },
  });
}

/** HttpError as is, a DomainError mapped, a dependency's temporary failure as 503; anything else is not a refusal (undefined). */
export function asHttpError(err: unknown): HttpError | undefined {
  if (err instanceof HttpError) return err;
  if (err instanceof DomainError) return toHttpError(err);
  if (unavailableDependency(err)) return temporaryFailure();
  return undefined;
}

/** The standard v3 envelope: {status:'error', message, errors?, reason?}. */
export function v3ErrorBody(e: HttpError) {
  return {
    status: 'error' as const,
    message: e.message,
    ...(e.extra.errors ? { errors: e.extra.errors } : {}),
    ...(e.extra.reason ? { reason: e.extra.reason } : {}),
  };
}

const DATA_CODES: Record<number, string> = {
  400: 'validation_error',
  401: 'unauthenticated',
  402: 'quota_exceeded',
  403: 'permission_denied',
  404: 'not_found',
  405: 'not_found',
  409: 'conflict',
  413: 'validation_error',
  422: 'validation_error',
  429: 'rate_limited',
  501: 'not_supported',
  502: 'provider_failure',
  503: 'temporary_failure',
};
const RETRYABLE = new Set(['rate_limited', 'temporary_failure', 'provider_failure']);

/** The data-endpoint envelope: {error:{code,message,retryable,field?,details?}, message, code, errors?}. */
export function dataErrorBody(e: HttpError) {
  const code = e.extra.code ?? DATA_CODES[e.status] ?? 'temporary_failure';
  // A client branches on error.code and details; the wait of a 429 or 503 travels in both places.
  const retryAfter = e.status === 429 || e.status === 503 ? Number(e.extra.headers?.['Retry-After']) : NaN;
  const details =
    e.extra.details !== undefined
      ? e.extra.details
      : Number.isFinite(retryAfter)
        ? { retry_after_seconds: retryAfter }
        : e.extra.reason
          ? { reason: e.extra.reason }
          : undefined;
  // A refusal of one field names it, whether a rule said so or the request's schema refused it.
  const fields = e.extra.errors ? Object.keys(e.extra.errors) : [];
  const field = e.extra.field ?? (fields.length === 1 ? fields[0] : undefined);
  return {
    error: {
      code,
      message: e.message,
      retryable: RETRYABLE.has(code),
      ...(field ? { field } : {}),
      ...(details !== undefined ? { details } : {}),
    },
    message: e.message,
    code,
    ...(e.extra.errors ? { errors: e.extra.errors } : {}),
  };
}

const ENGINE_CODES: Record<number, string> = {
  400: 'bad_request',
  401: 'unauthenticated',
  402: 'payment_required',
  403: 'forbidden',
  404: 'not_found',
  405: 'method_not_allowed',
  409: 'conflict',
  413: 'too_large',
  415: 'unsupported_media_type',
  422: 'invalid_request',
  429: 'rate_limited',
  503: 'temporary_failure',
};

/**
 * The agent engine's envelope (/api/engine; docs/agents.md): RFC 9457 problem details, as the
 * Idempotency-Key draft answers its refusals, with `code` (the reason when there is one) for a
 * client to branch on and `errors` naming each field of a 422.
 */
export function engineErrorBody(e: HttpError) {
  const code = e.extra.reason ?? ENGINE_CODES[e.status] ?? (e.status >= 500 ? 'server_error' : 'error');
  const retryAfter = Number(e.extra.headers?.['Retry-After']);
  return {
    type: `about:blank#${code}`,
    title: ENGINE_CODES[e.status] ?? code,
    status: e.status,
    detail: e.message,
    code,
    ...(e.extra.errors ? { errors: e.extra.errors } : {}),
    ...(Number.isFinite(retryAfter) ? { retry_after_seconds: retryAfter } : {}),
  };
}
