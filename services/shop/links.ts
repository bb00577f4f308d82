import type { EntityManager } from '@mikro-orm/postgresql';
import type { FromSchema } from 'json-schema-to-ts';
import type { RequestContext } from '../platform/context.js';
import { DomainError, forbidden, validationFailed } from '../platform/errors.js';
import { productForLineBySku, productsForLinesBySku, requireShop, shopIdsOf, type ShopRow } from '../catalogues/index.js';
import { chatOfMessage, sendChatInteractive, whatsappSenders, windowOpen, type WhatsAppNumber } from '../messaging/index.js';
import { hasPermission } from '../../domain/account/index.js';
import { toE164 } from '../platform/phones.js';
import { CART_LIMITS, type LinkProblem } from '../../domain/shop/cart.js';
import {
  addLines,
  cartLink,
  cartSchema,
  cartView,
  insertCart,
  listCarts,
  type CartListQuery,
  orderable,
  priceLines,
  type LineAsk,
  type Opens,
} from './carts.js';
import { cartById, deleteCart } from './store.js';
import { categoryByIdOrSlug } from './menu.js';
import { nudgeCartTimer, type TimerDeps } from './timers.js';

// POST /api/v3/shop-links: a basket opened on the menu, a category or a product, with lines already
// in it; shared as a link, or sent into a chat as a button (communications.send, inside the 24-hour
// window). Lines whose sku the shop does not offer are reported in problems[]; the rest go in.

const idOrName = { type: ['string', 'integer'], minLength: 1, maxLength: 100, minimum: 1 } as const;

export const shopLinkBody = {
  type: 'object',
  properties: {
    catalogue_id: {
      type: 'integer',
      minimum: 1,
      description: 'the shop; may be omitted when the account has exactly one',
    },
    category: { ...idOrName, maxLength: 255, description: 'the category the link opens on: its id or its slug' },
    sku: { type: 'string', minLength: 1, maxLength: 100, description: 'the product the link opens on (wins over category)' },
    items: {
      type: 'array',
      maxItems: CART_LIMITS.linkItems,
      description: `lines put in the basket (at most ${CART_LIMITS.linkItems}); an unknown sku is reported in problems[], the rest still go in`,
      items: {
        type: 'object',
        required: ['sku'],
        properties: {
          sku: { type: 'string', minLength: 1, maxLength: 100 },
          variant: { ...idOrName, description: "the size: its id or its name (any case); default the product's first size" },
          addons: { type: 'array', maxItems: CART_LIMITS.addonsPerLine, items: idOrName, description: 'add-ons: ids or names' },
          quantity: { type: 'integer', minimum: 1, maximum: CART_LIMITS.quantityMax, default: 1 },
          note: { type: 'string', maxLength: CART_LIMITS.lineNoteMax },
        },
        additionalProperties: false,
      },
    },
    conversation_id: {
      type: 'string',
      minLength: 1,
      maxLength: 191,
      description:
        'the chat to send the link into: whatsapp:<sender phone number id>:<customer E.164>, or the uid of a message of that chat',
    },
    to: {
      type: 'string',
      minLength: 1,
      maxLength: 32,
      description: "phone with country code first: the chat with the account's first WhatsApp number",
    },
  },
  // One recipient at most: stated here so the document admits only what the link accepts.
  dependentSchemas: {
    to: { not: { required: ['conversation_id'] }, 'x-error': 'Send either conversation_id or to, not both.', 'x-error-field': 'to' },
  },
  additionalProperties: false,
} as const;

export type ShopLinkInput = FromSchema<typeof shopLinkBody>;

export const shopLinkSchema = {
  type: 'object',
  required: ['link', 'sent', 'problems', 'cart'],
  properties: {
    link: { type: 'string' },
    sent: { type: 'boolean', description: 'false: no recipient, the link is for sharing' },
    message_uid: { type: ['string', 'null'], description: 'the chat message carrying the link, when sent' },
    problems: {
      type: 'array',
      items: {
        type: 'object',
        required: ['index', 'sku', 'reason'],
        properties: { index: { type: 'integer' }, sku: { type: 'string' }, reason: { type: 'string' } },
      },
    },
    cart: cartSchema,
  },
} as const;

export interface LinkDeps extends TimerDeps {
  config: TimerDeps['config'] & Parameters<typeof sendChatInteractive>[1]['config'];
}

/** The chat a link goes into: the business number's provider id, the customer, and the stored form. */
export interface Chat {
  conversationId: string;
  phoneNumberId: string;
  number: string;
  channelId: number | null;
  provider: string | null;
  customer: string;
}

