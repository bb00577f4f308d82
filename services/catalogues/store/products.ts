import type { EntityManager } from '@mikro-orm/postgresql';
import { exec, many, one } from '../../../entities/db.js';
import type { Row } from '../../../entities/database.js';
import type { Availability, PlatformKey } from '../../../domain/catalogues/vocabulary.js';

// Products, their listings, sizes and add-ons, and the brand and category records: what the single
// product paths and the product answer read and write.

type Products = Row<'catalogues', 'products'>;

/** The product columns every read takes (the answer's, a write's and an undo's). */
const PRODUCT_FIELDS = [
  'id',
  'account_id',
  'catalogue_id',
  'sku',
  'name',
  'description',
  'price',
  'sale_price',
  'currency',
  'image_url',
  'availability',
  'availability_explicit',
  'condition',
  'inventory',
  'reserved',
  'visibility',
  'brand_id',
  'category_id',
  'product_type',
  'meta_product_id',
  'revision',
  'retired_at',
  'created_at',
  'updated_at',
] as const;
const PRODUCT_COLUMNS = PRODUCT_FIELDS.join(', ');

/** A products row as stored, with the brand and category names when the read joins them. */
export type ProductRow = Pick<Products, (typeof PRODUCT_FIELDS)[number]> & { brand?: string | null; category?: string | null };

const LISTING_FIELDS = 'product_id, platform, state, problem, drift, platform_item_id, pushed_revision, updated_at';
export type ListingRow = Omit<
  Pick<
    Row<'catalogues', 'product_listings'>,
    'product_id' | 'platform' | 'state' | 'problem' | 'drift' | 'platform_item_id' | 'pushed_revision' | 'updated_at'
  >,
  'platform'
> & { platform: PlatformKey };

/** The columns a product write sets, in this order. */
export const WRITE_COLUMNS = [
  'sku',
  'name',
  'description',
  'price',
  'sale_price',
  'currency',
  'image_url',
  'availability',
  'availability_explicit',
  'condition',
  'inventory',
  'visibility',
  'brand_id',
  'category_id',
  'product_type',
] as const;
export type WriteColumns = { [C in (typeof WRITE_COLUMNS)[number]]: unknown };

// ---------------------------------------------------------------------------------------------
// Reads

export interface ProductFilter {
  search?: string;
  availability?: Availability;
}

/** Escapes LIKE wildcards so a search for "50%" finds that text, not everything. */
const likeEscape = (s: string) => s.replace(/[\\%_]/g, (c) => `\\${c}`);

function productWhere(catalogueId: number, f: ProductFilter) {
  const where = ['p.catalogue_id = ?', 'p.retired_at is null'];
  const params: unknown[] = [catalogueId];
  if (f.search) {
    where.push(`(p.name ilike ? escape '\\' or p.sku ilike ? escape '\\')`);
    params.push(`%${likeEscape(f.search)}%`, `%${likeEscape(f.search)}%`);
  }
  if (f.availability) {
    where.push('p.availability = ?');
    params.push(f.availability);
  }
  return { where: where.join(' and '), params };
}

/** The shop's live products matching the filter: how many, and one page of ids sorted by name. */
export async function productPage(em: EntityManager, catalogueId: number, f: ProductFilter, limit: number, offset: number) {
  const { where, params } = productWhere(catalogueId, f);
  const total = Number((await one<{ n: string }>(em, `select count(*) as n from products p where ${where}`, params))!.n);
  const ids = await many<Pick<Products, 'id'>>(em, `select p.id from products p where ${where} order by p.name, p.id limit ? offset ?`, [
    ...params,
    limit,
    offset,
  ]);
  return { total, ids: ids.map((r) => Number(r.id)) };
}

export async function productOfShop(
  em: EntityManager,
  id: number,
  catalogueId: number,
  accountId: number,
  forUpdate = false,
): Promise<ProductRow | null> {
  return one<ProductRow>(
    em,
    `select ${PRODUCT_COLUMNS} from products where id = ? and catalogue_id = ? and account_id = ?${forUpdate ? ' for update' : ''}`,
    [id, catalogueId, accountId],
  );
}

export async function productOfSku(em: EntityManager, catalogueId: number, sku: string, forUpdate = false): Promise<ProductRow | null> {
  return one<ProductRow>(
    em,
    `select ${PRODUCT_COLUMNS} from products where catalogue_id = ? and sku = ?${forUpdate ? ' for update' : ''}`,
    [catalogueId, sku],
  );
}

/** Another product of the shop has this sku (`exceptId`: not counting that one). */
export async function skuTaken(em: EntityManager, catalogueId: number, sku: string, exceptId?: number | string): Promise<boolean> {
  return exceptId === undefined
    ? !!(await one(em, 'select 1 from products where catalogue_id = ? and sku = ?', [catalogueId, sku]))
    : !!(await one(em, 'select 1 from products where catalogue_id = ? and sku = ? and id <> ?', [catalogueId, sku, exceptId]));
}

