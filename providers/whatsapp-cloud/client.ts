// The WhatsApp Cloud API (Graph) HTTP client. The adapter (./index.ts, ./payload.ts) builds the
// message body; this module only moves it and turns Graph answers into retry decisions.
import { httpRequest, isRecord, parseRetryAfter, trimSlash, type HttpReply, type ProviderFailure, type ProviderResult } from '../http.js';

export type { ProviderResult } from '../http.js';

export interface WhatsAppCloudOptions {
  /** e.g. https://graph.facebook.com/v21.0 or http://127.0.0.1:4010/whatsapp/v21.0 */
  baseUrl: string;
  accessToken: string;
  timeoutMs?: number;
}

export interface WhatsAppSendResult {
  providerMessageId: string;
  waId: string | null;
}

/**
 * Graph codes that describe a temporary condition. 130429/131056/4/80007 are throttles; 1, 2 and 131000
 * are Meta's "unknown/temporarily unavailable/something went wrong". Everything else is a request the
 * provider will refuse again.
 */
const RETRYABLE_GRAPH_CODES = new Set([1, 2, 4, 80007, 130429, 131000, 131056]);

// Meta sends no Retry-After for the pair limit; its documented pace is one message per 6 s per user.
const PAIR_RATE_RETRY_SECONDS = 6;

export class WhatsAppCloudClient {
  private readonly baseUrl: string;

  constructor(private readonly o: WhatsAppCloudOptions) {
    this.baseUrl = trimSlash(o.baseUrl);
  }

  async send(phoneNumberId: string, payload: object, idempotencyKey: string): Promise<ProviderResult<WhatsAppSendResult>> {
    const res = await httpRequest(
      `${this.baseUrl}/${encodeURIComponent(phoneNumberId)}/messages`,
      {
        method: 'POST',
        headers: {
          authorization: `Bearer ${this.o.accessToken}`,
          'content-type': 'application/json',
          accept: 'application/json',
          // Graph has no idempotency support and ignores unknown headers; sending the key anyway lets
          // the simulator (and our logs) spot a retried activity that produced a second real send.
          'x-idempotency-key': idempotencyKey,
        },
        body: JSON.stringify(payload),
      },
      this.o.timeoutMs,
    );
    if (!res.ok) return res.failure;
    const { reply } = res;
    if (reply.status < 200 || reply.status >= 300) return graphFailure(reply);
    const j = reply.json;
    const messages = isRecord(j) && Array.isArray(j.messages) ? j.messages : [];
    const first: unknown = messages[0];
    if (!isRecord(first) || typeof first.id !== 'string') {
      return { ok: false, permanent: false, code: 'invalid_response', message: reply.text.slice(0, 200), httpStatus: reply.status };
    }
    const contacts = isRecord(j) && Array.isArray(j.contacts) ? j.contacts : [];
    const contact: unknown = contacts[0];
    const waId = isRecord(contact) && typeof contact.wa_id === 'string' ? contact.wa_id : null;
    return { ok: true, value: { providerMessageId: first.id, waId } };
  }
}

/** A Graph error answer as a retry decision (the Groups calls in ./groups.ts share it). */
export function graphFailure(reply: HttpReply): ProviderFailure {
  const err = isRecord(reply.json) && isRecord(reply.json.error) ? reply.json.error : null;
  const graphCode = err && typeof err.code === 'number' ? err.code : null;
  const retryable =
    reply.status >= 500 || reply.status === 429 || reply.status === 408 || (graphCode !== null && RETRYABLE_GRAPH_CODES.has(graphCode));
  const details = err && isRecord(err.error_data) && typeof err.error_data.details === 'string' ? err.error_data.details : null;
  const base = err && typeof err.message === 'string' ? err.message : reply.text.slice(0, 200) || `HTTP ${reply.status}`;
  const failure: ProviderFailure = {
    ok: false,
    permanent: !retryable,
    code: graphCode !== null ? String(graphCode) : `http_${reply.status}`,
    message: details ? `${base}: ${details}` : base,
    httpStatus: reply.status,
  };
  const retryAfter = parseRetryAfter(reply.headers.get('retry-after')) ?? (graphCode === 131056 ? PAIR_RATE_RETRY_SECONDS : undefined);
  if (retryAfter !== undefined) failure.retryAfterSeconds = retryAfter;
  return failure;
}

/**
 * One Graph API request with the business's token, a JSON body when there is one: the group and
 * template management calls go through it (`path` is below the API version, with its leading slash).
 */
export function graphRequest(
  o: Pick<WhatsAppCloudOptions, 'baseUrl' | 'accessToken' | 'timeoutMs'>,
  method: 'GET' | 'POST' | 'DELETE',
  path: string,
  body?: object,
  headers: Record<string, string> = {},
) {
  return httpRequest(
    `${trimSlash(o.baseUrl)}${path}`,
    {
      method,
      headers: {
        authorization: `Bearer ${o.accessToken}`,
        accept: 'application/json',
        ...(body ? { 'content-type': 'application/json' } : {}),
        ...headers,
      },
      body: body ? JSON.stringify(body) : undefined,
    },
    o.timeoutMs,
  );
}
