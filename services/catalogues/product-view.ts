import type { EntityManager } from '@mikro-orm/postgresql';
import { syncStatus } from '../../domain/catalogues/products.js';
import { availableOf } from '../../domain/catalogues/product-input.js';
import { listingsOfProducts, optionsOfProducts, productsWithNames, type ListingRow, type ProductRow } from './store/products.js';
import { iso } from '../platform/time.js';

// The Product resource as the contract lists it (productSchema in product-schemas.ts), with its
// listings[] and the sync_status roll-up; every door and every family renders products here.

export type ProductView = ReturnType<typeof productView>;

/** A size or an add-on of a product (shop baskets). */
export type ProductOption = {
  id: number;
  name: string;
  price: number;
};

export function productView(
  r: ProductRow,
  listings: readonly ListingRow[],
  options: { variants: ProductOption[]; addons: ProductOption[] } = { variants: [], addons: [] },
) {
  return {
    id: Number(r.id),
    catalogue_id: r.catalogue_id,
    sku: r.sku,
    retailer_id: r.sku,
    name: r.name,
    description: r.description,
    price: Number(r.price),
    sale_price: r.sale_price === null ? null : Number(r.sale_price),
    currency: r.currency,
    image_url: r.image_url,
    availability: r.availability,
    condition: r.condition,
    inventory: r.inventory,
    reserved: r.reserved,
    available: availableOf(r.inventory, r.reserved),
    visibility: r.visibility,
    brand: r.brand ?? null,
    category: r.category ?? null,
    product_type: r.product_type,
    meta_product_id: r.meta_product_id,
    listings: listings.map((l) => ({
      platform: l.platform,
      state: l.state,
      problem: l.problem,
      drift: l.drift,
      updated_at: iso(l.updated_at)!,
    })),
    variants: options.variants,
    addons: options.addons,
    // No listings at all is a shop on no platform: nothing to wait for, so synced.
    sync_status: syncStatus(listings.map((l) => l.state)),
    retired_at: iso(r.retired_at),
    created_at: iso(r.created_at)!,
    updated_at: iso(r.updated_at)!,
  };
}

/**
 * The answers of these products, in the order given (ids not found are left out). The caller has
 * scoped the ids to its account already: this is the renderer, not a tenant check.
 */
export async function productViews(em: EntityManager, productIds: readonly number[]): Promise<ProductView[]> {
  if (!productIds.length) return [];
  const ids = [...new Set(productIds.map(Number))];
  const rows = await productsWithNames(em, ids);
  const listings = await listingsOf(em, ids);
  const variants = await optionsOf(em, 'product_variants', ids);
  const addons = await optionsOf(em, 'product_addons', ids);
  const byId = new Map(rows.map((r) => [Number(r.id), r]));
  return productIds.flatMap((id) => {
    const row = byId.get(Number(id));
    const n = Number(id);
    return row ? [productView(row, listings.get(n) ?? [], { variants: variants.get(n) ?? [], addons: addons.get(n) ?? [] })] : [];
  });
}

/** The sizes or add-ons of these products, by product id, in their order. */
async function optionsOf(em: EntityManager, table: 'product_variants' | 'product_addons', productIds: readonly number[]) {
  const rows = await optionsOfProducts(em, table, productIds);
  const out = new Map<number, ProductOption[]>();
  for (const o of rows) {
    const list = out.get(Number(o.product_id)) ?? out.set(Number(o.product_id), []).get(Number(o.product_id))!;
    list.push({ id: Number(o.id), name: o.name, price: Number(o.price) });
  }
  return out;
}

/** The listings of these products, by product id, in platform order. */
export async function listingsOf(em: EntityManager, productIds: readonly number[]): Promise<Map<number, ListingRow[]>> {
  const rows = await listingsOfProducts(em, productIds);
  const out = new Map<number, ListingRow[]>();
  for (const l of rows) (out.get(Number(l.product_id)) ?? out.set(Number(l.product_id), []).get(Number(l.product_id))!).push(l);
  return out;
}

/**
 * The flat payload of product.created, product.updated and product.deleted (after event_id, event,
 * occurred_at and account_id): the product's identity and the fields a receiver usually mirrors.
 */
export function productEventFields(v: ProductView) {
  return {
    product_id: v.id,
    catalogue_id: v.catalogue_id,
    sku: v.sku,
    retailer_id: v.retailer_id,
    name: v.name,
    price: v.price,
    sale_price: v.sale_price,
    currency: v.currency,
    availability: v.availability,
    inventory: v.inventory,
    visibility: v.visibility,
    sync_status: v.sync_status,
  };
}
