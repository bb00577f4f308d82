import type { EntityManager } from '@mikro-orm/postgresql';
import { tablesOf, type FamilyTables, type Row } from '../../../entities/database.js';
import { exec, many, one } from '../../../entities/db.js';

// What orders and the shop read and move of a catalogue (issue 24, point 1): the shop's settings,
// the products a line or a basket names with their sizes and add-ons, the menu and its categories,
// and the product stock an order holds. Every statement on a catalogue table for those families is
// here; they call it through services/catalogues/index.ts.

type Product = Row<'catalogues', 'products'>;
type Catalogue = Row<'catalogues', 'catalogues'>;
type Category = Row<'catalogues', 'product_categories'>;
/**
 * A size or an add-on: both option tables share one entity shape. The key is written both ways
 * because the entity helper's table name is a plain string, so the inferred key is the entity name
 * (product_variant) until entities/catalogues.ts types it; the row is the same either way.
 */
type OptionTable = Extract<keyof FamilyTables['catalogues'], 'product_variants' | 'product_variant'>;
export type ProductOption = Pick<Row<'catalogues', OptionTable>, 'id' | 'product_id' | 'name' | 'price'>;

// ---- the shop's settings ------------------------------------------------------------------------

/** The settings an order is taken under, of the account's shop; null when it is not the account's. */
export async function shopForOrder(em: EntityManager, accountId: number, catalogueId: number) {
  const row = await tablesOf(em, 'catalogues')
    .selectFrom('catalogues')
    .select(['id', 'account_id', 'stock_policy', 'reservation_ttl_hours', 'checkout_hold_minutes', 'allow_backorders', 'default_currency'])
    .where('id', '=', catalogueId)
    .where('account_id', '=', accountId)
    .executeTakeFirst();
  return row ?? null;
}
export type OrderShop = NonNullable<Awaited<ReturnType<typeof shopForOrder>>>;

/** How a shop keeps stock (what a status move does to an order's holds). */
export async function shopStockPolicy(em: EntityManager, catalogueId: number) {
  const row = await tablesOf(em, 'catalogues')
    .selectFrom('catalogues')
    .select(['stock_policy', 'allow_backorders'])
    .where('id', '=', catalogueId)
    .executeTakeFirst();
  return row ?? null;
}

/** The shop's name (the page's title); null for a shop that is gone. */
export async function shopName(em: EntityManager, catalogueId: number): Promise<string | null> {
  const row = await tablesOf(em, 'catalogues').selectFrom('catalogues').select('name').where('id', '=', catalogueId).executeTakeFirst();
  return row?.name ?? null;
}

/** The shop's quantity caps of a basket (max_line_quantity, max_basket_quantity). */
export async function shopBasketCaps(em: EntityManager, catalogueId: number) {
  return tablesOf(em, 'catalogues')
    .selectFrom('catalogues')
    .select(['max_line_quantity', 'max_basket_quantity'])
    .where('id', '=', catalogueId)
    .executeTakeFirst();
}

/** How many baskets (or orders) one client address may open (send) in the shop per hour; null for a shop that is gone. */
export async function shopAddressLimit(em: EntityManager, catalogueId: number, kind: 'baskets' | 'orders'): Promise<number | null> {
  const row = await tablesOf(em, 'catalogues')
    .selectFrom('catalogues')
    .select(kind === 'baskets' ? 'address_baskets_per_hour as per_hour' : 'address_orders_per_hour as per_hour')
    .where('id', '=', catalogueId)
    .executeTakeFirst();
  return row?.per_hour ?? null;
}

/** Up to `limit` shop ids of the account, ascending (a link names its shop when the account has several). */
export async function shopIdsOf(em: EntityManager, accountId: number, limit: number): Promise<number[]> {
  const rows = await tablesOf(em, 'catalogues')
    .selectFrom('catalogues')
    .select('id')
    .where('account_id', '=', accountId)
    .orderBy('id')
    .limit(limit)
    .execute();
  return rows.map((r) => r.id);
}

// ---- products for order lines -------------------------------------------------------------------

export type ProductMatch = Pick<Product, 'id' | 'sku' | 'name' | 'price' | 'sale_price' | 'currency' | 'inventory'>;

/** The live (not retired) products of the account's shop with these codes. */
export async function productsForLines(em: EntityManager, accountId: number, catalogueId: number, skus: string[]): Promise<ProductMatch[]> {
  return many<ProductMatch>(
    em,
    `select p.id, p.sku, p.name, p.price, p.sale_price, p.currency, p.inventory
       from products p where p.catalogue_id = ? and p.account_id = ? and p.sku = any(?::text[]) and p.retired_at is null`,
    [catalogueId, accountId, skus],
  );
}

/** The price of one size and the summed prices of add-ons, counting only those of the product (null when none). */
export async function optionPrices(em: EntityManager, productId: string, variantId: number | null, addonIds: number[]) {
  return (await one<{ variant_price: ProductOption['price'] | null; addons_price: ProductOption['price'] | null }>(
    em,
    `select (select v.price from product_variants v where v.id = ? and v.product_id = ?) as variant_price,
            (select sum(a.price) from product_addons a where a.id = any(?::bigint[]) and a.product_id = ?) as addons_price`,
    [variantId, productId, addonIds, productId],
  ))!;
}

