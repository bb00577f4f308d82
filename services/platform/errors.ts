// Services refuse with domain errors, which say what went wrong in the business's words and know
// nothing of HTTP. Each door maps them once: the REST door to the v3 or data envelope
// (api/http/errors.ts), the MCP door to a tool error, activities to a non-retryable failure
// (activities/failures.ts). Nothing internal leaks through any of them.
export type FieldErrors = Record<string, string[]>;

export type DomainErrorKind =
  | 'invalid' // the input breaks a rule; `errors` names the fields
  | 'bad_request' // the request cannot be read at all (malformed body)
  | 'too_large'
  | 'unsupported_media'
  | 'not_found' // missing, or another tenant's
  | 'conflict' // the resource is not in a state that allows this
  | 'forbidden' // the caller may not do this; `reason` says why
  | 'quota' // a wallet or plan limit
  | 'rate_limited' // too many of these from this caller for now; `retryAfterSeconds` says how long to wait
  | 'provider_failure' // the provider refused or failed
  | 'not_supported'; // a well-formed request this service does not serve (data: an operator a column does not advertise, a sort without an index)

export interface DomainErrorDetail {
  errors?: FieldErrors;
  reason?: string;
  code?: string;
  details?: unknown;
  field?: string;
  /** rate_limited: seconds until one more would be taken (the Retry-After of the HTTP door). */
  retryAfterSeconds?: number;
}

export class DomainError extends Error {
  constructor(
    public readonly kind: DomainErrorKind,
    message: string,
    public readonly detail: DomainErrorDetail = {},
  ) {
    super(message);
    this.name = 'DomainError';
  }
}

export const notFound = (what = 'Resource') => new DomainError('not_found', `${what} not found.`);
export const validationFailed = (errors: FieldErrors, message?: string) =>
  new DomainError('invalid', message ?? Object.values(errors)[0]?.[0] ?? 'The given data was invalid.', { errors });
export const forbidden = (message: string, reason?: string) => new DomainError('forbidden', message, { reason });
export const conflict = (message: string) => new DomainError('conflict', message);
export const badRequest = (message: string) => new DomainError('bad_request', message);
export const quotaExceeded = (message: string, reason?: string) => new DomainError('quota', message, { reason });
export const notSupported = (message: string, reason: string, details?: unknown) =>
  new DomainError('not_supported', message, { reason, details: details ?? { reason } });
export const rateLimited = (message: string, retryAfterSeconds: number, reason?: string) =>
  new DomainError('rate_limited', message, { reason, retryAfterSeconds: Math.max(1, Math.ceil(retryAfterSeconds)) });
export const providerFailure = (message: string, details?: unknown) => new DomainError('provider_failure', message, { details });

/** One line for logs and activity failures: the message and the field problems. */
export function describeDomainError(e: DomainError): string {
  return `${e.message}${e.detail.errors ? ` ${JSON.stringify(e.detail.errors)}` : ''}`;
}