/** The products with brand and category names joined, by id (any order). */
export async function productsWithNames(em: EntityManager, ids: readonly number[]): Promise<ProductRow[]> {
  return many<ProductRow>(
    em,
    `select ${PRODUCT_FIELDS.map((c) => `p.${c}`).join(', ')}, b.name as brand, c.name as category
       from products p
       left join product_brands b on b.id = p.brand_id
       left join product_categories c on c.id = p.category_id
      where p.id = any(?::bigint[])`,
    [ids],
  );
}

/** The listings of these products, in product then platform order. */
export async function listingsOfProducts(em: EntityManager, productIds: readonly (number | string)[]): Promise<ListingRow[]> {
  return many<ListingRow>(
    em,
    `select ${LISTING_FIELDS} from product_listings where product_id = any(?::bigint[]) order by product_id, platform`,
    [productIds],
  );
}

export async function listingsOfProduct(em: EntityManager, productId: number | string): Promise<ListingRow[]> {
  return many<ListingRow>(em, `select ${LISTING_FIELDS} from product_listings where product_id = ? order by platform`, [productId]);
}

export async function isListed(em: EntityManager, productId: number): Promise<boolean> {
  return !!(await one(em, 'select 1 from product_listings where product_id = ? limit 1', [productId]));
}

export type OptionTable = 'product_variants' | 'product_addons';

/**
 * The sizes or add-ons of these products, in product then position order. (The option entities'
 * table names are not literal types, so their row type is spelled out here.)
 */
export async function optionsOfProducts(em: EntityManager, table: OptionTable, productIds: readonly number[]) {
  return many<{ id: string; product_id: string; name: string; price: string }>(
    em,
    `select id, product_id, name, price from ${table === 'product_variants' ? 'product_variants' : 'product_addons'}
      where product_id = any(?::bigint[]) order by product_id, position, id`,
    [productIds],
  );
}

// ---------------------------------------------------------------------------------------------
// Writes

export async function insertProductRow(em: EntityManager, accountId: number, catalogueId: number, cols: WriteColumns): Promise<number> {
  const inserted = await one<Pick<Products, 'id'>>(
    em,
    `insert into products (account_id, catalogue_id, ${WRITE_COLUMNS.join(', ')}, reserved, revision, created_at, updated_at)
     values (?, ?, ${WRITE_COLUMNS.map(() => '?').join(', ')}, 0, 1, now(), now()) returning id`,
    [accountId, catalogueId, ...WRITE_COLUMNS.map((c) => cols[c])],
  );
  return Number(inserted!.id);
}

/** Writes the columns and the new revision; `revive` also clears retired_at. */
export async function updateProductRow(
  em: EntityManager,
  productId: number | string,
  cols: WriteColumns,
  revision: number,
  revive: boolean,
): Promise<void> {
  await exec(
    em,
    `update products set ${WRITE_COLUMNS.map((c) => `${c} = ?`).join(', ')}, revision = ?,${revive ? ' retired_at = null,' : ''} updated_at = now()
        where id = ?`,
    [...WRITE_COLUMNS.map((c) => cols[c]), revision, productId],
  );
}

/** Puts a product back as it was unless a later write moved its revision on; answers whether it did. */
export async function restoreProductRow(
  em: EntityManager,
  productId: number,
  cols: WriteColumns,
  o: { revision: number; retiredAt: string | null; updatedAt: string; ifRevision: number },
): Promise<boolean> {
  const restored = await exec(
    em,
    `update products set ${WRITE_COLUMNS.map((c) => `${c} = ?`).join(', ')}, revision = ?, retired_at = ?, updated_at = ?
          where id = ? and revision = ?`,
    [...WRITE_COLUMNS.map((c) => cols[c]), o.revision, o.retiredAt, o.updatedAt, productId, o.ifRevision],
  );
  return restored > 0;
}

export async function deleteProductRow(em: EntityManager, productId: number): Promise<void> {
  await exec(em, 'delete from products where id = ?', [productId]);
}

/** Every listing of the product waits for the push again. */
export async function markListingsPending(em: EntityManager, productId: number | string): Promise<void> {
  await exec(em, `update product_listings set state = 'pending', problem = null, updated_at = now() where product_id = ?`, [productId]);
}

export async function addListings(em: EntityManager, productId: number, channels: readonly PlatformKey[]): Promise<void> {
  await exec(
    em,
    `insert into product_listings (product_id, platform, state, pushed_revision, updated_at)
     select ?, ch, 'pending', 0, now() from unnest(?::text[]) as ch on conflict (product_id, platform) do nothing`,
    [productId, [...channels]],
  );
}

