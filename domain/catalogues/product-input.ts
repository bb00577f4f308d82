import { derivedAvailability, issuedSku } from './products.js';
import { CATALOGUE_LIMITS, type Availability } from './vocabulary.js';

// Pure rules of the catalogue and product writes: the list pages of this family, the sku and its
// older name retailer_id, issuing a sku past the ones callers chose, availability on a write, and
// when a sku is frozen.

/**
 * The family's page-number lists: default 25, `limit` wins over `per_page`, at most 100, and a
 * nonpositive (or unreadable) value reads as the default rather than a refusal, as the contract says.
 */
export function listPage(q: { page?: number; per_page?: number; limit?: number }) {
  const asked = q.limit ?? q.per_page;
  const perPage =
    asked !== undefined && Number.isFinite(asked) && asked > 0
      ? Math.min(CATALOGUE_LIMITS.pageMax, Math.floor(asked))
      : CATALOGUE_LIMITS.pageDefault;
  const page = q.page !== undefined && Number.isFinite(q.page) && q.page > 0 ? Math.floor(q.page) : 1;
  return { page, perPage, offset: (page - 1) * perPage };
}

export type FieldProblems = Record<string, string[]>;

/**
 * The sku a create names: `sku`, or its older name `retailer_id`; both sent must agree (they are one
 * value kept in step). Undefined when neither is sent: the shop issues one.
 */
export function skuOfCreate(body: { sku?: string; retailer_id?: string }): { sku?: string; errors?: FieldProblems } {
  const sku = body.sku?.trim();
  const retailerId = body.retailer_id?.trim();
  if (sku !== undefined && sku === '') return { errors: { sku: ['The sku field is required when sent.'] } };
  if (retailerId !== undefined && retailerId === '') return { errors: { retailer_id: ['The retailer id field is required when sent.'] } };
  if (sku !== undefined && retailerId !== undefined && sku !== retailerId)
    return { errors: { retailer_id: ['The retailer id must equal the sku: it is the older name of the same value.'] } };
  return { sku: sku ?? retailerId };
}

/**
 * The next sku the shop issues after `seq`: `<prefix>-000001` onwards, skipping values a caller
 * already chose for another product (`taken` answers whether one is in use). Returns the sku and
 * the counter to store.
 */
export function nextIssuedSku(prefix: string, seq: number, taken: (sku: string) => boolean): { sku: string; seq: number } {
  let next = seq;
  for (;;) {
    next += 1;
    const sku = issuedSku(prefix, next);
    if (!taken(sku)) return { sku, seq: next };
  }
}

/** The candidates nextIssuedSku may try in one round, so a caller can look them up in one query. */
export function issuedSkuCandidates(prefix: string, seq: number, count: number): string[] {
  return Array.from({ length: count }, (_, i) => issuedSku(prefix, seq + i + 1));
}

/**
 * Availability after a write. `sent` is the body's value: a value is the caller's choice and wins;
 * null gives the choice back to the stock count; absent keeps an explicit choice and re-derives a
 * derived one (the inventory may have changed). `available` is inventory less reserved (null: not tracked).
 */
export function availabilityOnWrite(
  sent: Availability | null | undefined,
  current: { availability: Availability; explicit: boolean } | null,
  available: number | null,
  allowBackorders: boolean,
): { availability: Availability; explicit: boolean } {
  if (sent !== undefined && sent !== null) return { availability: sent, explicit: true };
  if (sent === undefined && current?.explicit) return current;
  return { availability: derivedAvailability(available, allowBackorders), explicit: false };
}

/** inventory less what pending orders hold; null when the product is not tracked. */
export const availableOf = (inventory: number | null, reserved: number): number | null =>
  inventory === null ? null : inventory - reserved;

/** A sku is frozen once any platform accepted a push of the product (the platforms know it by that id). */
export const skuFrozen = (listings: ReadonlyArray<{ pushedRevision: number }>): boolean => listings.some((l) => l.pushedRevision > 0);

/** Brand and category text: trimmed; blank means none. */
export function recordName(text: string | null | undefined): string | null | undefined {
  if (text === undefined) return undefined;
  if (text === null) return null;
  const t = text.trim();
  return t === '' ? null : t;
}

/** The names of the fields whose values differ between two snapshots (keys of `after` only). */
export function changedFields<T extends Record<string, unknown>>(before: T, after: Partial<T>): string[] {
  return Object.keys(after).filter((k) => !sameValue(before[k], after[k]));
}

function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === null || b === null || a === undefined || b === undefined) return false;
  return JSON.stringify(a) === JSON.stringify(b);
}
