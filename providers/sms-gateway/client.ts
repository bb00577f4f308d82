// The SMS gateway's HTTP client (Twilio's Messages API shape). It talks to whatever base URL it is
// given, so the same code drives the local simulator and the real provider. The adapter (./index.ts)
// builds its requests; this module only moves them and turns answers into retry decisions.
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
import { twilioMessageForm } from './payload.js';

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
    const form = twilioMessageForm(r, this.o.messagingServiceSid);

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
    if (!isRecord(j) || typeof j.sid !== 'string') return unreadableReply(reply);
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
    if (!isRecord(j) || typeof j.status !== 'string') return unreadableReply(reply);
    return { ok: true, value: { status: j.status, errorCode: j.error_code == null ? null : String(j.error_code) } };
  }
}

function twilioFailure(reply: HttpReply): ProviderFailure {
  const j = isRecord(reply.json) ? reply.json : {};
  return httpFailure(reply, { code: j.code != null ? String(j.code) : null, message: typeof j.message === 'string' ? j.message : null });
}
