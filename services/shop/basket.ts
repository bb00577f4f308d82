import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import { DomainError, notFound, validationFailed } from '../platform/errors.js';
import { createOrder, startOrderHoldAfterCommit } from '../orders/index.js';
import { CART_LIMITS, basketCapProblems, normalizeRef } from '../../domain/shop/cart.js';
import { addressKey, requireAddressRoom } from './guards.js';
import { accountStatus } from '../account/index.js';
import { productForLine, productsForLinesById, requireShopOpen, shopName, variantsById } from '../catalogues/index.js';
import { cartOfPage, deleteItem, itemsToSubmit, markOrdered, repriceItem, setCartNote } from './store.js';
import {
  addLines,
  basketCaps,
  cartEventFields,
  cartView,
  orderable,
  priceLines,
  refreshSubtotal,
  requireEditable,
  type CartRow,
} from './carts.js';
import { emitEvent } from '../webhooks/index.js';
import { afterPaymentRequested, requestOrderPayment } from '../payments/index.js';
import { nudgeCartTimer, type TimerDeps } from './timers.js';
import { categoryByIdOrSlug, loadMenu } from './menu.js';
import type { ShopPageModel } from './page.js';

// What the shop page does to a basket, addressed by its ref and page key (the link is the
// capability; no account key): add a line by product, size and add-on ids, remove one, set the
// note, submit. Amounts are never read from the customer: every price is the service's.

export interface PageDeps extends TimerDeps {
  orm: MikroORM;
}

/**
 * The basket of a page address; a wrong ref or key is 404, the same as a missing basket. The basket
 * of a suspended account's shop is closed (403): its page shows and takes nothing.
 */
export async function cartByPageKey(em: EntityManager, ref: string, key: string, forUpdate = false): Promise<CartRow> {
  const r = normalizeRef(ref);
  const cart = r && /^[A-Za-z0-9_-]{16,32}$/.test(key) ? await cartOfPage(em, r, key, forUpdate) : null;
  const status = cart && (await accountStatus(em, cart.account_id));
  if (!cart || !status) throw notFound('Basket');
  requireShopOpen(status);
  return cart;
}

/** The page's form names the quantity; a basket over its cap is filed there too. */
const PAGE_KEYS = { line: () => 'quantity', basket: 'quantity' };

export interface AddFromPage {
  productId: number;
  variantId: number | null;
  addonIds: number[];
  quantity: number;
  note: string | null;
}

export async function addFromPage(deps: PageDeps, ref: string, key: string, a: AddFromPage): Promise<void> {
  if (!Number.isSafeInteger(a.quantity) || a.quantity < 1 || a.quantity > CART_LIMITS.quantityMax)
    throw validationFailed({ quantity: [`The quantity must be a whole number from 1 to ${CART_LIMITS.quantityMax}.`] });
  if ((a.note ?? '').length > CART_LIMITS.lineNoteMax)
    throw validationFailed({ note: [`The note may not be longer than ${CART_LIMITS.lineNoteMax} characters.`] });
  if (a.addonIds.length > CART_LIMITS.addonsPerLine) throw validationFailed({ addons: ['Too many add-ons.'] });
  const em = deps.orm.em.fork();
  const cart = await em.transactional(async (tx) => {
    const c = await cartByPageKey(tx, ref, key, true);
    requireEditable(c);
    const p = await productForLine(tx, c.catalogue_id, a.productId);
    if (!p || !orderable(p) || p.currency.toUpperCase() !== c.currency)
      throw validationFailed({ product_id: ['This product cannot be ordered from this basket.'] });
    const lines = await priceLines(
      tx,
      [{ product: p, variant: a.variantId, addons: a.addonIds, quantity: a.quantity, note: a.note }],
      'line',
    );
    await addLines(tx, c, lines, PAGE_KEYS);
    return c;
  });
  await nudgeCartTimer(deps, cart.account_id, Number(cart.id), 'activity');
}

export async function removeFromPage(deps: PageDeps, ref: string, key: string, itemId: number): Promise<void> {
  const em = deps.orm.em.fork();
  const cart = await em.transactional(async (tx) => {
    const c = await cartByPageKey(tx, ref, key, true);
    requireEditable(c);
    if (!(await deleteItem(tx, c.id, itemId))) throw notFound('Basket line');
    await refreshSubtotal(tx, c.id);
    return c;
  });
  await nudgeCartTimer(deps, cart.account_id, Number(cart.id), 'activity');
}

export async function noteFromPage(deps: PageDeps, ref: string, key: string, note: string): Promise<void> {
  if (note.length > CART_LIMITS.noteMax)
    throw validationFailed({ note: [`The note may not be longer than ${CART_LIMITS.noteMax} characters.`] });
  const em = deps.orm.em.fork();
  const cart = await em.transactional(async (tx) => {
    const c = await cartByPageKey(tx, ref, key, true);
    requireEditable(c);
    await setCartNote(tx, c.id, note.trim() || null);
    await refreshSubtotal(tx, c.id);
    return c;
  });
  await nudgeCartTimer(deps, cart.account_id, Number(cart.id), 'activity');
}

/**
 * The basket becomes an order (platform storefront), in one transaction: every line re-priced from
 * the catalogue as it is now (size, else sale price, else price; plus add-ons), the order and its
 * stock holds created by the orders family, the basket set ordered with order_id, cart.submitted
 * emitted. A second submit finds the basket ordered (409); a product no longer offered is 409.
 * The shop's limits hold: the quantity caps as they are now (422), at most address_orders_per_hour
 * submissions from `clientAddress` (429); an order from a basket with no known customer (not sent
 * into a chat) holds its stock for the shop's checkout window only.
 */
