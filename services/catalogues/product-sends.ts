import type { FromSchema } from 'json-schema-to-ts';
import type { Config } from '../../config.js';
import { hasPermission } from '../../domain/account/index.js';
import {
  PRODUCT_SEND_LIMITS as L,
  catalogueInteractive,
  productListInteractive,
  singleProductInteractive,
} from '../../domain/catalogues/product-messages.js';
import type { PlatformKey } from '../../domain/catalogues/vocabulary.js';
import { toE164 } from '../platform/phones.js';
import type { RequestContext } from '../platform/context.js';
import { DomainError, forbidden, notFound, providerFailure, validationFailed } from '../platform/errors.js';
import { sendChatInteractive } from '../messaging/index.js';
import type { StarterDeps } from '../../temporal/starters.js';
import { sendShopOfId, sendShopOfProviderId, sendShopsOn, type SendShop } from './store/shops.js';
import { liveness } from './store/products.js';

// Product messages into a chat (contract: Catalogues rows send-product, send-product-list,
// send-catalogue and the "Send-product rules"). A chat send goes out through the messaging
// family's own send path (one outbound record, the message workflow, the provider's first answer);
// a single product asked for on another platform answers where it lives there and how to send it.

export type ProductSendDeps = StarterDeps & { config: Config };

/** Sending into a chat is a send: beside the route's catalogue permission the issuer needs this one. */
export const SEND_PERMISSION = 'communications.send';
/** Listing states in which the product is live on the platform (drifted: live, but differing). */
const LIVE_STATES = ['synced', 'drifted'];

const text = (maxLength: number) => ({ type: 'string', minLength: 1, maxLength }) as const;
const common = {
  to: { type: 'string', minLength: 1, maxLength: 191, description: 'The customer: a phone number in international format' },
  from: {
    type: 'string',
    maxLength: 64,
    description: 'A provider phone-number id (or the number) of the account; default its first chat number',
  },
  catalogue_id: {
    type: ['string', 'integer'],
    maxLength: 64,
    pattern: '^\\d+$',
    minimum: 1,
    description:
      'The shop: its provider catalogue id (meta_catalogue_id) or its numeric local id. Optional when the account has one shop on the platform.',
  },
} as const;

export const sendProductBody = {
  type: 'object',
  required: ['to', 'product_retailer_id'],
  properties: {
    ...common,
    platform: { enum: ['whatsapp', 'storefront'], description: 'default whatsapp (the chat channel)' },
    product_retailer_id: { ...text(L.retailerId), description: 'The product’s sku (retailer id), not its local id' },
    body: { type: 'string', maxLength: L.body },
    footer: { type: 'string', maxLength: L.footer },
  },
} as const;
export type SendProductInput = FromSchema<typeof sendProductBody>;

export const sendProductListBody = {
  type: 'object',
  required: ['to', 'header_text', 'body', 'sections'],
  properties: {
    ...common,
    header_text: text(L.headerText),
    body: text(L.body),
    footer: { type: 'string', maxLength: L.footer },
    sections: {
      type: 'array',
      minItems: L.sectionsMin,
      maxItems: L.sectionsMax,
      description: `at most ${L.productsInList} products over all sections`,
      items: {
        type: 'object',
        required: ['title', 'product_items'],
        properties: {
          title: text(L.sectionTitle),
          product_items: {
            type: 'array',
            minItems: 1,
            maxItems: L.productsInList,
            items: {
              type: 'object',
              required: ['product_retailer_id'],
              properties: { product_retailer_id: text(L.retailerId) },
            },
          },
        },
      },
    },
  },
} as const;
export type SendProductListInput = FromSchema<typeof sendProductListBody>;

export const sendCatalogueBody = {
  type: 'object',
  required: ['to', 'body'],
  properties: {
    ...common,
    body: text(L.body),
    footer: { type: 'string', maxLength: L.footer },
    thumbnail_product_retailer_id: { ...text(L.retailerId), description: 'The product whose image heads the message' },
  },
} as const;
export type SendCatalogueInput = FromSchema<typeof sendCatalogueBody>;

const nullableString = { type: ['string', 'null'] } as const;
export const productSendSchema = {
  type: 'object',
  required: ['platform', 'message_id'],
  properties: {
    platform: { type: 'string' },
    message_id: { ...nullableString, description: 'The provider’s message id; null until the provider answered (status queued)' },
    uid: { ...nullableString, description: 'The local message uid (GET /api/v3/whatsapp/{uid})' },
    status: nullableString,
    catalogue_id: { type: 'integer', description: 'The shop’s local id' },
    meta_catalogue_id: nullableString,
    product_retailer_id: nullableString,
    url: { ...nullableString, description: 'Another platform: the product’s address there' },
    send_with: {
      type: 'array',
      description: 'Another platform: the requests that send the address to the customer',
      items: { type: 'object' },
    },
  },
} as const;

