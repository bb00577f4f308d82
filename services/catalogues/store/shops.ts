import type { EntityManager } from '@mikro-orm/postgresql';
import { exec, many, one } from '../../../entities/db.js';
import type { Row } from '../../../entities/database.js';
import type { PlatformKey } from '../../../domain/catalogues/vocabulary.js';

// The shops (the contract's catalogues): the row the services read, the answer's row, and the
// settings changes with what they do to the shop's products.

type Catalogues = Row<'catalogues', 'catalogues'>;

/** A shop as the services of this family need it (the row, snake_case as stored). */
export type ShopRow = Pick<
  Catalogues,
  | 'id'
  | 'account_id'
  | 'name'
  | 'default_currency'
  | 'meta_catalogue_id'
  | 'channels'
  | 'sku_prefix'
  | 'stock_policy'
  | 'source_of_truth'
  | 'reservation_ttl_hours'
  | 'low_stock_threshold'
  | 'allow_backorders'
>;

/** A shop row as the answer shows it: the settings and the descriptive columns, with its live product count. */
export type CatalogueRow = Omit<Catalogues, 'account_id' | 'sku_seq'> & { products_count?: string | number };

export async function shopOfAccount(em: EntityManager, id: number, accountId: number, forUpdate = false): Promise<ShopRow | null> {
  return one<ShopRow>(
    em,
    `select id, account_id, name, default_currency, meta_catalogue_id, channels, sku_prefix, stock_policy, source_of_truth,
            reservation_ttl_hours, low_stock_threshold, allow_backorders
       from catalogues where id = ? and account_id = ?${forUpdate ? ' for update' : ''}`,
    [id, accountId],
  );
}

const COUNTED = `select c.id, c.name, c.description, c.vertical, c.default_currency, c.meta_catalogue_id, c.channels, c.sku_prefix,
          c.stock_policy, c.source_of_truth, c.reservation_ttl_hours, c.low_stock_threshold, c.allow_backorders,
          c.max_line_quantity, c.max_basket_quantity, c.checkout_hold_minutes, c.address_baskets_per_hour,
          c.address_orders_per_hour, c.created_at, c.updated_at,
          (select count(*) from products p where p.catalogue_id = c.id and p.retired_at is null) as products_count
   from catalogues c`;

export async function countCatalogues(em: EntityManager, accountId: number): Promise<number> {
  return Number((await one<{ n: string }>(em, 'select count(*) as n from catalogues where account_id = ?', [accountId]))!.n);
}

/** Newest first. */
export async function cataloguesPage(em: EntityManager, accountId: number, limit: number, offset: number): Promise<CatalogueRow[]> {
  return many<CatalogueRow>(em, `${COUNTED} where c.account_id = ? order by c.id desc limit ? offset ?`, [accountId, limit, offset]);
}

export async function catalogueById(em: EntityManager, id: number): Promise<CatalogueRow | null> {
  return one<CatalogueRow>(em, `${COUNTED} where c.id = ?`, [id]);
}

export type NewCatalogue = Omit<Catalogues, 'id' | 'meta_catalogue_id' | 'sku_seq' | 'created_at' | 'updated_at' | 'channels'> & {
  channels: readonly string[];
};

export async function insertCatalogue(em: EntityManager, c: NewCatalogue): Promise<number> {
  const row = await one<Pick<Catalogues, 'id'>>(
    em,
    `insert into catalogues (account_id, name, description, vertical, default_currency, channels, sku_prefix, sku_seq, stock_policy,
                             source_of_truth, reservation_ttl_hours, low_stock_threshold, allow_backorders, max_line_quantity,
                             max_basket_quantity, checkout_hold_minutes, address_baskets_per_hour, address_orders_per_hour,
                             created_at, updated_at)
     values (?, ?, ?, ?, ?, ?::jsonb, ?, 0, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, now(), now()) returning id`,
    [
      c.account_id,
      c.name,
      c.description,
      c.vertical,
      c.default_currency,
      JSON.stringify(c.channels),
      c.sku_prefix,
      c.stock_policy,
      c.source_of_truth,
      c.reservation_ttl_hours,
      c.low_stock_threshold,
      c.allow_backorders,
      c.max_line_quantity,
      c.max_basket_quantity,
      c.checkout_hold_minutes,
      c.address_baskets_per_hour,
      c.address_orders_per_hour,
    ],
  );
  return row!.id;
}

export async function deleteCatalogue(em: EntityManager, id: number, accountId: number): Promise<void> {
  await exec(em, 'delete from catalogues where id = ? and account_id = ?', [id, accountId]);
}

