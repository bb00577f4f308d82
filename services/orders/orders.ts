import type { EntityManager } from '@mikro-orm/postgresql';
import { exec, many, one } from '../../entities/db.js';
import type { OrderLine } from '../../entities/orders.js';
import type { OrderPlatform, OrderStatus } from '../../domain/catalogues/index.js';
import {
  ORDER_LIMITS,
  lineStock,
  needsAttention,
  orderTotal,
  quantitiesPerProduct,
  quantityProblem,
  type MatchedLine,
} from '../../domain/orders/lines.js';
import { followAvailableStock, noticeLowStock, recordMovements, type MovementInput } from '../catalogues/index.js';
import { emitEvent } from '../webhooks/index.js';
import { notFound, validationFailed, type FieldErrors } from '../platform/errors.js';
import { iso } from '../platform/time.js';
import type { RequestContext } from '../platform/context.js';
import { numericId } from '../platform/ids.js';
import { pageOf, paginationOf } from '../platform/pagination.js';
import { requireShopOpen } from '../shop/index.js';
import { checkoutHoldUnitSeconds, holdTtlUnitSeconds } from './ttl.js';

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
}

interface ShopStock {
  id: number;
  stock_policy: 'svc' | 'external';
  reservation_ttl_hours: number;
  checkout_hold_minutes: number;
  allow_backorders: boolean;
  default_currency: string | null;
  account_status: string;
}

