import type { Availability } from './vocabulary.js';
import { availabilityAfterStock } from './products.js';

// Pure stock rules (Resources > Inventory row and movement; Catalogues, products, stock: Inventory
// rules; Limits > Low stock notice). The SQL of services/catalogues/inventory.ts applies the same
// rules to many rows at once; these are the reference its tests hold it to.

/** The contract's `available`: on hand less what pending orders hold; null for an untracked product. */
export function availableOf(inventory: number | null, reserved: number): number | null {
  return inventory === null ? null : inventory - reserved;
}

/**
 * A shop's low-stock rule: a tracked product whose available figure has reached the threshold (is at
 * or below it). No threshold, or an untracked product, never reaches it.
 */
export function reachesLowStock(available: number | null, threshold: number | null): boolean {
  return threshold !== null && available !== null && available <= threshold;
}

/** At most one low-stock notice a day per product: the day (UTC) the last one went out, if any. */
export function lowStockDue(available: number | null, threshold: number | null, noticedOn: string | null, today: string): boolean {
  return reachesLowStock(available, threshold) && noticedOn !== today;
}

/** The availabilities a delivery never changes: the contract's "never put back on sale". */
export const KEPT_BY_DELIVERIES: readonly Availability[] = ['discontinued', 'preorder'];

export interface StockedProduct {
  availability: Availability;
  availabilityExplicit: boolean;
  inventory: number | null;
  reserved: number;
}

/**
 * A product after an absolute count lands: availability follows the count (0 → out of stock,
 * recovery → in stock; with backorders allowed, 0 → available for order) whether it was derived or
 * chosen as in stock / out of stock / available for order; discontinued and preorder stay. A value
 * that now follows the count is no longer the caller's choice (`availabilityExplicit` false), so a
 * later product write that changes only the inventory derives it again; a kept discontinued or
 * preorder keeps its flag.
 */
export function afterCount(
  p: StockedProduct,
  inventory: number,
  allowBackorders: boolean,
): { inventory: number; availability: Availability; availabilityExplicit: boolean } {
  const availability = availabilityAfterStock(p.availability, inventory - p.reserved, allowBackorders);
  const kept = KEPT_BY_DELIVERIES.includes(p.availability);
  return { inventory, availability, availabilityExplicit: kept ? p.availabilityExplicit : false };
}

/** The signed quantity of a count's movement: a first count on an untracked product moves from 0. */
export const countMovement = (before: number | null, after: number) => after - (before ?? 0);

export interface LevelRow {
  sku: string;
  inventory: number;
}

/**
 * Row problems of a push the schema cannot state: a sku sent twice is ambiguous (which count is
 * the real one?), so the request is refused naming the later row, and nothing is applied.
 */
export function duplicateSkuErrors(levels: readonly LevelRow[]): Record<string, string[]> {
  const seen = new Map<string, number>();
  const errors: Record<string, string[]> = {};
  levels.forEach((l, i) => {
    const first = seen.get(l.sku);
    if (first === undefined) seen.set(l.sku, i);
    else errors[`levels.${i}.sku`] = [`The sku is already given in levels.${first}.`];
  });
  return errors;
}
