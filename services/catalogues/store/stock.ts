import type { EntityManager } from '@mikro-orm/postgresql';
import { exec, many, one } from '../../../entities/db.js';
import type { Row } from '../../../entities/database.js';

// Stock: the inventory push, the availability that follows holds, the ledger, the low-stock mark
// and the platform pushes a stock change owes. The guarded, set-based statements stay SQL text.

type Products = Row<'catalogues', 'products'>;
type Movements = Row<'catalogues', 'stock_movements'>;

/** The skus of the levels the shop has no live product for, in the order sent. */
export async function unknownSkus(em: EntityManager, levelsJson: string, catalogueId: number, accountId: number) {
  return many<Pick<Products, 'sku'>>(
    em,
    `select e.l->>'sku' as sku from jsonb_array_elements(?::jsonb) with ordinality as e(l, ord)
        where not exists (select 1 from products p
                           where p.catalogue_id = ? and p.account_id = ? and p.sku = e.l->>'sku' and p.retired_at is null)
        order by e.ord`,
    [levelsJson, catalogueId, accountId],
  );
}

/**
 * Applies absolute counts to the shop's live products whose count differs; answers the products
 * changed. Rows are locked in id order (no deadlock between two pushes sharing products); `is
 * distinct from` is re-checked on a row another transaction just changed, so a level it already set
 * is unchanged here. Availability: see domain/catalogues/stock.ts (afterCount), the same rule.
 */
export async function applyLevels(
  em: EntityManager,
  levelsJson: string,
  shop: { id: number; account_id: number; allow_backorders: boolean },
  keptByDeliveries: readonly string[],
) {
  return many<Pick<Products, 'id' | 'sku' | 'reserved' | 'availability'> & { before: number | null; inventory: number }>(
    em,
    `with lv as (select l.sku, l.inventory from jsonb_to_recordset(?::jsonb) as l(sku text, inventory int)),
            cur as (select p.id, p.inventory as before, lv.inventory as after
                      from products p join lv on lv.sku = p.sku
                     where p.catalogue_id = ? and p.account_id = ? and p.retired_at is null
                       and p.inventory is distinct from lv.inventory
                     order by p.id
                       for update of p)
       update products p
          set inventory = cur.after,
              availability = case when p.availability = any(?::text[]) then p.availability
                                  when cur.after - p.reserved > 0 then 'in stock'
                                  when ?::boolean then 'available for order'
                                  else 'out of stock' end,
              availability_explicit = p.availability = any(?::text[]) and p.availability_explicit,
              revision = p.revision + 1,
              updated_at = now()
         from cur
        where p.id = cur.id
       returning p.id, p.sku, cur.before, p.inventory, p.reserved, p.availability`,
    [levelsJson, shop.id, shop.account_id, keptByDeliveries, shop.allow_backorders, keptByDeliveries],
  );
}

export interface StockFilter {
  skus: readonly string[];
  trackedOnly: boolean;
}

/** The shop's live products with their stock figures, by sku: how many, and one page. */
export async function stockPage(em: EntityManager, catalogueId: number, accountId: number, f: StockFilter, limit: number, offset: number) {
  const where = ['p.catalogue_id = ?', 'p.account_id = ?', 'p.retired_at is null'];
  const params: unknown[] = [catalogueId, accountId];
  if (f.skus.length) {
    where.push('p.sku = any(?::text[])');
    params.push(f.skus);
  }
  if (f.trackedOnly) where.push('p.inventory is not null');
  const total = Number((await one<{ n: string }>(em, `select count(*) as n from products p where ${where.join(' and ')}`, params))!.n);
  const rows = await many<Pick<Products, 'id' | 'sku' | 'inventory' | 'reserved' | 'availability'>>(
    em,
    `select p.id, p.sku, p.inventory, p.reserved, p.availability from products p
      where ${where.join(' and ')} order by p.sku, p.id limit ? offset ?`,
    [...params, limit, offset],
  );
  return { total, rows };
}

/**
 * The availability word follows what a customer may buy (discontinued and preorder stay); products
 * whose word changed move to a new revision. Answers them, with whether their shop is on a platform.
 */
export async function followAvailability(
  em: EntityManager,
  accountId: number,
  productIds: readonly number[],
  keptByDeliveries: readonly string[],
) {
  return many<Pick<Products, 'catalogue_id'> & { id: number; on_platforms: boolean }>(
    em,
    `update products p
        set availability = n.word, availability_explicit = false, revision = p.revision + 1, updated_at = now()
       from (select p2.id, c.channels <> '[]'::jsonb as on_platforms,
                    case when p2.inventory - p2.reserved > 0 then 'in stock'
                         when c.allow_backorders then 'available for order' else 'out of stock' end as word
               from products p2 join catalogues c on c.id = p2.catalogue_id
              where p2.id = any(?::bigint[]) and p2.account_id = ? and p2.inventory is not null and p2.retired_at is null
                and p2.availability <> all(?::text[])) n
      where p.id = n.id and p.availability is distinct from n.word
      returning p.id::int as id, p.catalogue_id, n.on_platforms`,
    [[...productIds], accountId, keptByDeliveries],
  );
}