function requireSendPermission(rc: RequestContext): void {
  const a = rc.actor;
  const issuer = a.kind === 'api_key' || a.kind === 'mcp_credential' || a.kind === 'oauth_client' ? a.issuer : null;
  if (a.kind === 'system' || a.kind === 'operator') return;
  if (!issuer || !hasPermission(issuer.permissions, SEND_PERMISSION)) {
    throw forbidden(`This action requires the ${SEND_PERMISSION} permission.`, 'permission_denied');
  }
}

/**
 * The caller's shop for a send: named by its provider catalogue id or local id (another account's
 * reads as missing, 404); unnamed, the account's one shop on the platform. For the chat channel a
 * shop without a provider catalogue is missing chat configuration (422).
 */
async function sendShop(rc: RequestContext, ref: string | number | undefined, platform: PlatformKey): Promise<SendShop> {
  let shops: SendShop[];
  const value = ref === undefined ? '' : String(ref).trim();
  if (value !== '') {
    // A provider catalogue id wins over a local id of the same digits (local ids are small, provider ids long).
    shops = await sendShopOfProviderId(rc.em, rc.account.id, value);
    if (!shops.length && /^\d{1,9}$/.test(value)) shops = await sendShopOfId(rc.em, rc.account.id, Number(value));
    if (!shops.length) throw notFound('Catalogue');
  } else {
    shops = await sendShopsOn(rc.em, rc.account.id, platform);
    if (shops.length > 1) throw validationFailed({ catalogue_id: ['The account has several shops; name one with catalogue_id.'] });
    if (!shops.length)
      throw validationFailed({
        catalogue_id: [
          platform === 'whatsapp' ? 'No shop of this account has a chat-channel catalogue.' : `No shop of this account is on ${platform}.`,
        ],
      });
  }
  const shop = shops[0];
  if (platform === 'whatsapp' && !shop.meta_catalogue_id) {
    throw validationFailed({ catalogue_id: ['This shop has no chat-channel catalogue yet (meta_catalogue_id is not set).'] });
  }
  return shop;
}

/** Every named product must be live on the platform: in the shop, published, and listed there (synced). */
async function requireLive(rc: RequestContext, shop: SendShop, platform: PlatformKey, skus: string[], field: string) {
  const rows = await liveness(rc.em, { id: shop.id, accountId: rc.account.id }, platform, LIVE_STATES, [...new Set(skus)]);
  const bySku = new Map(rows.map((r) => [r.sku, r]));
  const unknown = skus.filter((s) => !bySku.has(s));
  if (unknown.length) throw validationFailed({ [field]: [`Not a product of this shop: ${[...new Set(unknown)].join(', ')}.`] });
  const onPlatform = shop.channels.includes(platform);
  const notLive = skus.filter((s) => !onPlatform || !bySku.get(s)!.live);
  if (notLive.length) {
    throw validationFailed({ [field]: [`Not published on ${platform}: ${[...new Set(notLive)].join(', ')}.`] });
  }
  return bySku;
}

/** The chat send, answered with the provider's message id; a refusal by the provider is a 502. */
async function sendIntoChat(
  rc: RequestContext,
  deps: ProductSendDeps,
  shop: SendShop,
  o: { to: string; from?: string; interactive: Record<string, unknown>; previewBody: string; retailerIds: string[]; kind: string },
) {
  let message;
  try {
    message = await sendChatInteractive(rc, deps, {
      to: o.to,
      senderId: o.from,
      interactive: o.interactive,
      previewBody: o.previewBody,
      metadata: { product_send: { kind: o.kind, catalogue_id: shop.id, product_retailer_ids: o.retailerIds } },
    });
  } catch (err) {
    // The messaging family names the sender sender_id; this request calls it from.
    if (err instanceof DomainError && err.kind === 'invalid' && err.detail.errors?.sender_id) {
      throw validationFailed({ from: err.detail.errors.sender_id });
    }
    throw err;
  }
  // A refusal answers at once with no provider id; a failure reported later (the 24-hour window)
  // comes after an accepted send and reads on the message, as for every chat send.
  if (message.status === 'failed' && !message.gateway_message_id) {
    throw providerFailure(`The chat provider refused the message: ${message.error_message ?? 'no reason given'}`, {
      uid: message.uid,
      error_message: message.error_message,
    });
  }
  return {
    platform: 'whatsapp',
    message_id: message.gateway_message_id,
    uid: message.uid,
    status: message.status,
    catalogue_id: shop.id,
    meta_catalogue_id: shop.meta_catalogue_id,
  };
}

