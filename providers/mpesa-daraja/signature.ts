// Payment callbacks are signed with a scheme of our own: Daraja signs nothing (notes §5.1, "no
// signature, and the sender cannot add auth headers"). The simulator signs its callbacks this way,
// and a production deployment must put the same signature on them (a relay in front of Safaricom's
// posts) or confirm every result by STK Query before applying it (docs/payments.md, "Provider").
//
//   X-Callback-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>
//
// Stripe's layout: the timestamp is inside the signed text, so an old callback replayed later fails
// the freshness window even though its MAC is genuine. A replay inside the window is a duplicate
// callback, which the payment's workflow drops (the same provider ref and outcome change nothing twice).
import { createHmac, timingSafeEqual } from 'node:crypto';

export const CALLBACK_SIGNATURE_HEADER = 'x-callback-signature';
/** How far a callback's timestamp may be from our clock, either way (Stripe's default tolerance). */
export const CALLBACK_TOLERANCE_SECONDS = 300;

export function signCallback(secret: string, rawBody: Buffer | string, atSeconds: number): string {
  const mac = createHmac('sha256', secret).update(`${atSeconds}.`).update(rawBody).digest('hex');
  return `t=${atSeconds},v1=${mac}`;
}

/** Valid MAC over these exact bytes and a timestamp within the tolerance of `nowMs`. */
export function verifyCallbackSignature(
  secret: string,
  rawBody: Buffer | string,
  header: string | undefined,
  nowMs: number = Date.now(),
  toleranceSeconds: number = CALLBACK_TOLERANCE_SECONDS,
): boolean {
  if (!header || secret === '') return false;
  let t: number | null = null;
  const macs: string[] = [];
  for (const part of header.split(',')) {
    const eq = part.indexOf('=');
    const k = part.slice(0, eq).trim();
    const v = part.slice(eq + 1).trim();
    if (k === 't' && /^\d{1,12}$/.test(v)) t = Number(v);
    else if (k === 'v1' && /^[0-9a-fA-F]{64}$/.test(v)) macs.push(v.toLowerCase());
  }
  if (t === null || macs.length === 0) return false;
  if (Math.abs(nowMs / 1000 - t) > toleranceSeconds) return false;
  const expected = Buffer.from(signCallback(secret, rawBody, t).slice(`t=${t},v1=`.length), 'utf8');
  // Several v1 values are accepted so a secret can be rotated while the sender signs with both.
  return macs.some((mac) => timingSafeEqual(expected, Buffer.from(mac, 'utf8')));
}
