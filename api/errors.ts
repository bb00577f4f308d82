import type { HttpError } from '../services/errors.js';

export { HttpError, notFound, validationFailed, forbidden, type FieldErrors } from '../services/errors.js';

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
  400: 'validation_error', 401: 'unauthenticated', 402: 'quota_exceeded', 403: 'permission_denied', 404: 'not_found',
  405: 'not_found', 409: 'conflict', 413: 'validation_error', 422: 'validation_error', 429: 'rate_limited',
  501: 'not_supported', 502: 'provider_failure', 503: 'temporary_failure',
};
const RETRYABLE = new Set(['rate_limited', 'temporary_failure', 'provider_failure']);

/** The data-endpoint envelope: {error:{code,message,retryable,field?,details?}, message, code, errors?}. */
export function dataErrorBody(e: HttpError) {
  const code = e.extra.code ?? DATA_CODES[e.status] ?? 'temporary_failure';
  return {
    error: {
      code,
      message: e.message,
      retryable: RETRYABLE.has(code),
      ...(e.extra.field ? { field: e.extra.field } : {}),
      ...(e.extra.details !== undefined ? { details: e.extra.details } : {}),
    },
    message: e.message,
    code,
    ...(e.extra.errors ? { errors: e.extra.errors } : {}),
  };
}