interface ProductMatch {
  id: string;
  sku: string;
  name: string;
  price: string;
  sale_price: string | null;
  currency: string;
  inventory: number | null;
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
function holdSeconds(shop: ShopStock, checkoutHold: boolean): number {
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
  const shop = await one<ShopStock>(
    tx,
    `select c.id, c.stock_policy, c.reservation_ttl_hours, c.checkout_hold_minutes, c.allow_backorders, c.default_currency,
            a.status as account_status
       from catalogues c join accounts a on a.id = c.account_id
      where c.id = ? and c.account_id = ?`,
    [input.catalogueId, input.accountId],
  );
  if (!shop) throw notFound('Catalogue');
  // Every door's orders come through here, so a suspended account's shop takes none from any of
  // them (the shop page, a chat's order message): nothing is written and no unit is held.
  requireShopOpen(shop.account_status);

  // The order row first, so a redelivery racing this one waits on the unique key and then finds it,
  // before either has held a unit. Lines, total and expiry are filled in below, in this transaction.
  const inserted = await one<{ id: string; hold_expires_at: Date }>(
    tx,
    `insert into orders (account_id, catalogue_id, status, platform, customer_handle, provider_message_id, product_items,
                         total_amount, total_currency, needs_attention, cart_id, note, hold_expires_at, created_at, updated_at)
     values (?, ?, 'pending', ?, ?, ?, '[]'::jsonb, 0, ?, false, ?, ?, now() + make_interval(secs => ?), now(), now())
     on conflict (account_id, provider_message_id) do nothing
     returning id, hold_expires_at`,
    [
      input.accountId,
      shop.id,
      input.platform,
      input.customerHandle,
      input.providerMessageId ?? null,
      input.currency ?? shop.default_currency ?? 'USD',
      input.cartId ?? null,
      input.note ?? null,
      holdSeconds(shop, input.checkoutHold === true),
    ],
  );
  if (!inserted) {
    const existing = await one<{ id: string; hold_expires_at: Date | null; needs_attention: boolean }>(
      tx,
      'select id, hold_expires_at, needs_attention from orders where account_id = ? and provider_message_id = ?',
      [input.accountId, input.providerMessageId],
    );
    return {
      orderId: Number(existing!.id),
      created: false,
      holdExpiresAt: existing!.hold_expires_at ? new Date(existing!.hold_expires_at) : null,
      accountId: input.accountId,
      needsAttention: existing!.needs_attention,
    };
  }
  const orderId = Number(inserted.id);
  const expiresAt = new Date(inserted.hold_expires_at);

  const matched = await matchProducts(tx, input, shop.id);
  const matchedLines: MatchedLine[] = input.lines.map((l) => {
    const p = matched.get(l.retailerId);
    return { productId: p ? Number(p.id) : null, quantity: l.quantity, tracked: p ? p.inventory !== null : false };
  });

  // One guarded UPDATE per product, ascending id. A product already short of the sum matches no row
  // and changes nothing; an `inventory is null` row (untracked since it was read) matches none either.
  const held = new Map<number, { quantity: number; inventory: number; reserved: number }>();
  for (const want of quantitiesPerProduct(matchedLines)) {
    const row = await one<{ inventory: number; reserved: number }>(
      tx,
      `update products set reserved = reserved + ?
        where id = ? and account_id = ? and inventory is not null and (?::boolean or inventory - reserved >= ?)
       returning inventory, reserved`,
      [want.quantity, want.productId, input.accountId, shop.allow_backorders, want.quantity],
    );
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

  await exec(
    tx,
    `update orders set product_items = ?::jsonb, total_amount = ?, total_currency = ?, needs_attention = ?, hold_expires_at = ?
      where id = ?`,
    [JSON.stringify(lines), total, currency, attention, held.size ? expiresAt : null, orderId],
  );
  if (held.size) {
    const holds = [...held.entries()].map(([productId, h]) => ({ product_id: productId, quantity: h.quantity }));
    await exec(
      tx,
      `insert into stock_holds (account_id, order_id, product_id, quantity, status, expires_at, created_at)
       select ?, ?, h.product_id, h.quantity, 'held', ?, now() from jsonb_to_recordset(?::jsonb) as h(product_id bigint, quantity int)
        order by h.product_id`,
      [input.accountId, orderId, expiresAt, JSON.stringify(holds)],
    );
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
  return { orderId, created: true, holdExpiresAt: held.size ? expiresAt : null, accountId: input.accountId, needsAttention: attention };
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
  const rows = await many<ProductMatch>(
    tx,
    `select p.id, p.sku, p.name, p.price, p.sale_price, p.currency, p.inventory
       from products p where p.catalogue_id = ? and p.account_id = ? and p.sku = any(?::text[]) and p.retired_at is null`,
    [catalogueId, input.accountId, codes],
  );
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
      const extra = await one<{ variant_price: string | null; addons_price: string | null }>(
        tx,
        `select (select v.price from product_variants v where v.id = ? and v.product_id = ?) as variant_price,
                (select sum(a.price) from product_addons a where a.id = any(?::bigint[]) and a.product_id = ?) as addons_price`,
        [l.variantId ?? null, p.id, l.addonIds ?? [], p.id],
      );
      out.push(resolvePrice({ ...p, ...extra! }));
    }
  }
  return out;
}

// ---- reading -----------------------------------------------------------------------------------

export interface OrderRow {
  id: string;
  account_id: number;
  catalogue_id: number;
  status: OrderStatus;
  platform: OrderPlatform;
  customer_handle: string | null;
  provider_message_id: string | null;
  product_items: OrderLine[];
  total_amount: string;
  total_currency: string;
  needs_attention: boolean;
  cart_id: string | null;
  note: string | null;
  hold_expires_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

export const ORDER_COLUMNS = `id, account_id, catalogue_id, status, platform, customer_handle, provider_message_id, product_items,
  total_amount, total_currency, needs_attention, cart_id, note, hold_expires_at, created_at, updated_at`;

export async function readOrderRow(em: EntityManager, accountId: number, orderId: number, forUpdate = false): Promise<OrderRow | null> {
  return one<OrderRow>(em, `select ${ORDER_COLUMNS} from orders where id = ? and account_id = ?${forUpdate ? ' for update' : ''}`, [
    orderId,
    accountId,
  ]);
}

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

export interface OrderQuery {
  status?: OrderStatus;
  platform?: OrderPlatform;
  catalogue_id?: number;
  updated_since?: string;
  page?: number;
  per_page?: number;
  limit?: number;
}

/** The account's orders, most recently changed first (default 25 a page, at most 100; limit wins over per_page). */
export async function listOrders(rc: RequestContext, q: OrderQuery) {
  const { page, perPage, offset } = pageOf({ ...q, limit: q.limit ?? q.per_page ?? ORDER_LIMITS.pageDefault });
  const where = ['account_id = ?'];
  const params: unknown[] = [rc.account.id];
  const filter = (sql: string, value: unknown) => {
    where.push(sql);
    params.push(value);
  };
  if (q.status) filter('status = ?', q.status);
  if (q.platform) filter('platform = ?', q.platform);
  if (q.catalogue_id !== undefined) filter('catalogue_id = ?', q.catalogue_id);
  if (q.updated_since) filter('updated_at >= ?::timestamptz', q.updated_since);
  const cond = where.join(' and ');
  const total = Number((await one<{ n: string }>(rc.em, `select count(*) as n from orders where ${cond}`, params))!.n);
  const rows = await many<OrderRow>(
    rc.em,
    `select ${ORDER_COLUMNS} from orders where ${cond} order by updated_at desc, id desc limit ? offset ?`,
    [...params, perPage, offset],
  );
  return { orders: rows.map(orderView), pagination: paginationOf(page, perPage, total) };
}

/** One of the caller's orders, else 404 (another tenant's reads exactly like a missing one). */
export async function getOrder(rc: RequestContext, ref: string) {
  const row = await readOrderRow(rc.em, rc.account.id, numericId(ref, 'Order'));
  if (!row) throw notFound('Order');
  return orderView(row);
}