// ---------------------------------------------------------------------------------------------
// The ledger

/** Appends movements (JSON of { productId, kind, quantity, inventoryAfter, reservedAfter, cause }) in the order given. */
export async function appendMovements(em: EntityManager, accountId: number, movementsJson: string): Promise<number> {
  return exec(
    em,
    `insert into stock_movements (account_id, product_id, kind, quantity, inventory_after, reserved_after, available_after, cause, created_at)
     select ?, (e.m->>'productId')::bigint, e.m->>'kind', (e.m->>'quantity')::int, (e.m->>'inventoryAfter')::int,
            (e.m->>'reservedAfter')::int, (e.m->>'inventoryAfter')::int - (e.m->>'reservedAfter')::int, e.m->'cause', now()
       from jsonb_array_elements(?::jsonb) with ordinality as e(m, ord)
      order by e.ord`,
    [accountId, movementsJson],
  );
}

/** A product now at or below its shop's low-stock threshold, marked noticed today. */
export type LowStockRow = Pick<Products, 'catalogue_id' | 'sku' | 'name'> & {
  product_id: Products['id'];
  available: number;
  threshold: number;
  noticed_on: string;
};

/** Marks today on those of the products at or below their shop's threshold and not yet noticed today (one guarded update). */
export async function markLowStock(em: EntityManager, accountId: number, productIds: readonly number[]): Promise<LowStockRow[]> {
  return many<LowStockRow>(
    em,
    `update products p set low_stock_noticed_on = d.today
       from catalogues c, (select (now() at time zone 'utc')::date as today) d
      where p.id = any(?::bigint[]) and p.account_id = ? and c.id = p.catalogue_id and c.low_stock_threshold is not null
        and p.retired_at is null and p.inventory is not null and p.inventory - p.reserved <= c.low_stock_threshold
        and p.low_stock_noticed_on is distinct from d.today
     returning p.id as product_id, p.catalogue_id, p.sku, p.name, p.inventory - p.reserved as available,
               c.low_stock_threshold as threshold, to_char(d.today, 'YYYY-MM-DD') as noticed_on`,
    [productIds, accountId],
  );
}

export async function liveProductOfSku(em: EntityManager, catalogueId: number, accountId: number, sku: string) {
  return one<Pick<Products, 'id' | 'sku'>>(
    em,
    'select id, sku from products where catalogue_id = ? and account_id = ? and sku = ? and retired_at is null',
    [catalogueId, accountId, sku],
  );
}

export type MovementRow = Pick<
  Movements,
  'id' | 'kind' | 'quantity' | 'inventory_after' | 'reserved_after' | 'available_after' | 'cause' | 'created_at'
>;

/** A product's movements, newest first: how many, and one page. */
export async function movementPage(em: EntityManager, productId: number, accountId: number, limit: number, offset: number) {
  const total = Number(
    (await one<{ n: string }>(em, 'select count(*) as n from stock_movements where product_id = ? and account_id = ?', [
      productId,
      accountId,
    ]))!.n,
  );
  const rows = await many<MovementRow>(
    em,
    `select id, kind, quantity, inventory_after, reserved_after, available_after, cause, created_at
       from stock_movements where product_id = ? and account_id = ? order by id desc limit ? offset ?`,
    [productId, accountId, limit, offset],
  );
  return { total, rows };
}

// ---------------------------------------------------------------------------------------------
// Push requests

type PushRequests = Row<'catalogues', 'product_push_requests'>;

export async function insertPushRequest(
  em: EntityManager,
  r: { accountId: number; catalogueId: number; pushId: string; productIds: readonly number[]; cause: Record<string, unknown> },
): Promise<number> {
  const row = await one<Pick<PushRequests, 'id'>>(
    em,
    `insert into product_push_requests (account_id, catalogue_id, push_id, product_ids, cause, created_at)
     values (?, ?, ?, ?::jsonb, ?::jsonb, now()) returning id`,
    [r.accountId, r.catalogueId, r.pushId, JSON.stringify(r.productIds), JSON.stringify(r.cause)],
  );
  return Number(row!.id);
}

export async function markPushStarted(em: EntityManager, id: number): Promise<void> {
  await exec(em, 'update product_push_requests set started_at = now() where id = ? and started_at is null', [id]);
}

/** Requests recorded at least `olderThanSeconds` ago and never marked started, oldest first. */
export async function unstartedPushes(em: EntityManager, olderThanSeconds: number, limit: number) {
  return many<Pick<PushRequests, 'id' | 'account_id' | 'catalogue_id' | 'push_id' | 'product_ids' | 'cause'>>(
    em,
    `select id, account_id, catalogue_id, push_id, product_ids, cause from product_push_requests
      where started_at is null and created_at < now() - make_interval(secs => ?) order by id limit ?`,
    [olderThanSeconds, limit],
  );
}
