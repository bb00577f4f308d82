import type { EntityManager } from '@mikro-orm/postgresql';
import { exec, many, one } from '../../../entities/db.js';
import type { Row } from '../../../entities/database.js';
import type { FieldDrift, ListingState } from '../../../domain/catalogues/vocabulary.js';

// The hourly drift comparison's reads and guarded writes (listing state, pushed revision = product
// revision), so a retry, a second run or a racing product edit never moves a listing back.

type Products = Row<'catalogues', 'products'>;
type Listings = Row<'catalogues', 'product_listings'>;

export type DriftShopRow = Pick<
  Row<'catalogues', 'catalogues'>,
  'id' | 'account_id' | 'channels' | 'meta_catalogue_id' | 'source_of_truth'
>;

/** One keyset page of the shops on the platform with a provider catalogue (optionally one account's). */
export async function shopsOnPlatform(em: EntityManager, platform: string, afterId: number, limit: number, accountId?: number) {
  return many<Pick<Row<'catalogues', 'catalogues'>, 'id' | 'account_id'>>(
    em,
    `select id, account_id from catalogues
          where id > ? and meta_catalogue_id is not null and jsonb_exists(channels, ?)
            and (?::int is null or account_id = ?::int)
          order by id limit ?`,
    [afterId, platform, accountId ?? null, accountId ?? null, limit],
  );
}

export async function driftShop(em: EntityManager, catalogueId: number, accountId: number) {
  return one<DriftShopRow>(
    em,
    'select id, account_id, channels, meta_catalogue_id, source_of_truth from catalogues where id = ? and account_id = ?',
    [catalogueId, accountId],
  );
}

/** The database's clock as text (the comparison's start, kept across heartbeats). */
export async function databaseNow(em: EntityManager): Promise<string> {
  return (await one<{ t: string }>(em, 'select now()::text as t'))!.t;
}

export type CompareRow = Pick<
  Products,
  'id' | 'sku' | 'name' | 'description' | 'price' | 'sale_price' | 'currency' | 'availability' | 'condition' | 'revision'
> &
  Pick<Listings, 'state' | 'drift' | 'platform_item_id'> & { brand: string | null; category: string | null };

/**
 * The shop's live products of these skus whose listing on the platform is live at the product's
 * revision, locked in product id order (as every multi-product write here), so a product edit waits
 * for this page or this page for it.
 */
export async function comparable(em: EntityManager, platform: string, shop: { id: number; account_id: number }, skus: readonly string[]) {
  return many<CompareRow>(
    em,
    `select p.id, p.sku, p.name, p.description, p.price, p.sale_price, p.currency, p.availability, p.condition,
                b.name as brand, c.name as category, p.revision, l.state, l.drift, l.platform_item_id
           from products p
           join product_listings l on l.product_id = p.id and l.platform = ?
           left join product_brands b on b.id = p.brand_id
           left join product_categories c on c.id = p.category_id
          where p.catalogue_id = ? and p.account_id = ? and p.sku = any(?::text[]) and p.retired_at is null
            and l.state in ('synced', 'drifted') and l.pushed_revision = p.revision
          order by p.id
          for update of p, l`,
    [platform, shop.id, shop.account_id, skus],
  );
}

/** How many of these skus name a live product of the shop. */
export async function liveSkuCount(em: EntityManager, catalogueId: number, skus: readonly string[]): Promise<number> {
  const known = await one<{ n: number }>(
    em,
    'select count(*)::int as n from products where catalogue_id = ? and sku = any(?::text[]) and retired_at is null',
    [catalogueId, skus],
  );
  return known?.n ?? 0;
}

/** Checked and agreeing: a drifted listing whose copies agree again is synced. */
export async function markAgreeing(em: EntityManager, platform: string, agreeing: ReadonlyArray<{ id: number; itemId: string }>) {
  await exec(
    em,
    `update product_listings l
              set checked_at = now(),
                  state = case when l.state = 'drifted' then 'synced' else l.state end,
                  drift = case when l.state = 'drifted' then null else l.drift end,
                  updated_at = case when l.state = 'drifted' then now() else l.updated_at end,
                  platform_item_id = coalesce(l.platform_item_id, v.item_id)
             from (select unnest(?::bigint[]) as product_id, unnest(?::text[]) as item_id) v
            where l.product_id = v.product_id and l.platform = ?`,
    [agreeing.map((a) => a.id), agreeing.map((a) => a.itemId), platform],
  );
}

export async function markChecked(
  em: EntityManager,
  platform: string,
  productId: number,
  state: ListingState,
  drift: FieldDrift[] | null,
  itemId: string,
): Promise<void> {
  await exec(
    em,
    `update product_listings
          set state = ?, drift = ?::jsonb, checked_at = now(), updated_at = now(), platform_item_id = coalesce(platform_item_id, ?)
        where product_id = ? and platform = ?`,
    [state, drift === null ? null : JSON.stringify(drift), itemId, productId, platform],
  );
}

/** The product columns a pull-in may set. */
export type PullInColumn =
  'name' | 'description' | 'price' | 'sale_price' | 'currency' | 'availability' | 'condition' | 'brand_id' | 'category_id';
const PULL_IN_COLUMNS: readonly PullInColumn[] = [
  'name',
  'description',
  'price',
  'sale_price',
  'currency',
  'availability',
  'condition',
  'brand_id',
  'category_id',
];

/**
 * Takes the platform's values at the revision compared (an availability so set becomes explicit),
 * the revision moving on, and every listing that was at that revision moves with it. Answers
 * whether the row took them (false: the product changed since).
 */
export async function pullInValues(
  em: EntityManager,
  productId: number,
  revision: number,
  values: ReadonlyArray<[PullInColumn, unknown]>,
): Promise<boolean> {
  const set: string[] = [];
  for (const [c] of values) {
    if (!PULL_IN_COLUMNS.includes(c)) throw new Error(`not a pull-in column: ${String(c)}`);
    set.push(`${c} = ?`);
    // The platform chose it, not the count: a later stock change must not undo it.
    if (c === 'availability') set.push('availability_explicit = true');
  }
  const n = await exec(
    em,
    `update products set ${set.join(', ')}, revision = revision + 1, updated_at = now() where id = ? and revision = ?`,
    [...values.map(([, v]) => v), productId, revision],
  );
  if (n === 1)
    await exec(em, 'update product_listings set pushed_revision = ? where product_id = ? and pushed_revision = ?', [
      revision + 1,
      productId,
      revision,
    ]);
  return n === 1;
}

/**
 * Live listings not checked since `startedAt` (and unchanged since): their item is gone from the
 * platform. Marked checked, the provider id forgotten; answers their products.
 */
export async function markMissingRemote(em: EntityManager, platform: string, catalogueId: number, startedAt: string) {
  const rows = await many<Pick<Listings, 'product_id'>>(
    em,
    `update product_listings l
            set checked_at = now(), platform_item_id = null
           from products p
          where l.product_id = p.id and l.platform = ? and p.catalogue_id = ? and p.retired_at is null
            and l.state in ('synced', 'drifted') and l.pushed_revision = p.revision
            and (l.checked_at is null or l.checked_at < ?::timestamptz) and l.updated_at < ?::timestamptz
          returning l.product_id`,
    [platform, catalogueId, startedAt, startedAt],
  );
  return rows.map((m) => Number(m.product_id));
}
