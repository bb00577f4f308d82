// X-Hub-Signature-256: `sha256=` and the hex HMAC-SHA256 of the exact body bytes, keyed with the app secret.
import { createHmac, timingSafeEqual } from 'node:crypto';

/** The value Meta puts in X-Hub-Signature-256 for a given raw body. */
export function signMeta(appSecret: string, rawBody: Buffer | string): string {
  return `sha256=${createHmac('sha256', appSecret).update(rawBody).digest('hex')}`;
}

/** Must be given the exact bytes received: re-serialised JSON will not match. */
export function verifyMetaSignature(appSecret: string, rawBody: Buffer | string, header: string | undefined): boolean {
  if (!header || !header.startsWith('sha256=')) return false;
  const expected = Buffer.from(signMeta(appSecret, rawBody), 'utf8');
  // Meta sends lowercase hex; accepting either case avoids rejecting a proxy-normalised header.
  const given = Buffer.from(`sha256=${header.slice('sha256='.length).toLowerCase()}`, 'utf8');
  return expected.length === given.length && timingSafeEqual(expected, given);
}
