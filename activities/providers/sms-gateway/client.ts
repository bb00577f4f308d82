// Twilio-shaped SMS gateway adapter. It talks to whatever base URL it is given, so the same code
// drives the local simulator and the real provider.
import { createHmac, timingSafeEqual } from 'node:crypto';
import {
  httpRequest,
  isPermanentHttpStatus,
  isRecord,
  parseRetryAfter,
  trimSlash,
  type HttpReply,
  type ProviderFailure,
  type ProviderResult,
} from '../http.js';

export type { ProviderResult } from '../http.js';

export interface SmsGatewayOptions {
  baseUrl: string;
  accountSid: string;
  authToken: string;
  timeoutMs?: number;
  /** Used only when a send has no `from`; Twilio otherwise rejects the send with 21603. */
  messagingServiceSid?: string;
}

export interface SmsSendRequest {
  to: string;
  from: string | null;
  body: string;
  mediaUrl?: string | null;
  statusCallback?: string;
  idempotencyKey: string;
}

export interface SmsSendResult {
  providerMessageId: string;
  status: string;
  segments: number;
}

export interface SmsStatusResult {
  status: string;
  errorCode: string | null;
}

export class SmsGatewayClient {
  private readonly accountUrl: string;
  private readonly authHeader: string;

  constructor(private readonly o: SmsGatewayOptions) {
    this.accountUrl = `${trimSlash(o.baseUrl)}/2010-04-01/Accounts/${encodeURIComponent(o.accountSid)}`;
    this.authHeader = `Basic ${Buffer.from(`${o.accountSid}:${o.authToken}`).toString('base64')}`;
  }

  async send(r: SmsSendRequest): Promise<ProviderResult<SmsSendResult>> {
    const form = new URLSearchParams();
    form.set('To', toE164(r.to));
    // toE164 leaves short codes and alphanumeric sender ids untouched, so they never gain a '+'.
    if (r.from) form.set('From', toE164(r.from));
    else if (this.o.messagingServiceSid) form.set('MessagingServiceSid', this.o.messagingServiceSid);
    // Twilio accepts a media-only message; an empty Body field would be rejected as missing anyway.
    if (r.body !== '') form.set('Body', r.body);
    if (r.mediaUrl) form.append('MediaUrl', r.mediaUrl);
    if (r.statusCallback) form.set('StatusCallback', r.statusCallback);

    const res = await httpRequest(
      `${this.accountUrl}/Messages.json`,
      {
        method: 'POST',
        headers: {
          authorization: this.authHeader,
          accept: 'application/json',
          'content-type': 'application/x-www-form-urlencoded',
          // A retried activity reuses the key, so a send whose response was lost is not sent twice.
          'i-twilio-idempotency-token': r.idempotencyKey,
        },
        body: form.toString(),
      },
      this.o.timeoutMs,
    );
    if (!res.ok) return res.failure;
    const { reply } = res;
    if (reply.status !== 200 && reply.status !== 201) return twilioFailure(reply);
    const j = reply.json;
    if (!isRecord(j) || typeof j.sid !== 'string') return malformed(reply);
    return {
      ok: true,
      value: {
        providerMessageId: j.sid,
        status: typeof j.status === 'string' ? j.status : 'queued',
        segments: Number(j.num_segments) || 1,
      },
    };
  }

  async fetchStatus(providerMessageId: string): Promise<ProviderResult<SmsStatusResult>> {
    const res = await httpRequest(
      `${this.accountUrl}/Messages/${encodeURIComponent(providerMessageId)}.json`,
      { method: 'GET', headers: { authorization: this.authHeader, accept: 'application/json' } },
      this.o.timeoutMs,
    );
    if (!res.ok) return res.failure;
    const { reply } = res;
    if (reply.status !== 200) return twilioFailure(reply);
    const j = reply.json;
    if (!isRecord(j) || typeof j.status !== 'string') return malformed(reply);
    return { ok: true, value: { status: j.status, errorCode: j.error_code == null ? null : String(j.error_code) } };
  }
}

function twilioFailure(reply: HttpReply): ProviderFailure {
  const j = isRecord(reply.json) ? reply.json : {};
  const failure: ProviderFailure = {
    ok: false,
    permanent: isPermanentHttpStatus(reply.status),
    code: j.code != null ? String(j.code) : `http_${reply.status}`,
    message: typeof j.message === 'string' ? j.message : reply.text.slice(0, 200) || `HTTP ${reply.status}`,
    httpStatus: reply.status,
  };
  const retryAfter = parseRetryAfter(reply.headers.get('retry-after'));
  if (retryAfter !== undefined) failure.retryAfterSeconds = retryAfter;
  return failure;
}

// A 2xx we cannot read may still mean the message went out; only the idempotency key makes a retry safe.
function malformed(reply: HttpReply): ProviderFailure {
  return { ok: false, permanent: false, code: 'invalid_response', message: reply.text.slice(0, 200), httpStatus: reply.status };
}

/** Phone numbers go out as +digits; anything that is not a plausible MSISDN is left for the provider to judge. */
export function toE164(raw: string): string {
  const compact = raw.replace(/[\s\-().]/g, '');
  return /^\+?\d{8,15}$/.test(compact) ? `+${compact.replace(/^\+/, '')}` : raw.trim();
}

export function signTwilio(authToken: string, url: string, params: Record<string, string>): string {
  const data = Object.keys(params)
    .sort()
    .reduce((acc, key) => acc + key + params[key], url);
  return createHmac('sha1', authToken).update(data, 'utf8').digest('base64');
}

export function verifyTwilioSignature(
  authToken: string,
  url: string,
  params: Record<string, string>,
  signature: string | undefined,
): boolean {
  if (!signature) return false;
  const expected = Buffer.from(signTwilio(authToken, url, params), 'utf8');
  const given = Buffer.from(signature, 'utf8');
  // timingSafeEqual throws on unequal lengths; a length mismatch leaks nothing secret.
  return expected.length === given.length && timingSafeEqual(expected, given);
}
