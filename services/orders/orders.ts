import type { FromSchema } from 'json-schema-to-ts';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { OrderLine } from '../../entities/orders.js';
import { ORDER_PLATFORMS, ORDER_STATUSES, type OrderPlatform } from '../../domain/orders/index.js';
import {
  ORDER_LIMITS,
  lineStock,
  needsAttention,
  orderTotal,
  quantitiesPerProduct,
  quantityProblem,
  type MatchedLine,
} from '../../domain/orders/lines.js';
import {
  followAvailableStock,
  noticeLowStock,
  optionPrices,
  productsForLines,
  recordMovements,
  requireShopOpen,
  reserveStock,
  shopForOrder,
  type MovementInput,
  type OrderShop,
  type ProductMatch,
} from '../catalogues/index.js';
import { emitEvent } from '../webhooks/index.js';
import { notFound, validationFailed, type FieldErrors } from '../platform/errors.js';
import { iso } from '../platform/time.js';
import type { RequestContext } from '../platform/context.js';
import { numericId } from '../platform/ids.js';
import { pageAnswer, pageOf } from '../platform/pagination.js';
import { accountStatus } from '../account/index.js';
import { checkoutHoldUnitSeconds, holdTtlUnitSeconds } from './ttl.js';
import { fillOrder, insertHolds, insertOrder, orderOfProviderMessage, orderPage, readOrderRow, type OrderRow } from './store.js';

// Order creation (Resources > Order; States > Order, "order creation"): runs inside the caller's
// transaction (a chat order with its inbound message, a basket with its submission), so the order,
// its holds, their movements and order.received commit or vanish together. Every unit is held by a
// guarded UPDATE (notes §1.2): no read of availability is ever trusted for a write.

export interface CreateOrderLineInput {
  retailerId: string;
  quantity: number;
  /** Hundredths per unit, already computed by the caller; absent: the product's own price (see resolvePrice). */
  unitPriceMinor?: number | null;
  variantId?: number | null;
  addonIds?: number[];
  note?: string | null;
  name?: string | null;
}

export interface CreateOrderInput {
  accountId: number;
  catalogueId: number;
  platform: OrderPlatform;
  customerHandle: string | null;
  /** The provider message the order arrived in: a second order with it is the same order (redelivery). */
  providerMessageId?: string | null;
  cartId?: number | null;
  /**
   * The order comes from a basket nobody vouches for (the public shop page, no known customer): its
   * stock is held for the shop's checkout_hold_minutes only, never longer than the reservation TTL.
   */
  checkoutHold?: boolean;
  note?: string | null;
  /** Defaults to the shop's default_currency, else the first matched product's. */
  currency?: string;
  lines: CreateOrderLineInput[];
}

export interface CreatedOrder {
  orderId: number;
  /** false when providerMessageId was already recorded: a redelivered webhook, nothing new written. */
  created: boolean;
  /** When the holds lapse unless the order moves on; null when nothing is held (no order-hold workflow owed). */
  holdExpiresAt: Date | null;
  accountId: number;
  needsAttention: boolean;
  /** The total written (total_amount, hundredths) and its currency; null on a redelivery, which wrote nothing. */
  total: { minor: number; currency: string } | null;
}

/** The input's problems by field (`lines.2.quantity`), or null. */
function inputProblems(input: CreateOrderInput): FieldErrors | null {
  const errors: FieldErrors = {};
  if (!Array.isArray(input.lines) || input.lines.length === 0) errors.lines = ['An order needs at least one line.'];
  else if (input.lines.length > ORDER_LIMITS.linesMax) errors.lines = [`An order may have at most ${ORDER_LIMITS.linesMax} lines.`];
  else
    input.lines.forEach((l, i) => {
      const q = quantityProblem(l.quantity);
      if (q) errors[`lines.${i}.quantity`] = [q];
      if (typeof l.retailerId !== 'string' || l.retailerId.length === 0 || l.retailerId.length > 100)
        errors[`lines.${i}.product_retailer_id`] = ['The product code must be 1 to 100 characters.'];
      const p = l.unitPriceMinor;
      if (p !== undefined && p !== null && (!Number.isSafeInteger(p) || p < 0))
        errors[`lines.${i}.item_price`] = ['The price must be a whole number of hundredths, at least 0.'];
    });
  if (input.currency !== undefined && !/^[A-Z]{3}$/.test(input.currency)) errors.currency = ['The currency must be 3 capital letters.'];
  return Object.keys(errors).length ? errors : null;
}

/** How long a new order's holds last: the reservation TTL, or the checkout window when that is shorter and applies. */
function holdSeconds(shop: OrderShop, checkoutHold: boolean): number {
  const ttl = shop.reservation_ttl_hours * holdTtlUnitSeconds();
  return checkoutHold ? Math.min(ttl, shop.checkout_hold_minutes * checkoutHoldUnitSeconds()) : ttl;
}

