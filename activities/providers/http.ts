// Shared HTTP plumbing for provider adapters. Activities decide whether to retry purely from
// ProviderResult, so every way a call can go wrong must collapse into `permanent` true/false here.

export type ProviderResult<T> =
  | { ok: true; value: T }
  | { ok: false; permanent: boolean; code: string; message: string; retryAfterSeconds?: number; httpStatus?: number };

export type ProviderFailure = Extract<ProviderResult<never>, { ok: false }>;

export interface HttpReply {
  status: number;
  headers: Headers;
  text: string;
  /** Parsed body when it was JSON, otherwise undefined. */
  json: unknown;
}

export const DEFAULT_TIMEOUT_MS = 15_000;

/**
 * Performs one request. Never throws: a transport problem becomes a retryable failure, because
 * at that point we cannot know whether the provider acted on the request (idempotency keys cover it).
 */
export async function httpRequest(
  url: string,
  init: RequestInit,
  timeoutMs: number = DEFAULT_TIMEOUT_MS,
): Promise<{ ok: true; reply: HttpReply } | { ok: false; failure: ProviderFailure }> {
  try {
    // The same signal covers reading the body, so a provider that stalls mid-body still times out.
    const res = await fetch(url, { ...init, signal: AbortSignal.timeout(timeoutMs) });
    const text = await res.text();
    let json: unknown;
    try {
      json = text.length > 0 ? JSON.parse(text) : undefined;
    } catch {
      json = undefined;
    }
    return { ok: true, reply: { status: res.status, headers: res.headers, text, json } };
  } catch (err) {
    const e = err as Error & { cause?: { code?: string; message?: string } };
    if (e.name === 'TimeoutError' || e.name === 'AbortError') {
      return { ok: false, failure: { ok: false, permanent: false, code: 'timeout', message: `no answer within ${timeoutMs} ms` } };
    }
    const detail = e.cause?.code ?? e.cause?.message;
    return {
      ok: false,
      failure: { ok: false, permanent: false, code: 'network_error', message: detail ? `${e.message}: ${detail}` : e.message },
    };
  }
}

/** Client errors are final except the ones that explicitly invite a retry. */
export function isPermanentHttpStatus(status: number): boolean {
  return status >= 400 && status < 500 && status !== 408 && status !== 409 && status !== 429;
}

/** Retry-After may be delta seconds or an HTTP date; both become whole seconds from now. */
export function parseRetryAfter(value: string | null | undefined, now: number = Date.now()): number | undefined {
  if (value == null || value.trim() === '') return undefined;
  const trimmed = value.trim();
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Math.ceil(Number(trimmed));
  const at = Date.parse(trimmed);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, Math.ceil((at - now) / 1000));
}

export function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function trimSlash(url: string): string {
  return url.replace(/\/+$/, '');
}
