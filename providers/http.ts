// Shared HTTP plumbing for provider adapters. Activities decide whether to retry purely from
// ProviderResult, so every way a call can go wrong must collapse into `permanent` true/false here.
import { Agent, request, type Dispatcher } from 'undici';

export type ProviderResult<T> =
  | { ok: true; value: T }
  | { ok: false; permanent: boolean; code: string; message: string; retryAfterSeconds?: number; httpStatus?: number };

export type ProviderFailure = Extract<ProviderResult<never>, { ok: false }>;

export interface HttpReply {
  status: number;
  headers: { get(name: string): string | null };
  text: string;
  /** Parsed body when it was JSON, otherwise undefined. */
  json: unknown;
}

export interface HttpInit {
  method: string;
  headers: Record<string, string>;
  body?: string;
}

export const DEFAULT_TIMEOUT_MS = 15_000;

// One keep-alive pool per provider origin for the whole worker process: undici's request API costs
// a fraction of fetch's per call (no WHATWG streams, no AbortSignal per request), which matters at
// campaign rates.
const agent = new Agent({ connections: 128, keepAliveTimeout: 30_000, pipelining: 1 });

/**
 * Performs one request. Never throws: a transport problem becomes a retryable failure, because
 * at that point we cannot know whether the provider acted on the request (idempotency keys cover it).
 * The timeout bounds the wait for the headers and every pause while the body arrives, so a provider
 * that stalls mid-body still times out. undici runs these timers at about one second of resolution,
 * which is fine for provider timeouts measured in seconds.
 */
export async function httpRequest(
  url: string,
  init: HttpInit,
  timeoutMs: number = DEFAULT_TIMEOUT_MS,
): Promise<{ ok: true; reply: HttpReply } | { ok: false; failure: ProviderFailure }> {
  try {
    const res = await request(url, {
      method: init.method as Dispatcher.HttpMethod,
      headers: init.headers,
      body: init.body,
      dispatcher: agent,
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
    });
    const text = await res.body.text();
    let json: unknown;
    try {
      json = text.length > 0 ? JSON.parse(text) : undefined;
    } catch {
      json = undefined;
    }
    const headers = res.headers;
    return {
      ok: true,
      reply: {
        status: res.statusCode,
        text,
        json,
        headers: {
          get: (name) => {
            const v = headers[name.toLowerCase()];
            return v === undefined ? null : Array.isArray(v) ? v.join(', ') : v;
          },
        },
      },
    };
  } catch (err) {
    const e = err as Error & { code?: string; cause?: { code?: string; message?: string } };
    if (e.code === 'UND_ERR_HEADERS_TIMEOUT' || e.code === 'UND_ERR_BODY_TIMEOUT' || e.code === 'UND_ERR_CONNECT_TIMEOUT') {
      return { ok: false, failure: { ok: false, permanent: false, code: 'timeout', message: `no answer within ${timeoutMs} ms` } };
    }
    const detail = e.code ?? e.cause?.code ?? e.cause?.message;
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

/**
 * A refused HTTP answer as a retry decision: the provider's own code and message where its error
 * body has them (else `http_<status>` and the body's start), permanence from the status, and the
 * provider's Retry-After kept.
 */
export function httpFailure(reply: HttpReply, own: { code?: string | null; message?: string | null } = {}): ProviderFailure {
  const failure: ProviderFailure = {
    ok: false,
    permanent: isPermanentHttpStatus(reply.status),
    code: own.code ?? `http_${reply.status}`,
    message: own.message ?? (reply.text.slice(0, 200) || `HTTP ${reply.status}`),
    httpStatus: reply.status,
  };
  const retryAfter = parseRetryAfter(reply.headers.get('retry-after'));
  if (retryAfter !== undefined) failure.retryAfterSeconds = retryAfter;
  return failure;
}

/** A 2xx whose body cannot be read: the provider may have acted, so it is retryable (the idempotency key makes a retry safe). */
export const unreadableReply = (reply: HttpReply): ProviderFailure => ({
  ok: false,
  permanent: false,
  code: 'invalid_response',
  message: reply.text.slice(0, 200),
  httpStatus: reply.status,
});