/**
 * Records an order and holds its stock, in the caller's transaction. A providerMessageId already
 * recorded for the account answers that order (created false) and writes nothing. Refuses (422,
 * nothing written) a line with a quantity that is not a positive whole number; a missing or foreign
 * shop is 404; the shop of a suspended account is closed (403 `shop_closed`, nothing written).
 * After the caller commits, hand the answer to startOrderHoldAfterCommit.
 */
export async function createOrder(tx: EntityManager, input: CreateOrderInput): Promise<CreatedOrder> {
  const problems = inputProblems(input);
  if (problems) throw validationFailed(problems);
  const shop = await shopForOrder(tx, input.accountId, input.catalogueId);
  const status = shop && (await accountStatus(tx, shop.account_id));
  if (!shop || !status) throw notFound('Catalogue');
  // Every door's orders come through here, so a suspended account's shop takes none from any of
  // them (the shop page, a chat's order message): nothing is written and no unit is held.
  requireShopOpen(status);

  // The order row first, so a redelivery racing this one waits on the unique key and then finds it,
  // before either has held a unit. Lines, total and expiry are filled in below, in this transaction.
  const inserted = await insertOrder(tx, {
    accountId: input.accountId,
    catalogueId: shop.id,
    platform: input.platform,
    customerHandle: input.customerHandle,
    providerMessageId: input.providerMessageId ?? null,
    currency: input.currency ?? shop.default_currency ?? 'USD',
    cartId: input.cartId ?? null,
    note: input.note ?? null,
    holdSeconds: holdSeconds(shop, input.checkoutHold === true),
  });
  if (!inserted) {
    const existing = await orderOfProviderMessage(tx, input.accountId, input.providerMessageId);
    return {
      orderId: Number(existing!.id),
      created: false,
      holdExpiresAt: existing!.hold_expires_at ? new Date(existing!.hold_expires_at) : null,
      accountId: input.accountId,
      needsAttention: existing!.needs_attention,
      total: null,
    };
  }
  const orderId = Number(inserted.id);
  const expiresAt = new Date(inserted.hold_expires_at!);

  const matched = await matchProducts(tx, input, shop.id);
  const matchedLines: MatchedLine[] = input.lines.map((l) => {
    const p = matched.get(l.retailerId);
    return { productId: p ? Number(p.id) : null, quantity: l.quantity, tracked: p ? p.inventory !== null : false };
  });

  // One guarded UPDATE per product, ascending id. A product already short of the sum matches no row
  // and changes nothing; an `inventory is null` row (untracked since it was read) matches none either.
  const held = new Map<number, { quantity: number; inventory: number; reserved: number }>();
  for (const want of quantitiesPerProduct(matchedLines)) {
    const row = await reserveStock(tx, input.accountId, want.productId, want.quantity, shop.allow_backorders);
    if (row) held.set(want.productId, { quantity: want.quantity, ...row });
  }
  const heldIds = new Set(held.keys());
  const prices = await linePrices(tx, input, matched);
  const currency = input.currency ?? shop.default_currency ?? [...matched.values()][0]?.currency ?? 'USD';
  const lines: OrderLine[] = input.lines.map((l, i) => {
    const p = matched.get(l.retailerId);
    return {
      product_retailer_id: l.retailerId,
      product_id: p ? Number(p.id) : null,
      ...(l.variantId != null ? { variant_id: l.variantId } : {}),
      ...(l.addonIds?.length ? { addon_ids: l.addonIds } : {}),
      name: l.name ?? p?.name ?? null,
      quantity: l.quantity,
      item_price: prices[i],
      currency,
      ...(l.note != null ? { note: l.note } : {}),
      stock: lineStock(matchedLines[i], heldIds),
    };
  });
  const attention = needsAttention(lines.map((l) => l.stock));
  const total = orderTotal(lines);
  if (!Number.isSafeInteger(total)) throw validationFailed({ lines: ['The order total is too large.'] });

  await fillOrder(tx, orderId, { lines, total, currency, needsAttention: attention, holdExpiresAt: held.size ? expiresAt : null });
  if (held.size) {
    const holds = [...held.entries()].map(([productId, h]) => ({ product_id: productId, quantity: h.quantity }));
    await insertHolds(tx, input.accountId, orderId, expiresAt, holds);
    const cause = {
      actor: `order:${orderId}`,
      kind: 'order',
      order_id: orderId,
      platform: input.platform,
      hold_expires_at: iso(expiresAt),
    };
    await recordMovements(
      tx,
      input.accountId,
      [...held.entries()].map(([productId, h]): MovementInput => ({
        productId,
        kind: 'reserve',
        quantity: h.quantity,
        inventoryAfter: h.inventory,
        reservedAfter: h.reserved,
        cause,
      })),
    );
    await noticeLowStock(tx, input.accountId, [...heldIds]);
    await followAvailableStock(tx, input.accountId, [...heldIds], cause);
  }
  const view = await readOrderRow(tx, input.accountId, orderId);
  await emitEvent(tx, input.accountId, 'order.received', orderView(view!));
  return {
    orderId,
    created: true,
    holdExpiresAt: held.size ? expiresAt : null,
    accountId: input.accountId,
    needsAttention: attention,
    total: { minor: total, currency },
  };
}

