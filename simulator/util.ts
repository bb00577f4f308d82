// Small helpers shared by both provider fakes: identifiers, phone handling and timestamps in the
// formats each provider actually uses.
import { randomBytes } from 'node:crypto';
import type { Exchange } from './exchange.js';

// Random bytes are drawn in blocks: one CSPRNG call per 256 sids instead of one per send.
let pool = Buffer.alloc(0);
let poolOffset = 0;

function randomHex(bytes: number): string {
  if (poolOffset + bytes > pool.length) {
    pool = randomBytes(4096);
    poolOffset = 0;
  }
  const hex = pool.toString('hex', poolOffset, poolOffset + bytes);
  poolOffset += bytes;
  return hex;
}

/** Twilio resource sids are a two-letter prefix plus 32 lowercase hex characters. */
export function twilioSid(prefix: 'SM' | 'MG' = 'SM'): string {
  return prefix + randomHex(16);
}

/** Real wamids are base64 of a protobuf; receivers must treat them as opaque, so random base64 is enough. */
export function wamid(waId: string): string {
  const payload = Buffer.concat([Buffer.from(`HBgL${waId}FQIAERgS`), randomBytes(18)]);
  return `wamid.${payload.toString('base64').replace(/=+$/, '')}`;
}

export function digitsOf(value: string): string {
  return value.replace(/\D/g, '');
}

/** The brief's rule for a usable recipient: 8–15 digits with an optional leading '+'. */
export function isMsisdn(value: string): boolean {
  return /^\+?\d{8,15}$/.test(value);
}

/** Designated test numbers that no handset will ever receive. */
export function isUndeliverable(value: string): boolean {
  return digitsOf(value).endsWith('0000');
}

/** Twilio's date fields, e.g. "Thu, 30 Jul 2015 20:12:31 +0000". */
export function rfc2822(ms: number = Date.now()): string {
  return new Date(ms).toUTCString().replace('GMT', '+0000');
}

/** Meta timestamps are unix seconds as strings. */
export function unixSeconds(ms: number = Date.now()): string {
  return String(Math.floor(ms / 1000));
}

// Every send of a campaign carries the same StatusCallback, so the last accepted URL is remembered
// instead of being parsed again for each message.
let lastHttpUrl: string | null = null;

export function isHttpUrl(value: unknown): value is string {
  if (typeof value !== 'string') return false;
  if (value === lastHttpUrl) return true;
  let ok: boolean;
  try {
    const u = new URL(value);
    ok = u.protocol === 'http:' || u.protocol === 'https:';
  } catch {
    return false;
  }
  if (ok) lastHttpUrl = value;
  return ok;
}

/** Headers worth keeping for inspection; secrets are reduced to what a test might assert on. */
export function headersOfInterest(ctx: Exchange): Record<string, string> {
  const keep = ['content-type', 'user-agent', 'i-twilio-idempotency-token', 'x-idempotency-key', 'accept'];
  const out: Record<string, string> = {};
  for (const name of keep) {
    const v = ctx.get(name);
    if (v) out[name] = v;
  }
  const auth = ctx.get('authorization');
  if (auth) out.authorization = maskedAuthorization(auth);
  return out;
}

// Every send repeats the same credentials, so the masked form of the last header is reused.
let lastAuth = '';
let lastMasked = '';

function maskedAuthorization(auth: string): string {
  if (auth === lastAuth) return lastMasked;
  const [scheme = ''] = auth.split(' ');
  let masked: string;
  if (scheme.toLowerCase() === 'basic') {
    const user = Buffer.from(auth.slice(6).trim(), 'base64').toString('utf8').split(':')[0] ?? '';
    masked = `Basic ${user}:***`;
  } else {
    masked = `${scheme} ***`;
  }
  lastAuth = auth;
  lastMasked = masked;
  return masked;
}