const chatOf = (n: WhatsAppNumber, customer: string): Chat => ({
  conversationId: `whatsapp:${n.provider_phone_number_id}:${customer}`,
  phoneNumberId: n.provider_phone_number_id,
  number: n.number,
  channelId: n.channel_id,
  provider: n.provider ?? null,
  customer,
});

/**
 * The chat named by conversation_id (the stored form, or a message uid of the account's chat) or
 * by `to` (the account's first WhatsApp number); 422 when it names nothing of the account.
 */
export async function resolveChat(em: EntityManager, accountId: number, o: { conversationId?: string; to?: string }): Promise<Chat> {
  const numbers = await whatsappSenders(em, accountId);
  if (o.to !== undefined) {
    const e164 = toE164(o.to);
    if (!e164) throw validationFailed({ to: ['The to field must be a phone number with its country code first.'] });
    if (!numbers.length) throw validationFailed({ to: ['No WhatsApp business number is configured for this account.'] });
    return chatOf(numbers[0], e164);
  }
  const id = (o.conversationId ?? '').trim();
  let pnid: string | undefined;
  let customer: string | null = null;
  const stored = /^whatsapp:([^:]{1,64}):(\+?\d{6,15})$/.exec(id);
  if (stored) {
    pnid = stored[1];
    customer = toE164(stored[2]);
  } else if (/^msg_[A-Za-z0-9]{1,40}$/.test(id)) {
    const m = await chatOfMessage(em, accountId, id);
    if (m?.channel_code?.startsWith('whatsapp:')) {
      pnid = m.channel_code.slice('whatsapp:'.length);
      customer = toE164((m.direction === 'inbound' ? m.sender : m.recipient) ?? '');
    }
  }
  const n = numbers.find((x) => x.provider_phone_number_id === pnid);
  if (!n || !customer)
    throw validationFailed({ conversation_id: ['The conversation_id names no WhatsApp chat of this account.'] }, 'Conversation not found.');
  return chatOf(n, customer);
}

/** Whether the customer wrote to this business number in the last 24 hours (free-form messages allowed). */
const chatWindowOpen = (em: EntityManager, accountId: number, chat: Chat) =>
  windowOpen(em, accountId, 'whatsapp', chat.phoneNumberId, chat.customer);

/** The issuer (or MCP grantee) of the credential holds `permission` now; service actors always do. */
function actorHolds(rc: RequestContext, permission: string): boolean {
  const a = rc.actor;
  if (a.kind === 'api_key' || a.kind === 'mcp_credential' || a.kind === 'oauth_client')
    return !!a.issuer && hasPermission(a.issuer.permissions, permission);
  return true;
}

async function shopOf(rc: RequestContext, catalogueId: number | undefined): Promise<ShopRow> {
  if (catalogueId !== undefined) return requireShop(rc, catalogueId);
  const shops = await shopIdsOf(rc.em, rc.account.id, 2);
  if (shops.length !== 1)
    throw validationFailed({
      catalogue_id: [shops.length ? 'The account has several shops: name one with catalogue_id.' : 'The account has no shop yet.'],
    });
  return requireShop(rc, shops[0]);
}

