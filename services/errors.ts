// Refusals travel as HttpError, thrown by services and rendered in the contract's envelopes by one
// API middleware (api/errors.ts), so no handler builds an error body by hand and nothing internal
// leaks. The status is the contract's, which REST handlers and MCP tools both report.
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
