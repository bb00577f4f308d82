import { isPermission } from '../account/index.js';
import { DATA_GRANT_PATTERN, DATA_LIMITS, type FieldType } from './vocabulary.js';

// What every definition check shares (tables, columns, groups): the request-wide problem list,
// the facts ids are checked against, and the shapes of keys, slugs, names and permissions.

/** Field problems gathered over a whole request; the service refuses them all at once. */
export class Problems {
  readonly errors: Record<string, string[]> = {};
  add(field: string, message: string) {
    (this.errors[field] ??= []).push(message);
  }
  get any(): boolean {
    return Object.keys(this.errors).length > 0;
  }
}

/** What a request's ids are checked against: the account's tables and users (read by the service). */
export interface AccountFacts {
  accountId: number;
  tableIds: Set<string>;
  userIds: Set<number>;
}

export const KEY = new RegExp(DATA_LIMITS.keyPattern);
export const SLUG = new RegExp(DATA_LIMITS.slugPattern);
const GRANT = new RegExp(DATA_GRANT_PATTERN);
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const NAME_MAX = 160;

export const NOT_UNIQUE: readonly FieldType[] = ['file', 'unknown'];
export const NUMERIC: readonly FieldType[] = ['number', 'currency', 'auto_number'];

export const validPermission = (p: unknown) => typeof p === 'string' && (isPermission(p) || GRANT.test(p));
export const isInt = (v: unknown, min: number, max: number) => typeof v === 'number' && Number.isInteger(v) && v >= min && v <= max;
export const labelOf = (key: string) => {
  const words = key.replace(/_+/g, ' ').trim();
  return words.charAt(0).toUpperCase() + words.slice(1);
};
export const sameList = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((x, i) => x === b[i]);

/** A slug from a name: lower case ASCII words joined by dashes. */
export function slugFrom(name: string): string {
  const s = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+/, '')
    .slice(0, 56)
    .replace(/-+$/, '');
  return s || 'table';
}

/** The name and slug of a table or group, as every create and update checks them. */
export function checkNameAndSlug(name: string, slug: string | undefined, p: Problems) {
  if (!name || name.length > NAME_MAX) p.add('name', `The name must be 1 to ${NAME_MAX} characters.`);
  if (slug !== undefined && !SLUG.test(slug))
    p.add('slug', 'A slug is 1 to 63 lower case letters, digits and dashes, starting with a letter or digit.');
}
