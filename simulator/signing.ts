// Builds the exact bytes and headers of webhooks the real providers send. The simulator stands in
// for the providers, so it signs with its own code written from their documentation, never with
// our adapters': the integration tests then prove independently that our verifiers accept what a
// provider produces (a shared helper would let a wrong scheme pass on both sides).
import { createHmac } from 'node:crypto';

/** Twilio: base64 HMAC-SHA1 of the full URL followed by each form parameter's name and value, sorted by name. */
function signTwilio(authToken: string, url: string, params: Record<string, string>): string {
  let data = url;
  for (const key of Object.keys(params).sort()) data += key + params[key];
  return createHmac('sha1', authToken).update(data, 'utf8').digest('base64');
}

/** Meta: `sha256=` and the hex HMAC-SHA256 of the exact body bytes, keyed with the app secret. */
function signMeta(appSecret: string, rawBody: string): string {
  return `sha256=${createHmac('sha256', appSecret).update(rawBody, 'utf8').digest('hex')}`;
}

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

/**
 * Payment callbacks: Daraja signs nothing, so the simulator puts our own signature on them, the one a
 * production deployment must add in front of Safaricom (docs/payments.md, "Provider"):
 * `X-Callback-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>`.
 */
export function paymentJson(secret: string, payload: unknown, atSeconds: number = Math.floor(Date.now() / 1000)): SignedRequest {
  const rawBody = JSON.stringify(payload);
  const mac = createHmac('sha256', secret).update(`${atSeconds}.${rawBody}`, 'utf8').digest('hex');
  return {
    rawBody,
    headers: { 'content-type': 'application/json', 'x-callback-signature': `t=${atSeconds},v1=${mac}` },
    body: payload,
  };
}