// ---- products for baskets ----------------------------------------------------------------------

/** What a basket line needs of a product: its price and whether the shop offers it. */
export type ProductForLine = Pick<
  Product,
  'id' | 'sku' | 'name' | 'price' | 'sale_price' | 'currency' | 'availability' | 'visibility' | 'retired_at'
>;
const LINE_COLUMNS = ['id', 'sku', 'name', 'price', 'sale_price', 'currency', 'availability', 'visibility', 'retired_at'] as const;

/** A product of the shop by id, for a line. */
export async function productForLine(em: EntityManager, catalogueId: number, productId: number): Promise<ProductForLine | null> {
  const row = await tablesOf(em, 'catalogues')
    .selectFrom('products')
    .select(LINE_COLUMNS)
    .where('id', '=', String(productId))
    .where('catalogue_id', '=', catalogueId)
    .executeTakeFirst();
  return row ?? null;
}

/** Products of the shop by id, for lines (those of another shop are not found). */
export async function productsForLinesById(em: EntityManager, catalogueId: number, productIds: number[]): Promise<ProductForLine[]> {
  return many<ProductForLine>(em, `select ${LINE_COLUMNS.join(', ')} from products where id = any(?::bigint[]) and catalogue_id = ?`, [
    productIds,
    catalogueId,
  ]);
}

/** A product of the shop by sku, retired or not, for a line. */
export async function productForLineBySku(em: EntityManager, catalogueId: number, sku: string): Promise<ProductForLine | null> {
  const row = await tablesOf(em, 'catalogues')
    .selectFrom('products')
    .select(LINE_COLUMNS)
    .where('catalogue_id', '=', catalogueId)
    .where('sku', '=', sku)
    .executeTakeFirst();
  return row ?? null;
}

/** Products of the shop by sku, retired or not, for lines. */
export async function productsForLinesBySku(em: EntityManager, catalogueId: number, skus: string[]): Promise<ProductForLine[]> {
  return many<ProductForLine>(em, `select ${LINE_COLUMNS.join(', ')} from products where catalogue_id = ? and sku = any(?::text[])`, [
    catalogueId,
    skus,
  ]);
}

/** The sizes and add-ons of these products, each in its shop order (position, id). */
export async function productOptions(
  em: EntityManager,
  productIds: number[],
): Promise<{ variants: ProductOption[]; addons: ProductOption[] }> {
  if (!productIds.length) return { variants: [], addons: [] };
  const variants = await many<ProductOption>(
    em,
    'select id, product_id, name, price from product_variants where product_id = any(?::bigint[]) order by position, id',
    [productIds],
  );
  const addons = await many<ProductOption>(
    em,
    'select id, product_id, name, price from product_addons where product_id = any(?::bigint[]) order by position, id',
    [productIds],
  );
  return { variants, addons };
}

/** The code and name of these products (what a basket line shows of its product). */
export async function productLabels(em: EntityManager, productIds: number[]): Promise<Pick<Product, 'id' | 'sku' | 'name'>[]> {
  return many<Pick<Product, 'id' | 'sku' | 'name'>>(em, 'select id, sku, name from products where id = any(?::bigint[])', [productIds]);
}

/** Sizes by id, whichever product they belong to. */
export async function variantsById(em: EntityManager, ids: number[]): Promise<Omit<ProductOption, 'product_id'>[]> {
  return many<Omit<ProductOption, 'product_id'>>(em, 'select id, name, price from product_variants where id = any(?::bigint[])', [ids]);
}

/** Add-ons by id, whichever product they belong to. */
export async function addonsById(em: EntityManager, ids: number[]): Promise<Omit<ProductOption, 'product_id'>[]> {
  return many<Omit<ProductOption, 'product_id'>>(em, 'select id, name, price from product_addons where id = any(?::bigint[])', [ids]);
}

/** A product at its storefront address: shop `shopId` sells on the storefront platform and has this sku. */
export async function storefrontProductRow(em: EntityManager, shopId: number, sku: string) {
  return one<
    ProductForLine &
      Pick<Product, 'description' | 'image_url' | 'account_id' | 'catalogue_id'> & {
        shop_name: Catalogue['name'];
        shop_currency: Catalogue['default_currency'];
        shop_account_id: Catalogue['account_id'];
      }
  >(
    em,
    `select p.id, p.sku, p.name, p.price, p.sale_price, p.currency, p.availability, p.visibility, p.retired_at, p.description,
            p.image_url, p.account_id, p.catalogue_id, c.name as shop_name, c.default_currency as shop_currency,
            c.account_id as shop_account_id
       from products p join catalogues c on c.id = p.catalogue_id
      where c.id = ? and p.sku = ? and c.channels @> '["storefront"]'::jsonb`,
    [shopId, sku],
  );
}

