// The records list's opaque cursor (Records list query: cursor; notes §4.4): where the last page
// ended in the keyset order, bound to the query it was made for. This is its content, as JSON
// text; what a client holds is that text sealed (services/data/cursor-seal.ts: encrypted and
// authenticated), because the last sort value is a record's value the caller may not be meant to
// read (a masked column sorted by another caller, a grant withdrawn between pages). Everything
// read back is still checked before it reaches SQL, and anything that does not fit (garbage, an
// old version, another query's cursor) restarts at page one, as the contract says an invalid
// cursor does.

export const CURSOR_VERSION = 2;

/** How the sort value of the last row compares (and so how its text must look). */
export type SortValueKind = 'numeric' | 'boolean' | 'text' | 'timestamp';

/** The last row of a page in the keyset order. */
export interface CursorPosition {
  /** The sort value as text (a timestamp at full microsecond precision); null when the row had none. */
  last: string | null;
  /** The row's seq (bigint as decimal text): the tie-breaker. */
  seq: string;
  /** The walk has reached the rows without a sort value (they come last in both directions). */
  nulls: boolean;
}

/** What a cursor is bound to: the query's sort, direction and the hash of everything that selects rows. */
export interface CursorKey {
  sort: string;
  dir: 'asc' | 'desc';
  hash: string;
}

/**
 * A short, stable hash (cyrb53: two 32-bit multiplicative mixes folded into 53 bits) of the parts
 * that select and order the rows. Not a security measure; it tells a cursor of another query apart.
 */
export function queryHash(parts: readonly unknown[]): string {
  const str = JSON.stringify(parts);
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  for (let i = 0; i < str.length; i++) {
    const ch = str.charCodeAt(i);
    h1 = Math.imul(h1 ^ ch, 2654435761);
    h2 = Math.imul(h2 ^ ch, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return (4294967296 * (2097151 & h2) + (h1 >>> 0)).toString(36);
}

/** A JSON value with object keys in sorted order, so the same tree hashes the same however it was written. */
export function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value !== null && typeof value === 'object')
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((k) => [k, canonical((value as Record<string, unknown>)[k])]),
    );
  return value;
}

interface Wire {
  v: number;
  s: string;
  d: 'asc' | 'desc';
  h: string;
  l: string | null;
  q: string;
  n: boolean;
}

/** The cursor's content as JSON text (to be sealed before it leaves the service). */
export function encodeCursor(key: CursorKey, pos: CursorPosition): string {
  const wire: Wire = { v: CURSOR_VERSION, s: key.sort, d: key.dir, h: key.hash, l: pos.last, q: pos.seq, n: pos.nulls };
  return JSON.stringify(wire);
}

const SEQ = /^[1-9]\d{0,17}$/;

/** The position a cursor's (opened) content holds for this query, or null (start at page one) when it is not a valid cursor of it. */
export function decodeCursor(text: string | undefined | null, key: CursorKey, kind: SortValueKind): CursorPosition | null {
  if (!text || text.length > 16_384) return null;
  let wire: unknown;
  try {
    wire = JSON.parse(text);
  } catch {
    return null;
  }
  if (typeof wire !== 'object' || wire === null || Array.isArray(wire)) return null;
  const w = wire as Partial<Wire>;
  if (w.v !== CURSOR_VERSION || w.s !== key.sort || w.d !== key.dir || w.h !== key.hash) return null;
  if (typeof w.q !== 'string' || !SEQ.test(w.q) || typeof w.n !== 'boolean') return null;
  if (w.n) return w.l === null ? { last: null, seq: w.q, nulls: true } : null;
  if (typeof w.l !== 'string' || !validSortValue(kind, w.l)) return null;
  return { last: w.l, seq: w.q, nulls: false };
}

const NUMERIC = /^-?\d+(\.\d+)?$/;
const TIMESTAMP = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})\.(\d{6})Z$/;

/**
 * Whether a sort value read back from a cursor is one the database can take as its kind: a forged
 * cursor must restart the list, never make a statement fail.
 */
export function validSortValue(kind: SortValueKind, s: string): boolean {
  switch (kind) {
    case 'numeric':
      return s.length <= 1000 && NUMERIC.test(s);
    case 'boolean':
      return s === 'true' || s === 'false';
    case 'timestamp': {
      const m = TIMESTAMP.exec(s);
      if (!m) return false;
      const [y, mo, d, h, mi, sec] = m.slice(1, 7).map(Number);
      const days = [31, (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0 ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
      return y >= 1 && mo >= 1 && mo <= 12 && d >= 1 && d <= days[mo - 1] && h <= 23 && mi <= 59 && sec <= 59;
    }
    case 'text':
      return !s.includes('\0');
  }
}
