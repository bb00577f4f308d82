import type { FromSchema } from 'json-schema-to-ts';
import { randomBytes } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { RequestContext } from '../platform/context.js';
import { DomainError, notFound, validationFailed } from '../platform/errors.js';
import { pageAnswer, pageOf, pageQueryProperties } from '../platform/pagination.js';
import { CART_STATUSES, type CartStatus } from '../../domain/shop/index.js';
import {
  addonsById,
  productLabels,
  productOptions,
  shopBasketCaps,
  variantsById,
  type ProductForLine,
  type ProductOption,
} from '../catalogues/index.js';
import {
  basketCount,
  cartOfAccount,
  cartPage,
  insertCartRow,
  insertItems,
  itemsOf,
  refreshSubtotal,
  type CartRow,
  type PricedLine,
  type Opens,
} from './store.js';
import {
  CART_LIMITS,
  basketCapProblems,
  cartKeyOf,
  lineTotalOf,
  refFromBytes,
  unitPriceOf,
  type BasketCaps,
} from '../../domain/shop/cart.js';
import { iso } from '../platform/time.js';

// Baskets: the one cart shape every door answers with (REST, MCP, webhooks), reads, and the writes
// the link and the page share (lines priced by the service, the subtotal kept with them).

export { refreshSubtotal, type CartRow, type Opens, type ProductForLine };

/** Statuses a basket can still be changed or submitted in. */
export const EDITABLE: readonly CartStatus[] = ['open', 'sent', 'abandoned'];

/** The page address of a basket: `<PUBLIC_BASE_URL>/shop/<ref>/<page_key>`. */
export const cartLink = (baseUrl: string, c: Pick<CartRow, 'ref' | 'page_key'>) =>
  `${baseUrl.replace(/\/+$/, '')}/shop/${c.ref}/${c.page_key}`;

const moneyLine = { type: 'integer', description: 'hundredths of the currency' } as const;
const priced = {
  type: 'object',
  required: ['id', 'name', 'price_minor'],
  properties: { id: { type: 'integer' }, name: { type: 'string' }, price_minor: moneyLine },
} as const;

/** Resources > Cart: the same object through the API, webhooks (cart.*) and MCP. */
export const cartSchema = {
  type: 'object',
  required: ['id', 'ref', 'status', 'items', 'subtotal_minor', 'currency', 'note', 'conversation_id', 'order_id', 'link'],
  properties: {
    id: { type: 'integer' },
    ref: { type: 'string', description: '5-character code; either it or id is accepted on read' },
    status: { enum: [...CART_STATUSES] },
    catalogue_id: { type: 'integer' },
    items: {
      type: 'array',
      items: {
        type: 'object',
        required: ['id', 'product_id', 'sku', 'name', 'variant', 'options', 'quantity', 'note', 'unit_price_minor', 'line_total_minor'],
        properties: {
          id: { type: 'integer' },
          product_id: { type: 'integer' },
          sku: { type: 'string' },
          name: { type: 'string' },
          variant: { anyOf: [priced, { type: 'null' }], description: 'the size; its price replaces the product price' },
          options: { type: 'array', items: priced, description: 'add-ons; each adds its price' },
          quantity: { type: 'integer', minimum: 1 },
          note: { type: ['string', 'null'] },
          unit_price_minor: { ...moneyLine, description: 'size (else product) price plus add-ons, computed by the service' },
          line_total_minor: moneyLine,
        },
      },
    },
    subtotal_minor: moneyLine,
    currency: { type: 'string' },
    note: { type: ['string', 'null'] },
    conversation_id: { type: ['string', 'null'], description: 'whatsapp:<sender phone number id>:<customer E.164>' },
    customer_handle: { type: ['string', 'null'] },
    order_id: { type: ['integer', 'null'], description: 'set once the basket became an order' },
    link: { type: 'string', description: 'the shop page of this basket (the link is its capability)' },
    opens: { type: 'object', description: 'menu, a category or a product' },
    last_activity_at: { type: 'string', format: 'date-time' },
    created_at: { type: 'string', format: 'date-time' },
    updated_at: { type: 'string', format: 'date-time' },
  },
} as const;

export type CartView = Awaited<ReturnType<typeof cartViews>>[number];

