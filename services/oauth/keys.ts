import crypto from 'node:crypto';

// The authorization server's keys, derived from OAUTH_SECRET (config.ts) so a deployment keeps one
// secret like its others, every API process derives the same keys, and nothing is written to disk:
// the cookie keys (the provider signs its session and interaction cookies with them) and an ES256
// signing key (its JWKS: ID tokens, when a client asks for openid; access tokens are opaque).
// Several space-separated values rotate: the first signs, all verify.

const P256_ORDER = BigInt('0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551');

const hkdf = (secret: string, info: string, bytes: number) =>
  Buffer.from(crypto.hkdfSync('sha256', Buffer.from(secret, 'utf8'), Buffer.from('svc-oauth', 'utf8'), Buffer.from(info, 'utf8'), bytes));

/** The secrets OAUTH_SECRET holds, newest first. */
export const oauthSecrets = (value: string) => value.split(/[\s,]+/).filter((s) => s !== '');

/** The provider's cookie keys (Keygrip: the first signs, every one verifies). */
export const cookieKeys = (value: string) => oauthSecrets(value).map((s) => hkdf(s, 'cookie-keys', 32).toString('base64url'));

export interface SigningJwk {
  kty: 'EC';
  crv: 'P-256';
  x: string;
  y: string;
  d: string;
  alg: 'ES256';
  use: 'sig';
  kid: string;
}

/**
 * An ES256 key from one secret: the private scalar drawn by HKDF (48 bytes reduced into [1, n-1],
 * which leaves no measurable bias), the public point computed from it, the key id its RFC 7638
 * thumbprint.
 */
export function signingJwk(secret: string): SigningJwk {
  const wide = BigInt(`0x${hkdf(secret, 'es256-signing-key', 48).toString('hex')}`);
  const scalar = (wide % (P256_ORDER - 1n)) + 1n;
  const d = Buffer.from(scalar.toString(16).padStart(64, '0'), 'hex');
  const ecdh = crypto.createECDH('prime256v1');
  ecdh.setPrivateKey(d);
  const point = ecdh.getPublicKey(); // 0x04 || x || y
  const x = point.subarray(1, 33).toString('base64url');
  const y = point.subarray(33, 65).toString('base64url');
  const kid = crypto
    .createHash('sha256')
    .update(JSON.stringify({ crv: 'P-256', kty: 'EC', x, y }))
    .digest('base64url');
  return { kty: 'EC', crv: 'P-256', x, y, d: d.toString('base64url'), alg: 'ES256', use: 'sig', kid };
}

/** The provider's JWKS: one key per secret, the first the one it signs with. */
export const signingKeys = (value: string) => ({ keys: oauthSecrets(value).map(signingJwk) });
