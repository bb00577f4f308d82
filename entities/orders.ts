import { defineEntity, p } from '@mikro-orm/core';
import { createdAt, timestamps } from './columns.js';
import { Catalogue, Product } from './catalogues.js';
import { HOLD_STATUSES, ORDER_PLATFORMS, ORDER_STATUSES } from '../domain/orders/index.js';

/** One frozen order line (Resources > Order, product_items): never re-priced after creation. */
export type OrderLine = {
  product_retailer_id: string;
  product_id: number | null;
  variant_id?: number | null;
  addon_ids?: number[];
  name: string | null;
  quantity: number;
  /** Hundredths of the currency, per unit (incoming chat item_price values are major units). */
  item_price: number;
  currency: string;
  note?: string | null;
  /** held: the whole quantity is held; stock_short: it could not be held whole; unresolved: the code is not in the catalogue; untracked: the product keeps no count. */
  stock: 'held' | 'stock_short' | 'unresolved' | 'untracked';
};

// An order (Resources > Order). Lines and total are frozen at creation; `status` may move from any
// value to any value, and the stock holds move by their own status, never by the order's previous one.
export const Order = defineEntity({
  name: 'Order',
  tableName: 'orders',
  properties: {
    id: p.bigint('string').primary().autoincrement(),
    accountId: p.integer(),
    catalogue: p.manyToOne(Catalogue).deleteRule('cascade'),
    status: p.enum(ORDER_STATUSES).default('pending'),
    platform: p.enum(ORDER_PLATFORMS),
    customerHandle: p.string().length(191).nullable(),
    /** The provider message id the order arrived in (chat orders); unique per account, so a redelivered webhook makes no second order. */
    providerMessageId: p.string().length(128).nullable(),
    productItems: p.json<OrderLine[]>(),
    totalAmount: p.bigint('string'),
    totalCurrency: p.string().length(3),
    needsAttention: p.boolean().default(false),
    cartId: p.bigint('string').nullable(),
    note: p.text().nullable(),
    /** When a pending order's holds are released unless it moves on (created_at + the shop's reservation_ttl_hours). */
    holdExpiresAt: p.datetime().nullable(),
    /** When its order-hold workflow was started; null while one is owed (holds taken, start not yet confirmed: the reconciler starts it). */
    holdWorkflowStartedAt: p.datetime().nullable(),
    ...timestamps(),
  },
  uniques: [{ properties: ['accountId', 'providerMessageId'] }],
  indexes: [
    { properties: ['accountId', 'updatedAt', 'id'] },
    { properties: ['catalogue', 'id'] },
    // The reconciler's owed order-hold starts (a partial index, Migration20261124192000).
    {
      name: 'orders_hold_workflow_owed_index',
      expression:
        'create index "orders_hold_workflow_owed_index" on "orders" ("created_at") where "hold_expires_at" is not null and "hold_workflow_started_at" is null',
    },
  ],
});

// Units of one product held for one order: held → committed | released | expired, each move a
// guarded UPDATE … where status = 'held', so a race (confirmation against expiry) has one winner.
export const StockHold = defineEntity({
  name: 'StockHold',
  tableName: 'stock_holds',
  properties: {
    id: p.bigint('string').primary().autoincrement(),
    accountId: p.integer(),
    order: p.manyToOne(Order).deleteRule('cascade'),
    product: p.manyToOne(Product).deleteRule('cascade'),
    quantity: p.integer(),
    status: p.enum(HOLD_STATUSES).default('held'),
    expiresAt: p.datetime(),
    createdAt: createdAt(),
    resolvedAt: p.datetime().nullable(),
  },
  uniques: [{ properties: ['order', 'product'] }],
  indexes: [{ properties: ['product', 'status'] }],
});
