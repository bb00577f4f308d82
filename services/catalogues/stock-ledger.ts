import type { EntityManager } from '@mikro-orm/postgresql';
import type { MovementKind } from '../../domain/catalogues/vocabulary.js';
import { emitEvent } from '../webhooks/index.js';
import { recordNotices } from '../account/index.js';
import { notFound } from '../platform/errors.js';
import type { RequestContext } from '../platform/context.js';
import { pageAnswer, pageOf } from '../platform/pagination.js';
import { iso } from '../platform/time.js';
import { requireShop } from './shops.js';
import { appendMovements, liveProductOfSku, markLowStock, movementPage, type LowStockRow, type MovementRow } from './store/stock.js';

export type { LowStockRow };

// The stock ledger (Resources > Inventory row and movement): append-only, one row per change of a
// product's inventory or reserved figure, written in the transaction of the change by whoever makes
// it (inventory pushes here; holds, releases and commits of orders next). Corrections are new rows,
// never edits. Also the low-stock notice every such change may owe.

/** One movement to record: the signed quantity and the figures the product has after it. */
export interface MovementInput {
  productId: number;
  kind: MovementKind;
  /** Signed: + adds to the figure the kind moves (inventory for sync/adjust/commit, reserved for reserve), − takes away. */
  quantity: number;
  /** On hand after the change; null when the product is not tracked. */
  inventoryAfter: number | null;
  reservedAfter: number;
  /** Who or what moved it: { actor, kind, ... } (an order id, a push id, a TTL). */
  cause: Record<string, unknown>;
}

/**
 * Appends movements in one statement, in the order given (ids ascend, so "newest first" reads them
 * back in reverse). `available_after` is derived here (inventory less reserved), so no caller can
 * record figures that disagree. Call it with the transaction of the stock change.
 */
export async function recordMovements(tx: EntityManager, accountId: number, rows: readonly MovementInput[]): Promise<number> {
  if (!rows.length) return 0;
  return appendMovements(tx, accountId, JSON.stringify(rows));
}

/**
 * The low-stock notice (Limits: at most once a day per product): for each of the given products now
 * at or below its shop's `low_stock_threshold`, and not yet noticed today (UTC), marks today, emits
 * `product.low_stock` and records an account notice. The mark is one guarded UPDATE, so two changes
 * racing on one product notice it once. Call it with the transaction of the stock change, after it.
 */
export async function noticeLowStock(tx: EntityManager, accountId: number, productIds: readonly number[]): Promise<LowStockRow[]> {
  if (!productIds.length) return [];
  const low = await markLowStock(tx, accountId, productIds);
  for (const r of low) {
    await emitEvent(tx, accountId, 'product.low_stock', lowStockFields(r));
  }
  await recordNotices(
    tx,
    accountId,
    low.map((r) => ({
      kind: 'product.low_stock',
      message: `${r.sku} (${r.name}) is low on stock: ${r.available} available, threshold ${r.threshold}.`,
      data: lowStockFields(r),
      dedupeKey: `product.low_stock:${r.product_id}:${r.noticed_on}`,
    })),
  );
  return low;
}

const lowStockFields = (r: LowStockRow) => ({
  catalogue_id: r.catalogue_id,
  product_id: Number(r.product_id),
  sku: r.sku,
  available: r.available,
  threshold: r.threshold,
});

// ---- reading -----------------------------------------------------------------------------------

export const movementView = (m: MovementRow) => ({
  id: Number(m.id),
  kind: m.kind,
  quantity: m.quantity,
  inventory_after: m.inventory_after,
  reserved_after: m.reserved_after,
  available_after: m.available_after,
  cause: m.cause,
  created_at: iso(m.created_at),
});

export const movementSchema = {
  type: 'object',
  required: ['id', 'kind', 'quantity', 'inventory_after', 'reserved_after', 'available_after', 'cause', 'created_at'],
  properties: {
    id: { type: 'integer' },
    kind: { enum: ['reserve', 'release', 'commit', 'adjust', 'sync'] },
    quantity: { type: 'integer', description: 'signed: what the movement added (+) or took away (−)' },
    inventory_after: { type: ['integer', 'null'], description: 'on hand after the movement; null while not tracked' },
    reserved_after: { type: 'integer', description: 'held by pending orders after the movement' },
    available_after: { type: ['integer', 'null'], description: 'inventory_after less reserved_after' },
    cause: { type: 'object', description: 'who or what moved it: actor and kind (inventory_push, order, ttl…), with its reference' },
    created_at: { type: 'string', format: 'date-time' },
  },
} as const;

/** A live product of the caller's shop by sku, else 404 (another tenant's reads like a missing one). */
export async function requireProductBySku(rc: RequestContext, catalogueRef: string, sku: string): Promise<{ id: number; sku: string }> {
  const shop = await requireShop(rc, catalogueRef);
  const row = await liveProductOfSku(rc.em, shop.id, rc.account.id, sku);
  if (!row) throw notFound('Product');
  return { id: Number(row.id), sku: row.sku };
}

/** A product's movements, newest first, in pages (default 25, at most 100). */
export async function listMovements(
  rc: RequestContext,
  catalogueRef: string,
  sku: string,
  q: { page?: number; per_page?: number; limit?: number },
) {
  const product = await requireProductBySku(rc, catalogueRef, sku);
  const { page, perPage, offset } = pageOf({ ...q, limit: q.limit ?? q.per_page ?? 25 });
  const { total, rows } = await movementPage(rc.em, product.id, rc.account.id, perPage, offset);
  return { sku: product.sku, ...pageAnswer('movements', rows.map(movementView), { page, perPage }, total) };
}