/** The answers of these baskets, in the order given (the caller scoped them to its account). */
export async function cartViews(em: EntityManager, baseUrl: string, carts: readonly CartRow[]) {
  const ids = carts.map((c) => Number(c.id));
  const lines = ids.length ? await itemsOf(em, ids) : [];
  // The product and size each line shows are the catalogue's; a line whose product is gone shows not.
  const productIds = [...new Set(lines.map((i) => Number(i.product_id)))];
  const products = new Map((productIds.length ? await productLabels(em, productIds) : []).map((p) => [Number(p.id), p]));
  const variantIds = [...new Set(lines.flatMap((i) => (i.variant_id === null ? [] : [Number(i.variant_id)])))];
  const variants = new Map((variantIds.length ? await variantsById(em, variantIds) : []).map((v) => [Number(v.id), v]));
  const items = lines.flatMap((i) => {
    const p = products.get(Number(i.product_id));
    const v = i.variant_id === null ? undefined : variants.get(Number(i.variant_id));
    return p ? [{ ...i, sku: p.sku, product_name: p.name, variant_name: v?.name ?? null, variant_price: v?.price ?? null }] : [];
  });
  const addonIds = [...new Set(items.flatMap((i) => i.addon_ids.map(Number)))];
  const addons = new Map(
    (addonIds.length ? await addonsById(em, addonIds) : []).map((a) => [
      Number(a.id),
      { id: Number(a.id), name: a.name, price_minor: Number(a.price) },
    ]),
  );
  return carts.map((c) => ({
    id: Number(c.id),
    ref: c.ref,
    status: c.status,
    catalogue_id: c.catalogue_id,
    items: items
      .filter((i) => Number(i.cart_id) === Number(c.id))
      .map((i) => ({
        id: Number(i.id),
        product_id: Number(i.product_id),
        sku: i.sku,
        name: i.product_name,
        variant:
          i.variant_id === null
            ? null
            : { id: Number(i.variant_id), name: i.variant_name ?? '', price_minor: Number(i.variant_price ?? 0) },
        options: i.addon_ids.flatMap((a) => addons.get(Number(a)) ?? []),
        quantity: i.quantity,
        note: i.note,
        unit_price_minor: Number(i.unit_price_minor),
        line_total_minor: lineTotalOf(Number(i.unit_price_minor), i.quantity),
      })),
    subtotal_minor: Number(c.subtotal_minor),
    currency: c.currency,
    note: c.note,
    conversation_id: c.conversation_id,
    customer_handle: c.customer_handle,
    order_id: c.order_id === null ? null : Number(c.order_id),
    link: cartLink(baseUrl, c),
    opens: c.opens,
    last_activity_at: iso(c.last_activity_at)!,
    created_at: iso(c.created_at)!,
    updated_at: iso(c.updated_at)!,
  }));
}

export async function cartView(em: EntityManager, baseUrl: string, cart: CartRow): Promise<CartView> {
  return (await cartViews(em, baseUrl, [cart]))[0];
}

/** The flat payload of cart.submitted and cart.abandoned: the cart itself, with cart_id beside its id. */
export const cartEventFields = (v: CartView) => ({ cart_id: v.id, ...v });

/** GET /carts: a status, a chat, and the page. */
export const cartListQuery = {
  type: 'object',
  properties: {
    status: { enum: [...CART_STATUSES] },
    conversation_id: { type: 'string', minLength: 1, maxLength: 191 },
    ...pageQueryProperties,
  },
} as const;
export type CartListQuery = FromSchema<typeof cartListQuery>;

/** The account's baskets, newest first. conversation_id matches the stored form (resolved by the caller). */
export async function listCarts(rc: RequestContext, baseUrl: string, q: CartListQuery, conversationId?: string | null) {
  const { page, perPage, offset } = pageOf(q);
  const { total, rows } = await cartPage(rc.em, rc.account.id, { status: q.status, conversationId }, perPage, offset);
  return pageAnswer('carts', await cartViews(rc.em, baseUrl, rows), { page, perPage }, total);
}

/** A basket of the caller's account by its 5-character ref (any case) or its id; anything else is 404. */
export async function requireCart(em: EntityManager, accountId: number, key: string, forUpdate = false): Promise<CartRow> {
  const k = cartKeyOf(key);
  const row = k ? await cartOfAccount(em, accountId, k, forUpdate) : null;
  if (!row) throw notFound('Cart');
  return row;
}

export async function getCart(rc: RequestContext, baseUrl: string, key: string) {
  return cartView(rc.em, baseUrl, await requireCart(rc.em, rc.account.id, key));
}

/**
 * A new basket row with a fresh ref (unique per account; a taken one is drawn again) and a random
 * page key (128 bits, unique across accounts). Runs in the caller's transaction.
 */
export async function insertCart(
  tx: EntityManager,
  c: {
    accountId: number;
    catalogueId: number;
    status: CartStatus;
    currency: string;
    conversationId: string | null;
    customerHandle: string | null;
    opens: Opens;
    /** The client address that opened it on a product page (counted by the shop's per-address limit). */
    openedFrom?: string | null;
  },
): Promise<CartRow> {
  for (let attempt = 0; attempt < 20; attempt++) {
    const ref = refFromBytes(randomBytes(5));
    if (!ref) continue;
    const row = await insertCartRow(tx, {
      accountId: c.accountId,
      catalogueId: c.catalogueId,
      ref,
      pageKey: randomBytes(16).toString('base64url'),
      status: c.status,
      currency: c.currency,
      conversationId: c.conversationId,
      customerHandle: c.customerHandle,
      opens: c.opens,
      openedFrom: c.openedFrom ?? null,
    });
    if (row) return row;
  }
  throw new DomainError('conflict', 'No free basket ref could be drawn; try again.');
}

// ---------------------------------------------------------------------------------------------
// Lines

