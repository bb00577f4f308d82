import crypto from 'node:crypto';
import { many, one } from '../../entities/db.js';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Availability } from '../../domain/catalogues/vocabulary.js';
import { KEPT_BY_DELIVERIES, availableOf, countMovement, duplicateSkuErrors, type LevelRow } from '../../domain/catalogues/stock.js';
import type { Logger } from '../../logger.js';
import type { StarterDeps } from '../../temporal/starters.js';
import { actorLabel, type RequestContext } from '../platform/context.js';
import { validationFailed } from '../platform/errors.js';
import { pageOf, paginationOf } from '../platform/pagination.js';
import { requireShop } from './shops.js';
import { noticeLowStock, recordMovements } from './stock-ledger.js';
import { requestPush, startPushAfterCommit } from './push-requests.js';

// Inventory pushes and the inventory list (Catalogues, products, stock, orders: POST and GET
// …/inventory; Inventory rules). A push is absolute counts: every level lands in one set-based
// statement, only on products whose count differs, with a `sync` movement each, the low-stock
// notice they may owe and one platform push for all of them, in one transaction.

export interface InventoryDeps extends StarterDeps<'taskQueue'> {
  log: Logger;
}

interface ChangedRow {
  id: string;
  sku: string;
  before: number | null;
  inventory: number;
  reserved: number;
  availability: Availability;
}

export const derivedRowSchema = {
  type: 'object',
  required: ['sku', 'product_id', 'inventory', 'reserved', 'available', 'availability'],
  properties: {
    sku: { type: 'string' },
    product_id: { type: 'integer' },
    inventory: { type: ['integer', 'null'], description: 'on hand; null when the product is not tracked' },
    reserved: { type: 'integer', description: 'held by pending orders' },
    available: { type: ['integer', 'null'], description: 'inventory less reserved; decides whether a customer may buy' },
    availability: { type: 'string' },
  },
} as const;

/**
 * Applies absolute counts. Refused whole (422, nothing applied) when a sku is sent twice; the
 * schema has already refused a bad count naming its row. Answers the products whose count changed
 * (`derived`, in request order), the skus the shop has no live product for, and how many levels
 * were already at their value (`unchanged`: not written, not republished).
 */
export async function pushInventory(rc: RequestContext, deps: InventoryDeps, catalogueRef: string, levels: readonly LevelRow[]) {
  const dup = duplicateSkuErrors(levels);
  if (Object.keys(dup).length) throw validationFailed(dup);
  const pushId = `inventory-${crypto.randomUUID()}`;
  const cause = { actor: actorLabel(rc.actor), kind: 'inventory_push', push_id: pushId };
  const levelsJson = JSON.stringify(levels.map((l) => ({ sku: l.sku, inventory: l.inventory })));

  const { changed, unknown, push } = await rc.em.transactional(async (tx) => {
    const shop = await requireShop({ ...rc, em: tx }, catalogueRef);
    const unknown = await many<{ sku: string }>(
      tx,
      `select e.l->>'sku' as sku from jsonb_array_elements(?::jsonb) with ordinality as e(l, ord)
        where not exists (select 1 from products p
                           where p.catalogue_id = ? and p.account_id = ? and p.sku = e.l->>'sku' and p.retired_at is null)
        order by e.ord`,
      [levelsJson, shop.id, rc.account.id],
    );
    // Rows are locked in id order (no deadlock between two pushes sharing products); `is distinct
    // from` is re-checked on a row another transaction just changed, so a level it already set is
    // unchanged here. Availability: see domain/catalogues/stock.ts (afterCount), the same rule.
    const changed = await many<ChangedRow>(
      tx,
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
      [levelsJson, shop.id, rc.account.id, KEPT_BY_DELIVERIES, shop.allow_backorders, KEPT_BY_DELIVERIES],
    );
    await recordMovements(
      tx,
      rc.account.id,
      changed.map((c) => ({
        productId: Number(c.id),
        kind: 'sync' as const,
        quantity: countMovement(c.before, c.inventory),
        inventoryAfter: c.inventory,
        reservedAfter: c.reserved,
        cause,
      })),
    );
    const productIds = changed.map((c) => Number(c.id));
    await noticeLowStock(tx, rc.account.id, productIds);
    const push =
      productIds.length && shop.channels.length
        ? await requestPush(tx, { accountId: rc.account.id, catalogueId: shop.id, pushId, productIds, cause })
        : null;
    return { changed, unknown, push };
  });
  if (push) await startPushAfterCommit(rc.em, deps, rc.log, push);

  const order = new Map(levels.map((l, i) => [l.sku, i]));
  const derived = changed
    .map((c) => ({
      sku: c.sku,
      product_id: Number(c.id),
      inventory: c.inventory,
      reserved: c.reserved,
      available: c.inventory - c.reserved,
      availability: c.availability,
    }))
    .sort((a, b) => order.get(a.sku)! - order.get(b.sku)!);
  return {
    derived,
    unknown_skus: unknown.map((u) => u.sku),
    unchanged: levels.length - changed.length - unknown.length,
    push_id: push?.pushId ?? null,
  };
}