export async function createShopLink(rc: RequestContext, deps: LinkDeps, body: ShopLinkInput) {
  const recipient = body.conversation_id !== undefined || body.to !== undefined;
  if (body.conversation_id !== undefined && body.to !== undefined)
    throw validationFailed({ to: ['Send either conversation_id or to, not both.'] });
  // The link goes into a chat: that is a send, which needs its own permission (Authentication).
  if (recipient && !actorHolds(rc, 'communications.send'))
    throw forbidden('Sending a shop link into a chat requires the communications.send permission.', 'permission_denied');
  const shop = await shopOf(rc, body.catalogue_id);
  const currency = (shop.default_currency ?? rc.account.currency).toUpperCase();

  let opens: Opens = { kind: 'menu' };
  if (body.sku !== undefined) {
    const p = await productForLineBySku(rc.em, shop.id, body.sku);
    if (!p || p.retired_at !== null || p.visibility !== 'published')
      throw validationFailed({ sku: ['The shop offers no product with this sku.'] });
    opens = { kind: 'product', product_id: Number(p.id), sku: p.sku };
  } else if (body.category !== undefined) {
    const c = await categoryByIdOrSlug(rc.em, shop.id, String(body.category));
    if (!c) throw validationFailed({ category: ['The shop has no category with this id or slug.'] });
    opens = { kind: 'category', category_id: c.id, slug: c.slug };
  }

  // Lines: unknown or unoffered skus are problems; sizes and add-ons that are not the product's are 422.
  const items = body.items ?? [];
  const skus = [...new Set(items.map((i) => i.sku))];
  const found = new Map((skus.length ? await productsForLinesBySku(rc.em, shop.id, skus) : []).map((p) => [p.sku, p]));
  const problems: LinkProblem[] = [];
  const asks: LineAsk[] = [];
  const askIndex: number[] = [];
  items.forEach((item, index) => {
    const p = found.get(item.sku);
    if (!p || p.retired_at !== null || p.visibility !== 'published') problems.push({ index, sku: item.sku, reason: 'not in the shop' });
    else if (!orderable(p)) problems.push({ index, sku: item.sku, reason: `not available (${p.availability})` });
    else if (p.currency.toUpperCase() !== currency)
      problems.push({ index, sku: item.sku, reason: `priced in ${p.currency}, the basket is in ${currency}` });
    else {
      asks.push({ product: p, variant: item.variant, addons: item.addons, quantity: item.quantity ?? 1, note: item.note });
      askIndex.push(index);
    }
  });
  let lines;
  try {
    lines = await priceLines(rc.em, asks);
  } catch (err) {
    // Name the line by its index in the request, not among the matched ones.
    if (err instanceof DomainError && err.detail.errors) {
      const errors = Object.fromEntries(
        Object.entries(err.detail.errors).map(([k, v]) => [
          k.replace(/^items\.(\d+)\./, (_m, i: string) => `items.${askIndex[Number(i)]}.`),
          v,
        ]),
      );
      throw validationFailed(errors);
    }
    throw err;
  }

  const chat = recipient ? await resolveChat(rc.em, rc.account.id, { conversationId: body.conversation_id, to: body.to }) : null;
  if (chat && !(await chatWindowOpen(rc.em, rc.account.id, chat)))
    throw new DomainError(
      'conflict',
      'The customer has not written in the last 24 hours: a free-form message (the link button) cannot be sent into this chat now.',
      { reason: 'outside_window' },
    );

  const cart = await rc.em.transactional(async (tx) => {
    const row = await insertCart(tx, {
      accountId: rc.account.id,
      catalogueId: shop.id,
      status: chat ? 'sent' : 'open',
      currency,
      conversationId: chat?.conversationId ?? null,
      customerHandle: chat?.customer ?? null,
      opens,
    });
    await addLines(tx, row, lines, { line: (i) => `items.${askIndex[i]}.quantity`, basket: 'items' });
    return row;
  });
  const link = cartLink(deps.config.publicBaseUrl, cart);

  let messageUid: string | null = null;
  if (chat) {
    try {
      messageUid = await sendLinkButton(rc, deps, chat, shop, link);
    } catch (err) {
      // Refused before anything was sent (the wallet, a bad request): the basket goes with it.
      await deleteCart(rc.em, cart.id);
      throw err;
    }
  }
  await nudgeCartTimer(deps, rc.account.id, Number(cart.id), 'activity');
  const fresh = (await cartById(rc.em, cart.id))!;
  return { link, sent: chat !== null, message_uid: messageUid, problems, cart: await cartView(rc.em, deps.config.publicBaseUrl, fresh) };
}

/** The link as a call-to-action button (interactive cta_url): one chat message through the messaging family. */
async function sendLinkButton(rc: RequestContext, deps: LinkDeps, chat: Chat, shop: ShopRow, link: string): Promise<string> {
  const text = `Your basket at ${shop.name}: pick, change and send your order here.`.slice(0, 1024);
  const message = await sendChatInteractive(rc, deps, {
    to: chat.customer,
    senderId: chat.phoneNumberId,
    interactive: { type: 'cta_url', body: { text }, action: { name: 'cta_url', parameters: { display_text: 'Open basket', url: link } } },
    previewBody: `${text} ${link}`,
    metadata: { shop_link: true },
  });
  return message.uid;
}

/** GET /carts?conversation_id=: the stored form of the chat named (a message uid resolves); unknown text matches nothing. */
export async function listCartsOfChat(rc: RequestContext, baseUrl: string, q: CartListQuery) {
  let conversationId: string | undefined;
  if (q.conversation_id !== undefined) {
    try {
      conversationId = (await resolveChat(rc.em, rc.account.id, { conversationId: q.conversation_id })).conversationId;
    } catch {
      conversationId = q.conversation_id;
    }
  }
  return listCarts(rc, baseUrl, q, conversationId);
}
