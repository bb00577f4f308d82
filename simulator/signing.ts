// Builds the exact bytes and headers of webhooks the real providers send. The signing functions
// come from the adapters so the simulator and our verifier cannot drift apart silently; the
// integration tests then prove the verifier accepts what the simulator produces.
import { signTwilio } from '../activities/providers/sms-gateway/client.js';
import { signMeta } from '../activities/providers/whatsapp-cloud/client.js';

export interface SignedRequest {
  rawBody: string;
  headers: Record<string, string>;
  /** Parsed form of the body, kept for /_sim/callbacks. */
  body: unknown;
}

/** Twilio signs the full callback URL (query included) plus the sorted form parameters. */
export function twilioForm(authToken: string, url: string, params: Record<string, string>): SignedRequest {
  return {
    rawBody: new URLSearchParams(params).toString(),
    headers: {
      'content-type': 'application/x-www-form-urlencoded; charset=utf-8',
      'user-agent': 'TwilioProxy/1.1',
      'x-twilio-signature': signTwilio(authToken, url, params),
    },
    body: params,
  };
}

/** Meta signs the raw JSON bytes, so the body is serialised once here and sent verbatim. */
export function metaJson(appSecret: string, payload: unknown): SignedRequest {
  const rawBody = JSON.stringify(payload);
  return {
    rawBody,
    headers: {
      'content-type': 'application/json',
      'user-agent': 'facebookexternalua',
      'x-hub-signature-256': signMeta(appSecret, rawBody),
    },
    body: payload,
  };
}