// ---- the menu ----------------------------------------------------------------------------------

export type MenuProductRow = ProductForLine & Pick<Product, 'description' | 'image_url' | 'category_id'>;

/** The shop's published, live, not discontinued products, by name (at most 1000). */
export async function menuProducts(em: EntityManager, catalogueId: number): Promise<MenuProductRow[]> {
  return many<MenuProductRow>(
    em,
    `select id, sku, name, description, image_url, price, sale_price, currency, availability, visibility, retired_at, category_id
       from products where catalogue_id = ? and retired_at is null and visibility = 'published' and availability <> 'discontinued'
      order by name, id limit 1000`,
    [catalogueId],
  );
}

export type CategoryRow = Pick<Category, 'id' | 'name' | 'slug'>;

/** The shop's categories by name. */
export async function shopCategories(em: EntityManager, catalogueId: number): Promise<CategoryRow[]> {
  return tablesOf(em, 'catalogues')
    .selectFrom('product_categories')
    .select(['id', 'name', 'slug'])
    .where('catalogue_id', '=', catalogueId)
    .orderBy('name')
    .orderBy('id')
    .execute();
}

/** A category of the shop by id, or by slug (as stored). */
export async function categoryOf(
  em: EntityManager,
  catalogueId: number,
  by: { id: number } | { slug: string },
): Promise<CategoryRow | null> {
  const q = tablesOf(em, 'catalogues')
    .selectFrom('product_categories')
    .select(['id', 'name', 'slug'])
    .where('catalogue_id', '=', catalogueId);
  const row = await ('id' in by ? q.where('id', '=', by.id) : q.where('slug', '=', by.slug)).executeTakeFirst();
  return row ?? null;
}

/** Whether a category of the shop still has no slug. */
export async function hasCategoryWithoutSlug(em: EntityManager, catalogueId: number): Promise<boolean> {
  return (await one(em, 'select 1 from product_categories where catalogue_id = ? and slug is null limit 1', [catalogueId])) !== null;
}

/** The shop's categories, locked for the transaction (slugs are given under this lock). */
export async function lockCategories(tx: EntityManager, catalogueId: number): Promise<CategoryRow[]> {
  return many<CategoryRow>(tx, 'select id, name, slug from product_categories where catalogue_id = ? order by id for update', [
    catalogueId,
  ]);
}

/** Gives a category its slug, unless it has one already. */
export async function setCategorySlug(tx: EntityManager, categoryId: number, slug: string): Promise<void> {
  await exec(tx, 'update product_categories set slug = ? where id = ? and slug is null', [slug, categoryId]);
}

// ---- the stock an order holds (the guarded reservation) ----------------------------------------

/**
 * Holds `quantity` more units of a product: one guarded UPDATE that matches no row when the product
 * keeps no count or has fewer than `quantity` free (unless backorders are allowed). Answers the
 * figures after, or null when nothing was held. No read of availability is trusted for this write.
 */
export async function reserveStock(
  tx: EntityManager,
  accountId: number,
  productId: number,
  quantity: number,
  allowBackorders: boolean,
): Promise<{ inventory: number; reserved: number } | null> {
  return one<{ inventory: number; reserved: number }>(
    tx,
    `update products set reserved = reserved + ?
      where id = ? and account_id = ? and inventory is not null and (?::boolean or inventory - reserved >= ?)
     returning inventory, reserved`,
    [quantity, productId, accountId, allowBackorders, quantity],
  );
}

/**
 * Gives a hold's units back (release, expiry), or takes them out of inventory too (`decrement`:
 * a commit under stock_policy=svc). Null when the product is not the account's.
 */
/** A product's stock figures after a move: units in inventory (null: not counted) and units held. */
export type StockFigures = Pick<Product, 'inventory' | 'reserved'>;

export async function releaseReservedStock(
  tx: EntityManager,
  accountId: number,
  productId: string,
  quantity: number,
  decrement: boolean,
): Promise<StockFigures | null> {
  return one<StockFigures>(
    tx,
    `update products p set reserved = p.reserved - ?,
                           inventory = case when ?::boolean then p.inventory - ? else p.inventory end
      where p.id = ? and p.account_id = ?
     returning p.inventory, p.reserved`,
    [quantity, decrement, quantity, productId, accountId],
  );
}

/**
 * Takes `quantity` units straight out of inventory, with the guard of reserveStock (a lapsed hold
 * committed again); null when they are not there.
 */
export async function takeStock(
  tx: EntityManager,
  accountId: number,
  productId: string,
  quantity: number,
  allowBackorders: boolean,
): Promise<Pick<Product, 'id' | 'inventory' | 'reserved'> | null> {
  return one<Pick<Product, 'id' | 'inventory' | 'reserved'>>(
    tx,
    `update products set inventory = inventory - ?
      where id = ? and account_id = ? and inventory is not null and (?::boolean or inventory - reserved >= ?)
     returning id, inventory, reserved`,
    [quantity, productId, accountId, allowBackorders, quantity],
  );
}