export async function submitFromPage(
  deps: PageDeps,
  ref: string,
  key: string,
  clientAddress: string,
): Promise<{ orderId: number; cartId: number }> {
  const em = deps.orm.em.fork();
  const { created, cart, payment } = await em.transactional(async (tx) => {
    const c = await cartByPageKey(tx, ref, key, true);
    requireEditable(c);
    const items = await itemsToSubmit(tx, c.id);
    if (!items.length) throw validationFailed({ items: ['The basket is empty.'] });
    // The caps again, as the shop sets them now: a basket filled before the shop lowered them is refused whole.
    const over = basketCapProblems(
      0,
      items.map((i) => i.quantity),
      await basketCaps(tx, c.catalogue_id),
      () => 'items',
      'items',
    );
    if (over) throw validationFailed(over);
    await requireAddressRoom(tx, 'orders', c.catalogue_id, clientAddress);
    const products = new Map(
      (
        await productsForLinesById(
          tx,
          c.catalogue_id,
          items.map((i) => Number(i.product_id)),
        )
      ).map((p) => [Number(p.id), p]),
    );
    const gone = items.map((i) => products.get(Number(i.product_id))).find((p) => !p || !orderable(p));
    if (items.some((i) => !products.has(Number(i.product_id))) || gone)
      throw new DomainError('conflict', `${gone?.name ?? 'A product'} is no longer offered: remove it from the basket and submit again.`, {
        reason: 'product_unavailable',
      });
    const lines = await priceLines(
      tx,
      items.map((i) => ({
        product: products.get(Number(i.product_id))!,
        variant: i.variant_id === null ? null : Number(i.variant_id),
        addons: i.addon_ids.map(Number),
        quantity: i.quantity,
        note: i.note,
      })),
    );
    const sizeNames = new Map(
      (
        await variantsById(
          tx,
          lines.flatMap((l) => (l.variantId === null ? [] : [l.variantId])),
        )
      ).map((v) => [Number(v.id), v.name]),
    );
    for (const [n, l] of lines.entries()) await repriceItem(tx, items[n].id, l.unitPriceMinor, l.variantId);
    const made = await createOrder(tx, {
      accountId: c.account_id,
      catalogueId: c.catalogue_id,
      platform: 'storefront',
      customerHandle: c.customer_handle,
      cartId: Number(c.id),
      note: c.note,
      currency: c.currency,
      // A basket sent into a chat has a customer the shop knows; any other was filled by whoever held the link.
      checkoutHold: c.conversation_id === null,
      lines: lines.map((l) => {
        const p = products.get(l.productId)!;
        const size = l.variantId === null ? undefined : sizeNames.get(l.variantId);
        return {
          retailerId: p.sku,
          quantity: l.quantity,
          unitPriceMinor: l.unitPriceMinor,
          variantId: l.variantId,
          addonIds: l.addonIds,
          note: l.note,
          name: size ? `${p.name} (${size})` : p.name,
        };
      }),
    });
    // The order's payment, for its total, with the order: a checkout is an order to be paid for.
    const payment =
      made.total &&
      (await requestOrderPayment(tx, {
        accountId: c.account_id,
        orderId: made.orderId,
        totalMinor: made.total.minor,
        currency: made.total.currency,
        customer: c.customer_handle,
        source: 'checkout',
        createdBy: 'system:shop-page',
      }));
    await refreshSubtotal(tx, c.id);
    const row = await markOrdered(tx, c.id, made.orderId, addressKey(clientAddress));
    await emitEvent(tx, c.account_id, 'cart.submitted', cartEventFields(await cartView(tx, deps.config.publicBaseUrl, row)));
    return { created: made, cart: row, payment };
  });
  await startOrderHoldAfterCommit({ temporal: deps.temporal, config: deps.config, orm: deps.orm, log: deps.log }, created);
  await afterPaymentRequested(deps, payment, Number(cart.account_id));
  await nudgeCartTimer(deps, cart.account_id, Number(cart.id), 'closed');
  return { orderId: created.orderId, cartId: Number(cart.id) };
}

/** Everything the page shows for a basket: the shop, the basket, the menu, and the view asked for (?category=, ?product=). */
export async function pageModel(
  deps: PageDeps,
  ref: string,
  key: string,
  ask: { category?: string; product?: string; menu?: boolean },
): Promise<Omit<ShopPageModel, 'error'>> {
  const em = deps.orm.em.fork();
  const cart = await cartByPageKey(em, ref, key);
  const name = await shopName(em, cart.catalogue_id);
  const { categories, products } = await loadMenu(em, cart.catalogue_id);
  let categoryId: number | null = null;
  let productId: number | null = null;
  if (ask.product !== undefined && /^\d{1,15}$/.test(ask.product)) productId = Number(ask.product);
  else if (ask.category !== undefined)
    categoryId = (await categoryByIdOrSlug(em, cart.catalogue_id, ask.category.slice(0, 255)))?.id ?? null;
  else if (!ask.menu && cart.opens.kind === 'product') productId = cart.opens.product_id;
  else if (!ask.menu && cart.opens.kind === 'category') categoryId = cart.opens.category_id;
  return {
    shopName: name ?? 'Shop',
    base: `/shop/${cart.ref}/${cart.page_key}`,
    cart: await cartView(em, deps.config.publicBaseUrl, cart),
    categories,
    products,
    categoryId,
    productId,
  };
}
