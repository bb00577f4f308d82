import crypto from 'node:crypto';

// Signatures of outgoing callbacks. Documented for receivers in docs/webhooks.md.

/** A Standard Webhooks secret: `whsec_` and base64 of 32 random bytes. */
export const newWebhookSecret = () => `whsec_${crypto.randomBytes(32).toString('base64')}`;

/** Standard Webhooks keys the HMAC with the base64-decoded part after `whsec_`. */
const keyBytes = (secret: string) => Buffer.from(secret.startsWith('whsec_') ? secret.slice(6) : secret, 'base64');

/**
 * The decoded key as a KeyObject, made once per secret: an HMAC keyed with a Buffer costs about
 * 16 µs on Node 24 (the Buffer is made into a key on every call), with a KeyObject under 2 µs, and a
 * dispatcher signs every delivery with it. Secrets are few (an endpoint's current one and a rotated
 * one in its overlap); the map is emptied if it ever holds more than a thousand.
 */
const v2Keys = new Map<string, crypto.KeyObject>();
function v2Key(secret: string): crypto.KeyObject {
  let key = v2Keys.get(secret);
  if (!key) {
    if (v2Keys.size >= 1000) v2Keys.clear();
    key = crypto.createSecretKey(keyBytes(secret));
    v2Keys.set(secret, key);
  }
  return key;
}

/** X-Signature (V1): hex HMAC-SHA256 of the raw body, keyed with the whole secret string as UTF-8. */
export const signV1 = (secret: string, body: string) => crypto.createHmac('sha256', secret).update(body).digest('hex');

/** One Standard Webhooks v1 signature: `v1,` + base64 HMAC-SHA256 of `{id}.{timestamp}.{body}`. */
export const signV2 = (secret: string, id: string, timestamp: number, body: string) =>
  `v1,${crypto.createHmac('sha256', v2Key(secret)).update(`${id}.${timestamp}.${body}`).digest('base64')}`;

/**
 * Headers of a communication callback. Every secret in `secrets` signs (the current one first, then
 * a rotated-out one still inside its overlap), space-separated as Standard Webhooks allows, so a
 * receiver holding either secret verifies.
 */
export function communicationHeaders(secrets: string[], eventId: string, body: string, now = new Date()): Record<string, string> {
  const ts = Math.floor(now.getTime() / 1000);
  const v2 = secrets.map((s) => signV2(s, eventId, ts, body)).join(' ');
  return {
    'content-type': 'application/json',
    'user-agent': 'svc-webhooks/1',
    'x-signature': secrets.map((s) => signV1(s, body)).join(' '),
    'x-signature-v2': v2,
    'webhook-id': eventId,
    'webhook-timestamp': String(ts),
    'webhook-signature': v2,
  };
}

/** X-Svc-Signature of automation callbacks: `t=<unix>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>`. */
export function svcSignature(secret: string, body: string, now = new Date()): string {
  const t = Math.floor(now.getTime() / 1000);
  return `t=${t},v1=${crypto.createHmac('sha256', secret).update(`${t}.${body}`).digest('hex')}`;
}

/** Receiver-side check of X-Svc-Signature (also used by our tests): constant time, 5-minute tolerance. */
export function verifySvcSignature(secret: string, body: string, header: string, toleranceSeconds = 300, now = new Date()): boolean {
  const parts = Object.fromEntries(header.split(',').map((kv) => kv.split('=', 2) as [string, string]));
  const t = Number(parts.t);
  if (!Number.isFinite(t) || Math.abs(now.getTime() / 1000 - t) > toleranceSeconds || !parts.v1) return false;
  const expected = crypto.createHmac('sha256', secret).update(`${t}.${body}`).digest('hex');
  return parts.v1.length === expected.length && crypto.timingSafeEqual(Buffer.from(parts.v1), Buffer.from(expected));
}

export function automationHeaders(secret: string, eventId: string, type: string, body: string, now = new Date()): Record<string, string> {
  return {
    'content-type': 'application/json',
    'user-agent': 'svc-automations/1',
    'x-svc-signature': svcSignature(secret, body, now),
    'x-svc-event-id': eventId,
    'x-svc-event-type': type,
  };
}