const trimSlash = (s: string) => s.replace(/\/+$/, '');
/** The product's page in the shop (the same address the chat catalogue's items link to). */
export const storefrontUrl = (publicBaseUrl: string, shopId: number, sku: string) =>
  `${trimSlash(publicBaseUrl)}/shop/${shopId}/p/${encodeURIComponent(sku)}`;

/** POST /catalogues/send-product. */
export async function sendProduct(rc: RequestContext, deps: ProductSendDeps, input: SendProductInput) {
  const platform: PlatformKey = input.platform ?? 'whatsapp';
  // Another platform's answer sends nothing: only the chat send needs the send permission.
  if (platform === 'whatsapp') requireSendPermission(rc);
  const shop = await sendShop(rc, input.catalogue_id, platform);
  const sku = input.product_retailer_id;
  const products = await requireLive(rc, shop, platform, [sku], 'product_retailer_id');
  const name = products.get(sku)!.name;
  if (platform !== 'whatsapp') {
    if (!toE164(input.to)) throw validationFailed({ to: ['The recipient must be a phone number in international format.'] });
    const url = storefrontUrl(deps.config.publicBaseUrl, shop.id, sku);
    const caption = input.body?.trim() ? input.body : name;
    return {
      platform,
      message_id: null,
      catalogue_id: shop.id,
      meta_catalogue_id: shop.meta_catalogue_id,
      product_retailer_id: sku,
      url,
      send_with: [
        {
          method: 'POST',
          path: '/api/v3/whatsapp/send',
          body: {
            recipient: input.to,
            ...(input.from ? { sender_id: input.from } : {}),
            message_type: 'interactive',
            interactive: {
              type: 'cta_url',
              body: { text: caption },
              ...(input.footer?.trim() ? { footer: { text: input.footer } } : {}),
              action: { name: 'cta_url', parameters: { display_text: 'View product', url } },
            },
          },
        },
        { method: 'POST', path: '/api/v3/sms/send', body: { recipient: input.to, message: `${name}: ${url}` } },
      ],
    };
  }
  return {
    ...(await sendIntoChat(rc, deps, shop, {
      to: input.to,
      from: input.from,
      kind: 'product',
      retailerIds: [sku],
      previewBody: input.body?.trim() ? input.body : name,
      interactive: singleProductInteractive({
        catalogueId: shop.meta_catalogue_id!,
        retailerId: sku,
        body: input.body,
        footer: input.footer,
      }),
    })),
    product_retailer_id: sku,
  };
}

/** POST /catalogues/send-product-list (chat channel only). */
export async function sendProductList(rc: RequestContext, deps: ProductSendDeps, input: SendProductListInput) {
  requireSendPermission(rc);
  const skus = input.sections.flatMap((s) => s.product_items.map((p) => p.product_retailer_id));
  if (skus.length > L.productsInList) {
    throw validationFailed({ sections: [`A product list holds at most ${L.productsInList} products in all; got ${skus.length}.`] });
  }
  const shop = await sendShop(rc, input.catalogue_id, 'whatsapp');
  await requireLive(rc, shop, 'whatsapp', skus, 'sections');
  return sendIntoChat(rc, deps, shop, {
    to: input.to,
    from: input.from,
    kind: 'product_list',
    retailerIds: skus,
    previewBody: input.body,
    interactive: productListInteractive({
      catalogueId: shop.meta_catalogue_id!,
      headerText: input.header_text,
      body: input.body,
      footer: input.footer,
      sections: input.sections.map((s) => ({ title: s.title, retailerIds: s.product_items.map((p) => p.product_retailer_id) })),
    }),
  });
}

/** POST /catalogues/send-catalogue (chat channel only). */
export async function sendCatalogue(rc: RequestContext, deps: ProductSendDeps, input: SendCatalogueInput) {
  requireSendPermission(rc);
  const shop = await sendShop(rc, input.catalogue_id, 'whatsapp');
  const thumbnail = input.thumbnail_product_retailer_id;
  if (thumbnail) await requireLive(rc, shop, 'whatsapp', [thumbnail], 'thumbnail_product_retailer_id');
  return sendIntoChat(rc, deps, shop, {
    to: input.to,
    from: input.from,
    kind: 'catalog_message',
    retailerIds: thumbnail ? [thumbnail] : [],
    previewBody: input.body,
    interactive: catalogueInteractive({ body: input.body, footer: input.footer, thumbnailRetailerId: thumbnail }),
  });
}