/**
 * A line's price when the caller gave none: the size's price when a size of the product is named
 * (it replaces the product price), else sale_price when set (the price the shop shows), else price;
 * plus every add-on of the product named. Frozen into the line; never re-priced.
 */
export function resolvePrice(p: {
  price: string | number;
  sale_price: string | number | null;
  variant_price?: string | number | null;
  addons_price?: string | number | null;
}): number {
  const base = p.variant_price ?? p.sale_price ?? p.price;
  return Number(base) + Number(p.addons_price ?? 0);
}

/** The live products of the shop the lines name, by code. */
async function matchProducts(tx: EntityManager, input: CreateOrderInput, catalogueId: number): Promise<Map<string, ProductMatch>> {
  const codes = [...new Set(input.lines.map((l) => l.retailerId))];
  const rows = await productsForLines(tx, input.accountId, catalogueId, codes);
  return new Map(rows.map((r) => [r.sku, r]));
}

/** Each line's price in hundredths: the caller's, else resolvePrice with the line's own size and add-ons. */
async function linePrices(tx: EntityManager, input: CreateOrderInput, matched: Map<string, ProductMatch>): Promise<number[]> {
  const out: number[] = [];
  for (const l of input.lines) {
    const p = matched.get(l.retailerId);
    if (l.unitPriceMinor != null) out.push(l.unitPriceMinor);
    else if (!p) out.push(0);
    else if (l.variantId == null && !l.addonIds?.length) out.push(resolvePrice(p));
    else {
      // Only ids of this product count: another product's size or add-on prices nothing.
      const extra = await optionPrices(tx, p.id, l.variantId ?? null, l.addonIds ?? []);
      out.push(resolvePrice({ ...p, ...extra }));
    }
  }
  return out;
}

// ---- reading -----------------------------------------------------------------------------------

/** The contract's order (Resources > Order): the API answer and the flat order.received payload. */
export function orderView(o: OrderRow) {
  return {
    id: Number(o.id),
    catalogue_id: o.catalogue_id,
    status: o.status,
    platform: o.platform,
    customer_handle: o.customer_handle,
    customer_wa_id: o.customer_handle,
    provider_message_id: o.provider_message_id,
    product_items: o.product_items,
    total_amount: Number(o.total_amount),
    total_currency: o.total_currency,
    needs_attention: o.needs_attention,
    cart_id: o.cart_id === null ? null : Number(o.cart_id),
    note: o.note,
    hold_expires_at: iso(o.hold_expires_at),
    created_at: iso(o.created_at),
    updated_at: iso(o.updated_at),
  };
}
export type OrderView = ReturnType<typeof orderView>;

/** GET /orders: the filters and the page (default ORDER_LIMITS.pageDefault). */
export const orderListQuery = {
  type: 'object',
  properties: {
    status: { enum: ORDER_STATUSES },
    platform: { enum: ORDER_PLATFORMS },
    catalogue_id: { type: 'integer', minimum: 1, maximum: 2_147_483_647 },
    updated_since: { type: 'string', format: 'date-time', description: 'only orders changed at or after this time' },
    page: { type: 'integer', minimum: 1, maximum: 2_147_483_647 },
    per_page: {
      type: 'integer',
      minimum: 1,
      maximum: 2_147_483_647,
      description: `default ${ORDER_LIMITS.pageDefault}; above 100 reads as 100`,
    },
    limit: {
      type: 'integer',
      minimum: 1,
      maximum: 2_147_483_647,
      description: `wins over per_page; default ${ORDER_LIMITS.pageDefault}; above 100 reads as 100`,
    },
  },
} as const;
export type OrderQuery = FromSchema<typeof orderListQuery>;

/** The account's orders, most recently changed first (default 25 a page, at most 100; limit wins over per_page). */
export async function listOrders(rc: RequestContext, q: OrderQuery) {
  const { page, perPage, offset } = pageOf({ ...q, limit: q.limit ?? q.per_page ?? ORDER_LIMITS.pageDefault });
  const { total, rows } = await orderPage(
    rc.em,
    rc.account.id,
    { status: q.status, platform: q.platform, catalogueId: q.catalogue_id, updatedSince: q.updated_since },
    perPage,
    offset,
  );
  return pageAnswer('orders', rows.map(orderView), { page, perPage }, total);
}

/** One of the caller's orders, else 404 (another tenant's reads exactly like a missing one). */
export async function getOrder(rc: RequestContext, ref: string) {
  const row = await readOrderRow(rc.em, rc.account.id, numericId(ref, 'Order'));
  if (!row) throw notFound('Order');
  return orderView(row);
}
