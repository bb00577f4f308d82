import type { FromSchema } from 'json-schema-to-ts';
import crypto from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { KEPT_BY_DELIVERIES, availableOf, countMovement, duplicateSkuErrors, type LevelRow } from '../../domain/catalogues/stock.js';
import type { Logger } from '../../logger.js';
import type { StarterDeps } from '../../temporal/starters.js';
import { actorLabel, type RequestContext } from '../platform/context.js';
import { validationFailed } from '../platform/errors.js';
import { pageAnswer, pageOf } from '../platform/pagination.js';
import { CATALOGUE_LIMITS as L } from '../../domain/catalogues/vocabulary.js';
import { requireShop } from './shops.js';
import { noticeLowStock, recordMovements } from './stock-ledger.js';
import { requestPush, startPushAfterCommit } from './push-requests.js';
import { applyLevels, followAvailability, stockPage, unknownSkus } from './store/stock.js';

// Inventory pushes and the inventory list (Catalogues, products, stock, orders: POST and GET
// …/inventory; Inventory rules). A push is absolute counts: every level lands in one set-based
// statement, only on products whose count differs, with a `sync` movement each, the low-stock
// notice they may owe and one platform push for all of them, in one transaction.

export interface InventoryDeps extends StarterDeps<'taskQueue'> {
  log: Logger;
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
    const unknown = await unknownSkus(tx, levelsJson, shop.id, rc.account.id);
    const changed = await applyLevels(tx, levelsJson, { ...shop, account_id: rc.account.id }, KEPT_BY_DELIVERIES);
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

/** A sku as the stock operations take it. */
export const skuField = { type: 'string', minLength: 1, maxLength: L.skuMax } as const;

// Catalogue lists: default 25 a page (not the 20 of messages and contacts), at most 100.
export const cataloguePageQuery = {
  page: { type: 'integer', minimum: 1, maximum: 2_147_483_647 },
  per_page: { type: 'integer', minimum: 1, maximum: 2_147_483_647, description: 'default 25; above 100 reads as 100' },
  limit: { type: 'integer', minimum: 1, maximum: 2_147_483_647, description: 'wins over per_page; default 25; above 100 reads as 100' },
} as const;

/** GET …/inventory: only some skus, only tracked products, and the page. */
export const inventoryQuery = {
  type: 'object',
  properties: {
    sku: { type: 'array', items: skuField, maxItems: 100, description: 'only these skus (sku=a&sku=b)' },
    'sku[]': { type: 'array', items: skuField, maxItems: 100, description: 'only these skus (sku[]=a&sku[]=b)' },
    tracked_only: { type: 'boolean', description: 'true: only products with an inventory value' },
    ...cataloguePageQuery,
  },
} as const;
export type InventoryQuery = FromSchema<typeof inventoryQuery>;

/** The shop's live products with their stock figures, by sku (default 25 a page, at most 100). */
export async function listInventory(rc: RequestContext, catalogueRef: string, q: InventoryQuery) {
  const shop = await requireShop(rc, catalogueRef);
  const { page, perPage, offset } = pageOf({ ...q, limit: q.limit ?? q.per_page ?? 25 });
  const skus = [...(q.sku ?? []), ...(q['sku[]'] ?? [])];
  const { total, rows } = await stockPage(rc.em, shop.id, rc.account.id, { skus, trackedOnly: !!q.tracked_only }, perPage, offset);
  return pageAnswer(
    'inventory',
    rows.map((r) => ({
      sku: r.sku,
      product_id: Number(r.id),
      inventory: r.inventory,
      reserved: r.reserved,
      available: availableOf(r.inventory, r.reserved),
      availability: r.availability,
    })),
    { page, perPage },
    total,
  );
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
  const changed = await followAvailability(tx, accountId, productIds, KEPT_BY_DELIVERIES);
  const byShop = new Map<number, number[]>();
  for (const r of changed)
    if (r.on_platforms) (byShop.get(r.catalogue_id) ?? byShop.set(r.catalogue_id, []).get(r.catalogue_id)!).push(r.id);
  for (const [catalogueId, ids] of byShop)
    await requestPush(tx, { accountId, catalogueId, pushId: `stock-${crypto.randomUUID()}`, productIds: ids, cause });
  return changed.map((r) => r.id);
}
