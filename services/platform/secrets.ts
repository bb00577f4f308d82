import crypto from 'node:crypto';

// API keys, MCP credentials and webhook secrets: generated here, stored only as hashes where they authenticate.
export const MCP_PREFIX = 'svc_mcp_';

export const hashToken = (token: string) => crypto.createHash('sha256').update(token).digest('hex');

/** What identifies a key without its secret: its first and last four characters (the listings' `hint`, the failure throttle's key). */
export const tokenHint = (token: string) => `${token.slice(0, 4)}…${token.slice(-4)}`;

// Random bytes are drawn from a pool refilled 4 KiB at a time: public uids are minted for every
// message and event (thousands a second), and one randomBytes call per uid was a measurable share
// of the API's and the worker's CPU. The bytes are the same CSPRNG output either way.
let pool = Buffer.alloc(0);
let used = 0;
function randomByte(): number {
  if (used === pool.length) {
    pool = crypto.randomBytes(4096);
    used = 0;
  }
  return pool[used++];
}

/** A 64-character secret from a 62-letter alphabet (about 381 bits), shown once and stored hashed. */
export function newSecret(length = 64): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
  let out = '';
  while (out.length < length) {
    const b = randomByte();
    if (b < 248) out += alphabet[b % 62]; // 248 = 4 × 62: no bias towards the first letters
  }
  return out;
}
