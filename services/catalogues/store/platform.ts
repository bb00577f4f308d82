import type { EntityManager } from '@mikro-orm/postgresql';
import { exec, many, one } from '../../../entities/db.js';
import type { Row } from '../../../entities/database.js';
import type { ListingState } from '../../../domain/catalogues/vocabulary.js';

// The platform side: what a push reads of a shop and its products, and the listing writes of a
// push and of its batches' settlement. Every listing write is a state check (pushed_revision,
// state), so a retried activity or a late answer never moves a listing back.

type Products = Row<'catalogues', 'products'>;
type Listings = Row<'catalogues', 'product_listings'>;

export type PushShop = Pick<Row<'catalogues', 'catalogues'>, 'id' | 'account_id' | 'name' | 'vertical' | 'channels' | 'meta_catalogue_id'>;

export async function pushShop(em: EntityManager, accountId: number, catalogueId: number): Promise<PushShop | null> {
  return one<PushShop>(
    em,
    'select id, account_id, name, vertical, channels, meta_catalogue_id from catalogues where id = ? and account_id = ?',
    [catalogueId, accountId],
  );
}

/** Stores the provider's catalogue id unless one is stored already; answers the one stored. */
export async function storeProviderCatalogue(em: EntityManager, catalogueId: number, metaCatalogueId: string): Promise<string | null> {
  await exec(em, 'update catalogues set meta_catalogue_id = ?, updated_at = now() where id = ? and meta_catalogue_id is null', [
    metaCatalogueId,
    catalogueId,
  ]);
  const stored = await one<Pick<Row<'catalogues', 'catalogues'>, 'meta_catalogue_id'>>(
    em,
    'select meta_catalogue_id from catalogues where id = ?',
    [catalogueId],
  );
  return stored?.meta_catalogue_id ?? null;
}

export type PushProduct = Pick<
  Products,
  | 'id'
  | 'sku'
  | 'name'
  | 'description'
  | 'price'
  | 'sale_price'
  | 'currency'
  | 'image_url'
  | 'availability'
  | 'condition'
  | 'inventory'
  | 'reserved'
  | 'visibility'
  | 'product_type'
  | 'revision'
  | 'retired_at'
> & { brand: string | null; category: string | null };

/** The shop's products of these ids, by id, with brand and category names. */
export async function pushProducts(em: EntityManager, shop: { id: number; account_id: number }, ids: readonly number[]) {
  return many<PushProduct>(
    em,
    `select p.id, p.sku, p.name, p.description, p.price, p.sale_price, p.currency, p.image_url, p.availability, p.condition,
            p.inventory, p.reserved, p.visibility, p.product_type, p.revision, p.retired_at, b.name as brand, c.name as category
       from products p
       left join product_brands b on b.id = p.brand_id
       left join product_categories c on c.id = p.category_id
      where p.catalogue_id = ? and p.account_id = ? and p.id = any(?::bigint[])
      order by p.id`,
    [shop.id, shop.account_id, ids],
  );
}

/** A pending listing on every platform for each of the products that has none there. */
export async function addPendingListings(em: EntityManager, productIds: readonly number[], platforms: readonly string[]): Promise<void> {
  await exec(
    em,
    `insert into product_listings (product_id, platform, state, pushed_revision, updated_at)
           select pid, pf, 'pending', 0, now() from unnest(?::bigint[]) pid cross join unnest(?::text[]) pf
           on conflict do nothing`,
    [productIds, platforms],
  );
}

export type PushListing = Pick<Listings, 'product_id' | 'platform' | 'state' | 'platform_item_id' | 'pushed_revision'>;

export async function pushListings(em: EntityManager, productIds: readonly number[]) {
  return many<PushListing>(
    em,
    'select product_id, platform, state, platform_item_id, pushed_revision from product_listings where product_id = any(?::bigint[])',
    [productIds],
  );
}

/** Listing state writes of one platform, one statement for any number of products. */
export async function writeListings(
  em: EntityManager,
  platform: string,
  rows: ReadonlyArray<{ productId: number; state: ListingState; problem: string | null; pushedRevision?: number }>,
): Promise<void> {
  await exec(
    em,
    `update product_listings l
        set state = v.state, problem = v.problem, pushed_revision = coalesce(v.pushed, l.pushed_revision),
            drift = case when v.state in ('synced', 'blocked') then null else l.drift end, updated_at = now()
       from (select unnest(?::bigint[]) as product_id, unnest(?::text[]) as state, unnest(?::text[]) as problem, unnest(?::int[]) as pushed) v
      where l.product_id = v.product_id and l.platform = ?`,
    [
      rows.map((r) => r.productId),
      rows.map((r) => r.state),
      rows.map((r) => r.problem),
      rows.map((r) => r.pushedRevision ?? null),
      platform,
    ],
  );
}

