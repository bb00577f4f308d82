import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import { notFound } from '../platform/errors.js';
import { numericId } from '../platform/ids.js';
import { cartLink, insertCart, orderable } from './carts.js';
import { nudgeCartTimer, type TimerDeps } from './timers.js';
import { addressKey, requireAddressRoom } from './guards.js';
import { accountStatus } from '../account/index.js';
import { requireShopOpen, storefrontProductRow } from '../catalogues/index.js';

// A product's address in the shop (`/shop/<shop id>/p/<sku>`): what the chat catalogue's items link
// to and what a product send answers for the storefront platform. The page shows the product; its
// form opens a fresh basket on it (a POST, so crawlers that follow the link, Meta's included, never
// create baskets).

export type StorefrontProduct = NonNullable<Awaited<ReturnType<typeof storefrontProductRow>>> & { account_status: string };

/**
 * The product at this address: a shop on the storefront platform, the product orderable there; else
 * 404. A suspended account's shop is closed (403), whatever it holds.
 */
export async function storefrontProduct(em: EntityManager, shopRef: string, sku: string): Promise<StorefrontProduct> {
  const shopId = numericId(shopRef, 'Product');
  const product = await storefrontProductRow(em, shopId, sku);
  const status = product && (await accountStatus(em, product.shop_account_id));
  if (!product || !status) throw notFound('Product');
  requireShopOpen(status);
  if (!orderable(product)) throw notFound('Product');
  return { ...product, account_status: status };
}

/**
 * Opens a basket on the product and answers its page address (on the product). `clientAddress` is
 * the visitor's: at most the shop's address_baskets_per_hour from one address (else 429).
 */
export async function openStorefrontBasket(
  deps: TimerDeps & { orm: MikroORM },
  shopRef: string,
  sku: string,
  clientAddress: string,
): Promise<string> {
  const { cart, productId } = await deps.orm.em.fork().transactional(async (tx) => {
    const p = await storefrontProduct(tx, shopRef, sku);
    await requireAddressRoom(tx, 'baskets', p.catalogue_id, clientAddress);
    const cart = await insertCart(tx, {
      accountId: p.account_id,
      catalogueId: p.catalogue_id,
      status: 'open',
      currency: (p.shop_currency ?? p.currency).toUpperCase(),
      conversationId: null,
      customerHandle: null,
      opens: { kind: 'product', product_id: Number(p.id), sku: p.sku },
      openedFrom: addressKey(clientAddress),
    });
    return { cart, productId: Number(p.id) };
  });
  // A basket nobody finishes still expires on its own timer, as every basket does.
  await nudgeCartTimer(deps, Number(cart.account_id), Number(cart.id), 'activity');
  return `${cartLink(deps.config.publicBaseUrl, cart)}?product=${productId}`;
}
