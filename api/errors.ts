// Refusals travel as HttpError and are rendered in the contract's envelopes by one middleware,
// so no handler ever builds an error body by hand and nothing internal leaks.
export type FieldErrors = Record<string, string[]>;

export class HttpError extends Error {
  constructor(
    public readonly status: number,
    message: string,
    public readonly extra: { errors?: FieldErrors; reason?: string; headers?: Record<string, string>; code?: string; details?: unknown; field?: string } = {},
  ) {
    super(message);
  }
}

export const notFound = (what = 'Resource') => new HttpError(404, `${what} not found.`);
export const validationFailed = (errors: FieldErrors, message?: string) =>
  new HttpError(422, message ?? Object.values(errors)[0]?.[0] ?? 'The given data was invalid.', { errors });
export const forbidden = (message: string, reason?: string) => new HttpError(403, message, { reason });

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
