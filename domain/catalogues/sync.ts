import { availabilityOnWrite, availableOf, recordName, skuOfCreate } from './product-input.js';
import {
  CATALOGUE_LIMITS,
  type Availability,
  type Condition,
  type PlatformCounts,
  type SyncProblem,
  type Visibility,
} from './vocabulary.js';

// Pure rules of a sync run (a product batch or a feed pull): what a row writes onto the product it
// lands on, which rows name the same product twice, and how many problems a report keeps.

/** A row that passed the product row schema (services/catalogues/product-schemas.ts, productRowSchema). */
export interface SyncRow {
  sku?: string;
  retailer_id?: string;
  name: string;
  description?: string | null;
  price: number;
  sale_price?: number | null;
  currency?: string;
  image_url?: string | null;
  availability?: Availability | null;
  condition?: Condition | null;
  inventory?: number | null;
  visibility?: Visibility;
  brand?: string | null;
  category?: string | null;
  product_type?: string | null;
}

export interface ShopRules {
  defaultCurrency: string | null;
  allowBackorders: boolean;
}

/** Every stored field of the product after the row: the upsert writes these (brand and category by name). */
export interface ProductWrite {
  sku: string;
  name: string;
  description: string | null;
  price: number;
  sale_price: number | null;
  currency: string;
  image_url: string | null;
  availability: Availability;
  availability_explicit: boolean;
  condition: Condition | null;
  inventory: number | null;
  visibility: Visibility;
  brand: string | null;
  category: string | null;
  product_type: string | null;
}

/** The stored product a row matched (by sku, else by name): its write fields as stored, its id and what orders hold. */
export type MatchedProduct = ProductWrite & { id: number; reserved: number };

/** A row's refusal: the field and the first message, worded like the single-create refusal. */
export interface RowRefusal {
  field: string;
  reason: string;
}

/**
 * The row's identity in the payload: `sku` (or its older name retailer_id; both sent must agree),
 * else the trimmed name. Rows match stored products on the sku when sent, otherwise on the name.
 */
export function rowIdentity(row: SyncRow): { sku?: string; name: string } | RowRefusal {
  const s = skuOfCreate(row);
  if (s.errors) {
    const [field, messages] = Object.entries(s.errors)[0];
    return { field, reason: messages[0] };
  }
  const name = row.name.trim();
  if (name === '') return { field: 'name', reason: 'The name field is required.' };
  return { ...(s.sku !== undefined ? { sku: s.sku } : {}), name };
}

const has = (row: object, key: string) => Object.prototype.hasOwnProperty.call(row, key);

/**
 * What the row writes onto `matched` (null: a new product under `sku`). A batch row carries the
 * whole documented product, but a field the row leaves out keeps the stored value (as Shopify's
 * productSet keeps unsent scalar fields): a partial row never blanks a product. Null clears a
 * nullable field. visibility and product_type are accepted on create only, as on the single paths.
 */
export function productWrite(
  row: SyncRow,
  identity: { sku?: string; name: string },
  sku: string,
  matched: MatchedProduct | null,
  shop: ShopRules,
): ProductWrite | RowRefusal {
  const pick = <K extends keyof SyncRow & keyof MatchedProduct>(key: K, fallback: MatchedProduct[K]): MatchedProduct[K] =>
    has(row, key) ? ((row[key] ?? null) as MatchedProduct[K]) : matched ? matched[key] : fallback;
  const currency = row.currency?.toUpperCase() ?? matched?.currency ?? shop.defaultCurrency;
  if (!currency) return { field: 'currency', reason: 'The currency field is required: the shop has no default currency.' };
  const inventory = pick('inventory', null);
  const { availability, explicit } = availabilityOnWrite(
    has(row, 'availability') ? (row.availability ?? null) : undefined,
    matched ? { availability: matched.availability, explicit: matched.availability_explicit } : null,
    availableOf(inventory, matched?.reserved ?? 0),
    shop.allowBackorders,
  );
  const brand = recordName(row.brand);
  const category = recordName(row.category);
  return {
    sku,
    name: identity.name,
    description: pick('description', null),
    price: row.price,
    sale_price: pick('sale_price', null),
    currency,
    image_url: pick('image_url', null),
    availability,
    availability_explicit: explicit,
    condition: pick('condition', null),
    inventory,
    visibility: matched ? matched.visibility : (row.visibility ?? 'published'),
    brand: brand === undefined ? (matched?.brand ?? null) : brand,
    category: category === undefined ? (matched?.category ?? null) : category,
    product_type: matched ? matched.product_type : (row.product_type ?? null),
  };
}

/** The first field problem of a refused row: the report keeps one reason per row. */
export function firstProblem(errors: Record<string, string[]>): RowRefusal {
  const [field, messages] = Object.entries(errors)[0] ?? ['row', ['The row is invalid.']];
  return { field, reason: messages[0] ?? 'The row is invalid.' };
}

/** A rejected row as the report shows it: stage ingest, the row's sku when it sent one. */
export function ingestProblem(rowNo: number, data: unknown, refusal: RowRefusal): SyncProblem {
  const d = (data ?? {}) as Record<string, unknown>;
  const raw = typeof d.sku === 'string' ? d.sku : typeof d.retailer_id === 'string' ? d.retailer_id : null;
  return {
    sku: raw === null ? null : raw.slice(0, CATALOGUE_LIMITS.skuMax),
    stage: 'ingest',
    reason: refusal.reason,
    row: rowNo,
    field: refusal.field,
  };
}

/** The report keeps the first 200 problems of a run and says whether more existed. */
export function capProblems(kept: number, more: readonly SyncProblem[]): { keep: SyncProblem[]; truncated: boolean } {
  const room = Math.max(0, CATALOGUE_LIMITS.problemsKept - kept);
  return { keep: more.slice(0, room), truncated: more.length > room };
}

/** The contract's platform counts from a push outcome ({synced, blocked, failed} per platform; failed is reported as problems). */
export function platformCounts(pushed: Record<string, { synced: number; blocked: number }>): Record<string, PlatformCounts> {
  return Object.fromEntries(Object.entries(pushed).map(([k, v]) => [k, { synced: v.synced, blocked: v.blocked }]));
}
