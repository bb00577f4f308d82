import crypto from 'node:crypto';
import { promisify } from 'node:util';
import type { EntityManager } from '@mikro-orm/postgresql';
import { passwordProblem } from '../../domain/oauth/index.js';
import { validationFailed } from '../platform/errors.js';
import { peopleWithEmail, type PersonRow } from '../account/index.js';
import { passwordHashesOf, savePasswordHash } from './store.js';

// People's passwords: scrypt from node:crypto (no dependency; docs/decisions.md, "Sign-in
// passwords"), at OWASP's parameters for it (N = 2^17, r = 8, p = 1: 128 MiB and a few hundred
// milliseconds a hash), each hash carrying its own cost so the cost can be raised later.

const scrypt = promisify(crypto.scrypt) as (
  password: string,
  salt: Buffer,
  keylen: number,
  options: crypto.ScryptOptions,
) => Promise<Buffer>;

export interface ScryptCost {
  N: number;
  r: number;
  p: number;
}
export const SCRYPT_COST: ScryptCost = { N: 2 ** 17, r: 8, p: 1 };
const KEY_BYTES = 32;
const SALT_BYTES = 16;
/** Room for the largest cost a stored hash may name (scrypt needs 128 · N · r bytes). */
const maxmem = (c: ScryptCost) => 128 * c.N * c.r * 2;

/** `scrypt$N$r$p$salt$hash` (base64url), the password's Unicode normalised (NFC) first: the same password typed on any keyboard. */
export async function hashPassword(password: string, cost: ScryptCost = SCRYPT_COST): Promise<string> {
  const salt = crypto.randomBytes(SALT_BYTES);
  const key = await scrypt(password.normalize('NFC'), salt, KEY_BYTES, { ...cost, maxmem: maxmem(cost) });
  return `scrypt$${cost.N}$${cost.r}$${cost.p}$${salt.toString('base64url')}$${key.toString('base64url')}`;
}

/** Whether the password matches the stored hash (compared in constant time); false for a hash this code cannot read. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const m = /^scrypt\$(\d+)\$(\d+)\$(\d+)\$([A-Za-z0-9_-]+)\$([A-Za-z0-9_-]+)$/.exec(stored);
  if (!m) return false;
  const cost = { N: Number(m[1]), r: Number(m[2]), p: Number(m[3]) };
  // A stored cost out of these bounds is not ours: refuse it rather than spend what it asks.
  if (cost.N < 2 ** 14 || cost.N > 2 ** 20 || cost.r < 1 || cost.r > 32 || cost.p < 1 || cost.p > 4) return false;
  const expected = Buffer.from(m[5], 'base64url');
  const key = await scrypt(password.normalize('NFC'), Buffer.from(m[4], 'base64url'), expected.length, { ...cost, maxmem: maxmem(cost) });
  return key.length === expected.length && crypto.timingSafeEqual(key, expected);
}

/** Spent when there is no hash to compare with, so an unknown email costs what a known one does. */
let decoy: Promise<string> | null = null;
const decoyHash = () => (decoy ??= hashPassword(crypto.randomBytes(16).toString('hex')));

/** At most this many user rows share one email in the check (each costs one scrypt). */
const MAX_ROWS_PER_EMAIL = 10;

/**
 * The people this email and password sign in as: every active user of an active account with that
 * email whose password matches (a person invited into several accounts may have one password in
 * several). Empty when nothing matches, which the door words the same whatever the reason.
 */
export async function peopleSigningIn(em: EntityManager, email: string, password: string): Promise<PersonRow[]> {
  const people = (await peopleWithEmail(em, email.trim(), MAX_ROWS_PER_EMAIL)).filter((p) => p.active && p.account_status === 'active');
  const hashes = await passwordHashesOf(
    em,
    people.map((p) => p.id),
  );
  const checked = people.filter((p) => hashes.has(p.id));
  if (!checked.length) {
    await verifyPassword(password, await decoyHash());
    return [];
  }
  const matches = await Promise.all(checked.map((p) => verifyPassword(password, hashes.get(p.id)!)));
  return checked.filter((_, i) => matches[i]);
}

/** Sets a person's password (422 naming `password` when it is not one: domain/oauth/passwords.ts). */
export async function setPassword(
  em: EntityManager,
  person: Pick<PersonRow, 'id' | 'account_id' | 'email'>,
  password: string,
): Promise<void> {
  const problem = passwordProblem(password, person.email);
  if (problem) throw validationFailed({ password: [problem] }, problem);
  await savePasswordHash(em, person.account_id, person.id, await hashPassword(password));
}
