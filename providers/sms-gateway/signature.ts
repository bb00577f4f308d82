// X-Twilio-Signature: base64 HMAC-SHA1, keyed with the auth token, over the full URL the provider
// called (query included) followed by each form parameter's name and value, sorted by name.
import { createHmac, timingSafeEqual } from 'node:crypto';

export function signTwilio(authToken: string, url: string, params: Record<string, string>): string {
  let data = url;
  for (const key of Object.keys(params).sort()) data += key + params[key];
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
