import crypto from 'node:crypto';

// API keys, MCP credentials and webhook secrets: generated here, stored only as hashes where they authenticate.
export const MCP_PREFIX = 'svc_mcp_';

export const hashToken = (token: string) => crypto.createHash('sha256').update(token).digest('hex');

/** A 64-character secret from a 62-letter alphabet (about 381 bits), shown once and stored hashed. */
export function newSecret(length = 64): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
  const out: string[] = [];
  while (out.length < length) {
    for (const b of crypto.randomBytes(length)) {
      if (b < 248 && out.length < length) out.push(alphabet[b % 62]);
    }
  }
  return out.join('');
}
