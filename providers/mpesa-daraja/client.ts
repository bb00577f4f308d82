// Safaricom Daraja's HTTP client: an OAuth token (client credentials, cached until shortly before
// it expires), then JSON calls with it. It talks to whatever base URL it is given, so the same code
// drives the simulator and Safaricom (sandbox https://sandbox.safaricom.co.ke, production
// https://api.safaricom.co.ke). The adapter (./index.ts) builds the bodies; this module moves them
// and turns answers into retry decisions.
import {
  httpFailure,
  httpRequest,
  isRecord,
  trimSlash,
  unreadableReply,
  type HttpReply,
  type ProviderFailure,
  type ProviderResult,
} from '../http.js';

export interface DarajaOptions {
  baseUrl: string;
  consumerKey: string;
  consumerSecret: string;
  timeoutMs?: number;
  /** The clock (tests move it). */
  now?: () => number;
}

/** Daraja's error envelope code for an expired or unknown token: fetch a new one and try once more. */
export const INVALID_TOKEN = '404.001.03';
// A token is renewed this long before Daraja says it expires, so a call never carries a dying one.
const TOKEN_MARGIN_MS = 60_000;

export const STK_PUSH_PATH = '/mpesa/stkpush/v1/processrequest';
export const STK_QUERY_PATH = '/mpesa/stkpushquery/v1/query';
export const REVERSAL_PATH = '/mpesa/reversal/v1/request';
export const TOKEN_PATH = '/oauth/v1/generate?grant_type=client_credentials';

export type DarajaReply = { ok: true; status: number; json: Record<string, unknown> } | { ok: false; failure: ProviderFailure };

export class DarajaClient {
  private readonly baseUrl: string;
  private readonly basic: string;
  private token: { value: string; until: number } | null = null;
  private pending: Promise<ProviderResult<string>> | null = null;
  private readonly now: () => number;

  constructor(private readonly o: DarajaOptions) {
    this.baseUrl = trimSlash(o.baseUrl);
    this.basic = `Basic ${Buffer.from(`${o.consumerKey}:${o.consumerSecret}`).toString('base64')}`;
    this.now = o.now ?? Date.now;
  }

  /** A POST with the bearer token; an invalid-token answer renews the token and tries once more. */
  async post(path: string, body: Record<string, unknown>, extraHeaders: Record<string, string> = {}): Promise<DarajaReply> {
    for (let attempt = 0; ; attempt++) {
      const token = await this.accessToken(attempt > 0);
      if (!token.ok) return { ok: false, failure: token };
      const res = await httpRequest(
        `${this.baseUrl}${path}`,
        {
          method: 'POST',
          headers: {
            authorization: `Bearer ${token.value}`,
            'content-type': 'application/json',
            accept: 'application/json',
            ...extraHeaders,
          },
          body: JSON.stringify(body),
        },
        this.o.timeoutMs,
      );
      if (!res.ok) return { ok: false, failure: res.failure };
      const { reply } = res;
      if (attempt === 0 && errorCodeOf(reply) === INVALID_TOKEN) {
        this.token = null;
        continue;
      }
      if (reply.status < 200 || reply.status >= 300) return { ok: false, failure: darajaFailure(reply) };
      if (!isRecord(reply.json)) return { ok: false, failure: unreadableReply(reply) };
      return { ok: true, status: reply.status, json: reply.json };
    }
  }

  /**
   * A GET with the bearer token whose answer is text (a statement download), renewed and tried once
   * more on an invalid token as post() does; a refused answer is a retry decision from Daraja's envelope.
   */
  async getText(
    pathAndQuery: string,
    accept: string,
  ): Promise<{ ok: true; text: string; contentType: string } | { ok: false; failure: ProviderFailure }> {
    for (let attempt = 0; ; attempt++) {
      const token = await this.accessToken(attempt > 0);
      if (!token.ok) return { ok: false, failure: token };
      const res = await httpRequest(
        `${this.baseUrl}${pathAndQuery}`,
        { method: 'GET', headers: { authorization: `Bearer ${token.value}`, accept } },
        this.o.timeoutMs,
      );
      if (!res.ok) return { ok: false, failure: res.failure };
      const { reply } = res;
      if (attempt === 0 && errorCodeOf(reply) === INVALID_TOKEN) {
        this.token = null;
        continue;
      }
      if (reply.status < 200 || reply.status >= 300) return { ok: false, failure: darajaFailure(reply) };
      return { ok: true, text: reply.text, contentType: reply.headers.get('content-type') ?? '' };
    }
  }

  private accessToken(renew: boolean): Promise<ProviderResult<string>> {
    if (!renew && this.token && this.token.until > this.now()) return Promise.resolve({ ok: true, value: this.token.value });
    // Calls that find the token stale together share one renewal.
    this.pending ??= this.fetchToken().finally(() => (this.pending = null));
    return this.pending;
  }

  private async fetchToken(): Promise<ProviderResult<string>> {
    const res = await httpRequest(
      `${this.baseUrl}${TOKEN_PATH}`,
      { method: 'GET', headers: { authorization: this.basic, accept: 'application/json' } },
      this.o.timeoutMs,
    );
    if (!res.ok) return res.failure;
    const { reply } = res;
    if (reply.status !== 200) {
      const f = darajaFailure(reply);
      // Wrong consumer key or secret: no retry will fix it.
      return reply.status === 400 || reply.status === 401
        ? { ...f, permanent: true, code: f.code === `http_${reply.status}` ? 'invalid_credentials' : f.code }
        : f;
    }
    const j = reply.json;
    const value = isRecord(j) && typeof j.access_token === 'string' ? j.access_token : null;
    if (!value) return unreadableReply(reply);
    // expires_in is a string ("3599") on Daraja; a number is read the same way.
    const seconds = isRecord(j) ? Number(j.expires_in) : NaN;
    const lifeMs = Number.isFinite(seconds) && seconds > 0 ? seconds * 1000 : 3599_000;
    this.token = { value, until: this.now() + Math.max(0, lifeMs - TOKEN_MARGIN_MS) };
    return { ok: true, value };
  }
}

export function errorCodeOf(reply: HttpReply): string | null {
  return isRecord(reply.json) && typeof reply.json.errorCode === 'string' ? reply.json.errorCode : null;
}

/** Daraja's error envelope {requestId, errorCode, errorMessage} as a retry decision. */
export function darajaFailure(reply: HttpReply): ProviderFailure {
  const j = isRecord(reply.json) ? reply.json : {};
  return httpFailure(reply, { code: errorCodeOf(reply), message: typeof j.errorMessage === 'string' ? j.errorMessage : null });
}