/** A line asked for: the product found, the size and add-ons as sent (ids or names). */
export interface LineAsk {
  product: ProductForLine;
  variant?: number | string | null;
  addons?: ReadonlyArray<number | string>;
  quantity: number;
  note?: string | null;
}

/** Whether the shop offers this product on its page (published, not retired, not discontinued or out of stock). */
export const orderable = (p: ProductForLine) =>
  p.retired_at === null && p.visibility === 'published' && p.availability !== 'discontinued' && p.availability !== 'out of stock';

/**
 * Prices the lines asked for: sizes and add-ons matched by id or by name (any case) among the
 * product's own; one that is not the product's is a 422 naming the line, and nothing is written.
 * `field` prefixes the error keys (items.3.variant).
 */
export async function priceLines(em: EntityManager, asks: readonly LineAsk[], field = 'items'): Promise<PricedLine[]> {
  const productIds = [...new Set(asks.map((a) => Number(a.product.id)))];
  const { variants, addons } = await productOptions(em, productIds);
  const find = (rows: ProductOption[], productId: number, want: number | string) =>
    rows.find(
      (r) =>
        Number(r.product_id) === productId &&
        (typeof want === 'number' ? Number(r.id) === want : r.name.toLowerCase() === String(want).trim().toLowerCase()),
    );
  const errors: Record<string, string[]> = {};
  const out: PricedLine[] = [];
  asks.forEach((a, i) => {
    const pid = Number(a.product.id);
    let size: ProductOption | undefined;
    if (a.variant !== undefined && a.variant !== null && a.variant !== '') {
      size = find(variants, pid, a.variant);
      if (!size) errors[`${field}.${i}.variant`] = [`The size ${JSON.stringify(a.variant)} is not one of ${a.product.sku}'s sizes.`];
    } else if (variants.some((v) => Number(v.product_id) === pid)) {
      // A product sold in sizes has no price of its own on the page: the first size is the default.
      size = variants.find((v) => Number(v.product_id) === pid);
    }
    const chosen: ProductOption[] = [];
    for (const want of a.addons ?? []) {
      const addon = find(addons, pid, want);
      if (!addon)
        (errors[`${field}.${i}.addons`] ??= []).push(`The add-on ${JSON.stringify(want)} is not one of ${a.product.sku}'s add-ons.`);
      else if (!chosen.some((c) => c.id === addon.id)) chosen.push(addon);
    }
    out.push({
      productId: pid,
      variantId: size ? Number(size.id) : null,
      addonIds: chosen.map((c) => Number(c.id)),
      quantity: a.quantity,
      note: a.note?.trim() ? a.note.trim() : null,
      unitPriceMinor: unitPriceOf(
        { price: Number(a.product.price), salePrice: a.product.sale_price === null ? null : Number(a.product.sale_price) },
        size ? { price: Number(size.price) } : null,
        chosen.map((c) => ({ price: Number(c.price) })),
      ),
    });
  });
  if (Object.keys(errors).length) throw validationFailed(errors);
  return out;
}

/** Where a basket's quantity refusals are filed: `items.3.quantity` for a link, the form's `quantity` on the page. */
export interface CapKeys {
  line: (i: number) => string;
  basket: string;
}
const LINK_KEYS: CapKeys = { line: (i) => `items.${i}.quantity`, basket: 'items' };

/** The shop's quantity caps of a basket (shop settings max_line_quantity and max_basket_quantity). */
export async function basketCaps(em: EntityManager, catalogueId: number): Promise<BasketCaps> {
  const row = await shopBasketCaps(em, catalogueId);
  return { maxLineQuantity: row!.max_line_quantity, maxBasketQuantity: row!.max_basket_quantity };
}

/**
 * Adds priced lines to a basket (its row locked by the caller) and keeps the subtotal with them.
 * The shop's quantity caps hold here, for every door that fills a basket (link, page): a line over
 * max_line_quantity, or a basket over max_basket_quantity with them, is a 422 and nothing is written.
 */
export async function addLines(tx: EntityManager, cart: CartRow, lines: readonly PricedLine[], keys: CapKeys = LINK_KEYS): Promise<void> {
  if (!lines.length) return;
  const inBasket = await basketCount(tx, cart.id);
  const held = inBasket.lines;
  if (held + lines.length > CART_LIMITS.cartLines)
    throw validationFailed({ items: [`A basket holds at most ${CART_LIMITS.cartLines} lines.`] });
  const over = basketCapProblems(
    inBasket.units,
    lines.map((l) => l.quantity),
    await basketCaps(tx, cart.catalogue_id),
    keys.line,
    keys.basket,
  );
  if (over) throw validationFailed(over);
  await insertItems(tx, cart.id, lines);
  await refreshSubtotal(tx, cart.id);
}

/** A basket that can still change: ordered and expired ones are final (409). */
export function requireEditable(cart: CartRow): void {
  if (!EDITABLE.includes(cart.status))
    throw new DomainError('conflict', `This basket is ${cart.status} and can no longer change.`, { reason: `cart_${cart.status}` });
}
