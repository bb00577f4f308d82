import type { Availability, ListingState, PlatformKey } from './vocabulary.js';

// Pure product rules: issued skus, availability derived from stock, what each platform needs before
// it can show a product, and the listing roll-up.

/** The sku a shop issues: its prefix, a dash and six or more digits, so issued skus sort by issue order. */
export function issuedSku(prefix: string, seq: number): string {
  return `${prefix}-${String(seq).padStart(6, '0')}`;
}

/** A shop's default sku prefix when none is given at create: letters of its name, else SKU. */
export function defaultSkuPrefix(name: string): string {
  const letters = name
    .normalize('NFKD')
    .replace(/[^A-Za-z0-9]/g, '')
    .toUpperCase()
    .slice(0, 4);
  return letters.length >= 2 ? letters : 'SKU';
}

/** Availabilities a stock delivery never changes: a shop's deliberate choices, not a count. */
const NOT_SET_BY_STOCK: ReadonlySet<Availability> = new Set(['discontinued', 'preorder']);

/**
 * Availability when the caller did not choose it: follows the count (0 → out of stock, above 0 →
 * in stock) unless the shop allows backorders (then `available for order` at 0); untracked products
 * (no inventory) are in stock. `available` is inventory less what pending orders hold.
 */
export function derivedAvailability(available: number | null, allowBackorders: boolean): Availability {
  if (available === null || available > 0) return 'in stock';
  return allowBackorders ? 'available for order' : 'out of stock';
}

/**
 * Availability after a stock change: an explicit discontinued or preorder stays; otherwise it follows
 * the count (the contract: "0 sets out of stock, recovery lifts to in stock").
 */
export function availabilityAfterStock(current: Availability, available: number | null, allowBackorders: boolean): Availability {
  if (NOT_SET_BY_STOCK.has(current)) return current;
  return derivedAvailability(available, allowBackorders);
}

export interface ListableProduct {
  price: number;
  imageUrl: string | null;
  visibility: 'staging' | 'published';
}

/**
 * Why a platform cannot show a product yet (the listing is then `blocked` with this problem), or
 * null. The chat provider's catalogue needs an image and a non-zero price (Meta's required
 * fields); the shop page needs a non-zero price. A product in staging is shown nowhere.
 */
export function listingProblem(platform: PlatformKey, product: ListableProduct): string | null {
  if (product.visibility === 'staging') return 'visibility is staging';
  if (product.price <= 0) return 'price must be above zero to publish';
  if (platform === 'whatsapp' && !product.imageUrl) return 'image_url is required to publish';
  return null;
}

/**
 * The product's `sync_status`: the listing state that most needs attention (failed, drifted,
 * blocked, syncing, pending, in that order), synced when every listing is — or when the shop is on no
 * platform at all.
 */
export function syncStatus(states: readonly ListingState[]): ListingState {
  for (const s of ['failed', 'drifted', 'blocked', 'syncing', 'pending'] as const) if (states.includes(s)) return s;
  return 'synced';
}