export async function dropListings(em: EntityManager, platform: string, productIds: readonly number[]): Promise<void> {
  await exec(em, `delete from product_listings where platform = ? and product_id = any(?::bigint[])`, [platform, productIds]);
}

/** The shop's products of these ids with their listing on the platform (a batch's settlement). */
export async function settleRows(em: EntityManager, platform: string, catalogueId: number, ids: readonly number[]) {
  return many<Pick<Products, 'id' | 'sku' | 'revision'> & Pick<Listings, 'platform_item_id'> & { state: ListingState | null }>(
    em,
    `select p.id, p.sku, p.revision, l.platform_item_id, l.state
           from products p left join product_listings l on l.product_id = p.id and l.platform = ?
          where p.catalogue_id = ? and p.id = any(?::bigint[])`,
    [platform, catalogueId, ids],
  );
}

/** Synced at the revision sent, unless a newer revision was pushed since; answers how many. */
export async function markSynced(
  em: EntityManager,
  platform: string,
  synced: ReadonlyArray<{ id: number; revision: number; itemId: string | null }>,
): Promise<number> {
  return exec(
    em,
    `update product_listings l
              set state = 'synced', problem = null, drift = null, pushed_revision = v.rev,
                  platform_item_id = coalesce(v.item_id, l.platform_item_id), updated_at = now()
             from (select unnest(?::bigint[]) as product_id, unnest(?::int[]) as rev, unnest(?::text[]) as item_id) v
            where l.product_id = v.product_id and l.platform = ? and l.pushed_revision <= v.rev and l.state in ('syncing', 'pending', 'failed')`,
    [synced.map((s) => s.id), synced.map((s) => s.revision), synced.map((s) => s.itemId), platform],
  );
}

export async function setProviderProductIds(em: EntityManager, rows: ReadonlyArray<{ id: number; itemId: string }>): Promise<void> {
  await exec(
    em,
    `update products p set meta_product_id = v.item_id
               from (select unnest(?::bigint[]) as id, unnest(?::text[]) as item_id) v
              where p.id = v.id and p.meta_product_id is distinct from v.item_id`,
    [rows.map((s) => s.id), rows.map((s) => s.itemId)],
  );
}

/** Failed with the platform's words, when still syncing or pending. */
export async function markFailed(em: EntityManager, platform: string, failed: ReadonlyArray<{ productId: number; problem: string }>) {
  await exec(
    em,
    `update product_listings l set state = 'failed', problem = v.problem, updated_at = now()
             from (select unnest(?::bigint[]) as product_id, unnest(?::text[]) as problem) v
            where l.product_id = v.product_id and l.platform = ? and l.state in ('syncing', 'pending')`,
    [failed.map((f) => f.productId), failed.map((f) => f.problem), platform],
  );
}

/** Listings still syncing go back to pending (a newer revision will carry them). */
export async function markSyncingPending(em: EntityManager, platform: string, productIds: readonly number[]): Promise<void> {
  await exec(
    em,
    `update product_listings set state = 'pending', updated_at = now() where product_id = any(?::bigint[]) and platform = ? and state = 'syncing'`,
    [productIds, platform],
  );
}

/** The platform deleted these items: the item ids are forgotten, and the listings of retired products go. */
export async function forgetDeletedItems(em: EntityManager, platform: string, productIds: readonly number[]): Promise<void> {
  await exec(
    em,
    'update product_listings set platform_item_id = null, updated_at = now() where product_id = any(?::bigint[]) and platform = ?',
    [productIds, platform],
  );
  await exec(
    em,
    `delete from product_listings l using products p
            where l.product_id = p.id and p.id = any(?::bigint[]) and l.platform = ? and p.retired_at is not null`,
    [productIds, platform],
  );
  await exec(em, 'update products set meta_product_id = null where id = any(?::bigint[]) and meta_product_id is not null', [productIds]);
}

/** Fails the platform's listings of these products still syncing; answers their skus. */
export async function failSyncing(em: EntityManager, platform: string, productIds: readonly number[], reason: string): Promise<string[]> {
  const rows = await many<Pick<Products, 'sku'>>(
    em,
    `with f as (
       update product_listings set state = 'failed', problem = ?, updated_at = now()
        where product_id = any(?::bigint[]) and platform = ? and state = 'syncing'
       returning product_id)
     select p.sku from f join products p on p.id = f.product_id`,
    [reason, productIds, platform],
  );
  return rows.map((r) => r.sku);
}