export interface InventoryQuery {
  sku?: string[];
  'sku[]'?: string[];
  tracked_only?: boolean;
  page?: number;
  per_page?: number;
  limit?: number;
}

interface InventoryRow {
  id: string;
  sku: string;
  inventory: number | null;
  reserved: number;
  availability: Availability;
}

/** The shop's live products with their stock figures, by sku (default 25 a page, at most 100). */
export async function listInventory(rc: RequestContext, catalogueRef: string, q: InventoryQuery) {
  const shop = await requireShop(rc, catalogueRef);
  const { page, perPage, offset } = pageOf({ ...q, limit: q.limit ?? q.per_page ?? 25 });
  const where = ['p.catalogue_id = ?', 'p.account_id = ?', 'p.retired_at is null'];
  const params: unknown[] = [shop.id, rc.account.id];
  const skus = [...(q.sku ?? []), ...(q['sku[]'] ?? [])];
  if (skus.length) {
    where.push('p.sku = any(?::text[])');
    params.push(skus);
  }
  if (q.tracked_only) where.push('p.inventory is not null');
  const total = Number((await one<{ n: string }>(rc.em, `select count(*) as n from products p where ${where.join(' and ')}`, params))!.n);
  const rows = await many<InventoryRow>(
    rc.em,
    `select p.id, p.sku, p.inventory, p.reserved, p.availability from products p
      where ${where.join(' and ')} order by p.sku, p.id limit ? offset ?`,
    [...params, perPage, offset],
  );
  return {
    inventory: rows.map((r) => ({
      sku: r.sku,
      product_id: Number(r.id),
      inventory: r.inventory,
      reserved: r.reserved,
      available: availableOf(r.inventory, r.reserved),
      availability: r.availability,
    })),
    pagination: paginationOf(page, perPage, total),
  };
}

/**
 * After holds, releases or commits change `reserved` (or `inventory`): the availability word follows
 * what a customer may buy (inventory − reserved), as an inventory push makes it follow the count —
 * discontinued and preorder stay, backorder shops say `available for order` at 0. Products whose
 * word changed get a new revision and are owed one push to every platform their shop is on
 * (recorded in the transaction; the worker's reconciler starts it within a minute if the caller
 * does not). Answers the products that changed.
 */
export async function followAvailableStock(
  tx: EntityManager,
  accountId: number,
  productIds: readonly number[],
  cause: Record<string, unknown>,
) {
  if (productIds.length === 0) return [];
  const changed = await many<{ id: number; catalogue_id: number; on_platforms: boolean }>(
    tx,
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
    [[...productIds], accountId, KEPT_BY_DELIVERIES],
  );
  const byShop = new Map<number, number[]>();
  for (const r of changed)
    if (r.on_platforms) (byShop.get(r.catalogue_id) ?? byShop.set(r.catalogue_id, []).get(r.catalogue_id)!).push(r.id);
  for (const [catalogueId, ids] of byShop)
    await requestPush(tx, { accountId, catalogueId, pushId: `stock-${crypto.randomUUID()}`, productIds: ids, cause });
  return changed.map((r) => r.id);
}