/** Stores the chat provider's catalogue id unless one is stored already. */
/** The account's shop whose provider catalogue is `metaCatalogueId` (the oldest when several); null when none. */
export async function shopOfProviderCatalogue(
  em: EntityManager,
  accountId: number,
  metaCatalogueId: string,
): Promise<{ id: number } | null> {
  return one<{ id: number }>(em, 'select id from catalogues where account_id = ? and meta_catalogue_id = ? order by id limit 1', [
    accountId,
    metaCatalogueId,
  ]);
}

export async function setMetaCatalogueId(em: EntityManager, id: number, metaCatalogueId: string): Promise<void> {
  await exec(em, 'update catalogues set meta_catalogue_id = ? where id = ? and meta_catalogue_id is null', [metaCatalogueId, id]);
}

/** The settings a change may set, by column (channels as their JSON). */
export const SETTING_COLUMNS = [
  'name',
  'description',
  'vertical',
  'default_currency',
  'stock_policy',
  'source_of_truth',
  'reservation_ttl_hours',
  'low_stock_threshold',
  'allow_backorders',
  'channels',
  'max_line_quantity',
  'max_basket_quantity',
  'checkout_hold_minutes',
  'address_baskets_per_hour',
  'address_orders_per_hour',
] as const;
export type SettingColumn = (typeof SETTING_COLUMNS)[number];

/** Sets the given settings (columns from SETTING_COLUMNS only, in the order given). */
export async function updateSettings(em: EntityManager, id: number, values: ReadonlyArray<[SettingColumn, unknown]>): Promise<void> {
  const sets = values.map(([c]) => {
    if (!SETTING_COLUMNS.includes(c)) throw new Error(`not a setting: ${String(c)}`);
    return `${c} = ?${c === 'channels' ? '::jsonb' : ''}`;
  });
  await exec(em, `update catalogues set ${sets.join(', ')}, updated_at = now() where id = ?`, [
    ...values.map(([c, v]) => (c === 'channels' ? JSON.stringify(v) : v)),
    id,
  ]);
}

/** Every live product of the shop gets a pending listing on each added platform; answers the products given one. */
export async function listOnAddedChannels(em: EntityManager, catalogueId: number, added: readonly string[]): Promise<number[]> {
  const rows = await many<Pick<Row<'catalogues', 'product_listings'>, 'product_id'>>(
    em,
    `insert into product_listings (product_id, platform, state, pushed_revision, updated_at)
     select p.id, ch.platform, 'pending', 0, now() from products p cross join unnest(?::text[]) as ch(platform)
      where p.catalogue_id = ? and p.retired_at is null
     on conflict (product_id, platform) do nothing returning product_id`,
    [added, catalogueId],
  );
  return rows.map((r) => Number(r.product_id));
}

/** Products whose availability follows the count and sit at 0 available take the availability; answers those moved. */
export async function rederiveZeroAvailability(em: EntityManager, catalogueId: number, availability: string): Promise<number[]> {
  const rows = await many<Pick<Row<'catalogues', 'products'>, 'id'>>(
    em,
    `update products set availability = ?, updated_at = now()
      where catalogue_id = ? and not availability_explicit and inventory is not null and inventory - reserved <= 0
        and availability <> ? returning id`,
    [availability, catalogueId, availability],
  );
  return rows.map((r) => Number(r.id));
}

export async function bumpRevisions(em: EntityManager, productIds: readonly number[]): Promise<void> {
  await exec(em, 'update products set revision = revision + 1 where id = any(?::bigint[])', [productIds]);
}

/** Locks the shop row (serialises writes that count or number the shop's children). */
export async function lockShop(em: EntityManager, id: number): Promise<void> {
  await one(em, 'select id from catalogues where id = ? for update', [id]);
}

/** A shop as a product send needs it. */
export type SendShop = Pick<Catalogues, 'id' | 'meta_catalogue_id' | 'channels'>;
const SEND_SHOP = 'select id, meta_catalogue_id, channels from catalogues where account_id = ?';

/** The account's shop of this provider catalogue id (the oldest, should two share it). */
export async function sendShopOfProviderId(em: EntityManager, accountId: number, metaCatalogueId: string): Promise<SendShop[]> {
  return many<SendShop>(em, `${SEND_SHOP} and meta_catalogue_id = ? order by id limit 1`, [accountId, metaCatalogueId]);
}

export async function sendShopOfId(em: EntityManager, accountId: number, id: number): Promise<SendShop[]> {
  return many<SendShop>(em, `${SEND_SHOP} and id = ?`, [accountId, id]);
}

/** Up to two of the account's shops on the platform (the chat channel: with a provider catalogue). */
export async function sendShopsOn(em: EntityManager, accountId: number, platform: PlatformKey): Promise<SendShop[]> {
  return many<SendShop>(
    em,
    platform === 'whatsapp'
      ? `${SEND_SHOP} and meta_catalogue_id is not null order by id limit 2`
      : `${SEND_SHOP} and channels @> '["storefront"]'::jsonb order by id limit 2`,
    [accountId],
  );
}