/** Puts the product's listings back as they were: those added since go, the others take their old state. */
export async function restoreListings(em: EntityManager, productId: number, before: readonly ListingRow[]): Promise<void> {
  const kept = before.map((l) => l.platform);
  await exec(em, 'delete from product_listings where product_id = ? and not (platform = any(?::text[]))', [productId, kept]);
  for (const l of before)
    await exec(em, 'update product_listings set state = ?, problem = ?, updated_at = ? where product_id = ? and platform = ?', [
      l.state,
      l.problem,
      l.updated_at,
      productId,
      l.platform,
    ]);
}

/** Replaces the product's whole list of sizes or add-ons. */
export async function replaceOptionRows(
  em: EntityManager,
  table: OptionTable,
  productId: number,
  list: ReadonlyArray<{ name: string; price: number; position: number }>,
): Promise<void> {
  const t = table === 'product_variants' ? 'product_variants' : 'product_addons';
  await exec(em, `delete from ${t} where product_id = ?`, [productId]);
  if (!list.length) return;
  await exec(
    em,
    `insert into ${t} (product_id, name, price, position, created_at)
       select ?, o.name, o.price, o.position, now() from jsonb_to_recordset(?::jsonb) as o(name text, price bigint, position int)`,
    [productId, JSON.stringify(list)],
  );
}

/** The shop's sku counter (the shop row is locked by the caller). */
export async function skuCounter(em: EntityManager, catalogueId: number): Promise<number> {
  return Number(
    (await one<Pick<Row<'catalogues', 'catalogues'>, 'sku_seq'>>(em, 'select sku_seq from catalogues where id = ?', [catalogueId]))!
      .sku_seq,
  );
}

export async function setSkuCounter(em: EntityManager, catalogueId: number, seq: number): Promise<void> {
  await exec(em, 'update catalogues set sku_seq = ? where id = ?', [seq, catalogueId]);
}

/** Which of these skus the shop has. */
export async function takenSkus(em: EntityManager, catalogueId: number, skus: readonly string[]): Promise<Set<string>> {
  const rows = await many<Pick<Products, 'sku'>>(em, 'select sku from products where catalogue_id = ? and sku = any(?::text[])', [
    catalogueId,
    skus,
  ]);
  return new Set(rows.map((r) => r.sku));
}

// ---------------------------------------------------------------------------------------------
// Brand and category records

export type RecordTable = 'product_brands' | 'product_categories';

/** Makes the record on first use (concurrent first uses meet on one); answers its id and whether this call made it. */
export async function recordNamed(em: EntityManager, table: RecordTable, catalogueId: number, name: string) {
  const t = table === 'product_brands' ? 'product_brands' : 'product_categories';
  const made = await one<Pick<Row<'catalogues', RecordTable>, 'id'>>(
    em,
    `insert into ${t} (catalogue_id, name, created_at) values (?, ?, now()) on conflict (catalogue_id, name) do nothing returning id`,
    [catalogueId, name],
  );
  if (made) return { id: made.id, created: true };
  const found = await one<Pick<Row<'catalogues', RecordTable>, 'id'>>(em, `select id from ${t} where catalogue_id = ? and name = ?`, [
    catalogueId,
    name,
  ]);
  return { id: found!.id, created: false };
}

/** Removes records a refused write made, unless a product took them up meanwhile. */
export async function dropRecordsIfUnused(em: EntityManager, ids: { brandId?: number; categoryId?: number }): Promise<void> {
  if (ids.brandId)
    await exec(em, 'delete from product_brands b where b.id = ? and not exists (select 1 from products p where p.brand_id = b.id)', [
      ids.brandId,
    ]);
  if (ids.categoryId)
    await exec(em, 'delete from product_categories c where c.id = ? and not exists (select 1 from products p where p.category_id = c.id)', [
      ids.categoryId,
    ]);
}

/** The shop's products of these skus, with whether each is live on the platform (published, listed in one of `liveStates`). */
export async function liveness(
  em: EntityManager,
  shop: { id: number; accountId: number },
  platform: string,
  liveStates: readonly string[],
  skus: readonly string[],
) {
  return many<Pick<Products, 'sku' | 'name'> & { live: boolean }>(
    em,
    `select p.sku, p.name,
            (p.retired_at is null and p.visibility = 'published' and coalesce(l.state = any(?::text[]), false)) as live
       from products p left join product_listings l on l.product_id = p.id and l.platform = ?
      where p.catalogue_id = ? and p.account_id = ? and p.sku = any(?::text[])`,
    [liveStates, platform, shop.id, shop.accountId, skus],
  );
}
