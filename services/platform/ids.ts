import { newSecret } from './secrets.js';
import { notFound } from './errors.js';

/** Public uids: a readable prefix and 20 random characters; opaque to clients. */
export const newUid = (prefix: 'msg' | 'cmp' | 'ctc' | 'acc' | 'evt' | 'pst') => `${prefix}_${newSecret(20)}`;

/**
 * A numeric id from a path segment: digits only and within PostgreSQL's integer range, else the
 * resource is not found (a malformed id names nothing, the same as an unknown one).
 */
export function numericId(ref: string | number, what = 'Resource'): number {
  const n = typeof ref === 'number' ? ref : /^\d{1,10}$/.test(ref) ? Number(ref) : NaN;
  if (!Number.isSafeInteger(n) || n < 1 || n > 2_147_483_647) throw notFound(what);
  return n;
}
