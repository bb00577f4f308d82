import { defineEntity, p } from '@mikro-orm/core';
import { timestamps } from './columns.js';
import { Catalogue, Product, ProductVariant } from './catalogues.js';
import { CART_STATUSES } from '../domain/shop/index.js';

// A basket (Resources > Cart): opened by a shop link or on the shop page, addressed by its 5-character
// `ref` (unique per account) or id. Prices are the service's, computed from product, size and add-ons.
export const Cart = defineEntity({
  name: 'Cart',
  tableName: 'carts',
  properties: {
    id: p.bigint('string').primary().autoincrement(),
    accountId: p.integer(),
    catalogue: p.manyToOne(Catalogue).deleteRule('cascade'),
    ref: p.string().length(5),
    /**
     * The shop page's secret (the link is `/shop/<ref>/<page_key>`): refs are short and unique per
     * account only, so the capability a public page needs is this random key, unique across accounts.
     */
    pageKey: p.string().length(32).unique(),
    status: p.enum(CART_STATUSES).default('open'),
    /** The chat the link was sent into (a basket opened from a chat can be abandoned). */
    conversationId: p.string().length(191).nullable(),
    customerHandle: p.string().length(191).nullable(),
    note: p.text().nullable(),
    subtotalMinor: p.bigint('string').default(0),
    currency: p.string().length(3),
    orderId: p.bigint('string').nullable(),
    /** What the link opens on: a category (id), a product, or the menu. */
    opens: p.json<Record<string, unknown>>(),
    lastActivityAt: p.datetime().onCreate(() => new Date()),
    /**
     * The client address that opened the basket on a product page, and the one that submitted it
     * from the shop page, with when: what the per-address limits of a shop count (never answered).
     */
    openedFrom: p.string().length(64).nullable(),
    submittedFrom: p.string().length(64).nullable(),
    submittedAt: p.datetime().nullable(),
    ...timestamps(),
  },
  uniques: [{ properties: ['accountId', 'ref'] }],
  indexes: [
    { properties: ['accountId', 'id'] },
    {
      name: 'carts_opened_from_index',
      expression: `create index "carts_opened_from_index" on "carts" ("catalogue_id", "opened_from", "created_at") where "opened_from" is not null`,
    },
    {
      name: 'carts_submitted_from_index',
      expression: `create index "carts_submitted_from_index" on "carts" ("catalogue_id", "submitted_from", "submitted_at") where "submitted_from" is not null`,
    },
  ],
});

export const CartItem = defineEntity({
  name: 'CartItem',
  tableName: 'cart_items',
  properties: {
    id: p.bigint('string').primary().autoincrement(),
    cart: p.manyToOne(Cart).deleteRule('cascade'),
    product: p.manyToOne(Product).deleteRule('cascade'),
    variant: p.manyToOne(ProductVariant).nullable().deleteRule('set null'),
    addonIds: p.json<number[]>(),
    quantity: p.integer(),
    note: p.text().nullable(),
    /** Hundredths: the size's price (else the product's) plus each add-on, computed by the service. */
    unitPriceMinor: p.bigint('string'),
    ...timestamps(),
  },
  indexes: [{ properties: ['cart', 'id'] }],
});
