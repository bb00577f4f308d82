// Test-side controls for WhatsApp users: a user writing in (which also opens the 24 h window, as on
// the real platform), direct control of that window, and Meta's webhook verification handshake.
import type { Router } from '@koa/router';
import { randomBytes, randomInt } from 'node:crypto';
import type { Context } from 'koa';
import { readJson } from './body.js';
import { isObj } from './graph-errors.js';
import { metaJson } from './signing.js';
import type { SimState } from './state.js';
import { digitsOf, isHttpUrl, unixSeconds, wamid } from './util.js';
import { deliver } from './webhooks.js';
import { WINDOW_MS, windowKey } from './whatsapp.js';
import { envelope } from './whatsapp-webhooks.js';

const MEDIA_MIME: Record<string, string> = {
  image: 'image/jpeg',
  video: 'video/mp4',
  audio: 'audio/ogg; codecs=opus',
  document: 'application/pdf',
  sticker: 'image/webp',
};

function badRequest(ctx: Context, error: string): void {
  ctx.status = 400;
  ctx.body = { error };
}

function userAndNumber(input: Record<string, unknown>): { waId: string; phoneNumberId: string } | string {
  const waId = typeof input.from === 'string' ? digitsOf(input.from) : '';
  const phoneNumberId =
    typeof input.phone_number_id === 'string' || typeof input.phone_number_id === 'number' ? String(input.phone_number_id) : '';
  if (waId.length < 8 || waId.length > 15) return 'from must be a phone number with 8-15 digits';
  if (!/^\d+$/.test(phoneNumberId)) return 'phone_number_id must be the numeric phone-number id';
  return { waId, phoneNumberId };
}

/**
 * A cart the customer sends from the catalogue (Cloud API `order` message): the catalogue's id, an
 * optional note and at least one item, each a retailer id, a whole quantity, a unit price in major
 * units (as WhatsApp shows it, e.g. 30 or 12.5) and its ISO currency. Null when it is one.
 */
export function orderProblem(order: unknown): string | null {
  if (!isObj(order)) return 'order must be an object {catalog_id, text?, product_items}';
  if (typeof order.catalog_id !== 'string' || !/^\d{1,64}$/.test(order.catalog_id)) return 'order.catalog_id must be a numeric string';
  if (order.text !== undefined && typeof order.text !== 'string') return 'order.text must be a string';
  const items = order.product_items;
  if (!Array.isArray(items) || items.length === 0) return 'order.product_items must be a non-empty array';
  for (const [n, item] of items.entries()) {
    const at = `order.product_items[${n}]`;
    if (!isObj(item)) return `${at} must be an object`;
    if (typeof item.product_retailer_id !== 'string' || item.product_retailer_id === '')
      return `${at}.product_retailer_id must be a string`;
    if (typeof item.quantity !== 'number' || !Number.isInteger(item.quantity) || item.quantity < 1)
      return `${at}.quantity must be a positive integer`;
    if (typeof item.item_price !== 'number' || !Number.isFinite(item.item_price) || item.item_price < 0)
      return `${at}.item_price must be a non-negative number (major units)`;
    if (typeof item.currency !== 'string' || !/^[A-Z]{3}$/.test(item.currency)) return `${at}.currency must be an ISO 4217 code`;
  }
  return null;
}

/**
 * A message a WhatsApp user sends to a business number: recorded, the 24 h window opened (even if our
 * receiver is down, as on the real platform), and delivered as Meta's signed webhook.
 */
export async function deliverInbound(
  state: SimState,
  who: { waId: string; phoneNumberId: string },
  message: Record<string, unknown>,
  opts: { url?: string; name?: string } = {},
) {
  state.wa.windows.set(windowKey(who.phoneNumberId, who.waId), Date.now());
  state.wa.inbound.push({
    seq: state.nextSeq(),
    id: message.id as string,
    from: who.waId,
    phoneNumberId: who.phoneNumberId,
    message,
    at: new Date().toISOString(),
  });
  const url = opts.url ?? state.config.waWebhookUrl;
  if (!url || !isHttpUrl(url)) return { wamid: message.id, delivered: false, reason: 'no WhatsApp webhook URL configured', message };
  const name = opts.name ?? 'Simulated User';
  const payload = envelope(state, who.phoneNumberId, { contacts: [{ profile: { name }, wa_id: who.waId }], messages: [message] });
  const request = metaJson(state.options.waAppSecret, payload);
  const record = await deliver(state, { provider: 'whatsapp', kind: 'whatsapp.inbound', messageId: message.id as string, url, request });
  return { wamid: message.id, url, delivered: record.delivered, statusCode: record.statusCode, attempts: record.attempts.length, message };
}

export function registerWhatsAppSim(router: Router, state: SimState): void {
  /**
   * {from, phone_number_id, text} or {from, phone_number_id, type, <type>: {...}, context?, name?, url?, id?};
   * a cart is `type: 'order', order: {catalog_id, text?, product_items: [{product_retailer_id, quantity, item_price, currency}]}`.
   */
  router.post('/whatsapp/inbound', async (ctx) => {
    const input = await readJson(ctx);
    if (!isObj(input)) return badRequest(ctx, 'body must be a JSON object');
    const who = userAndNumber(input);
    if (typeof who === 'string') return badRequest(ctx, who);
    const type = typeof input.type === 'string' ? input.type : input.text !== undefined ? 'text' : null;
    if (!type) return badRequest(ctx, 'give `text`, or `type` plus the content object under that key');

    let content: unknown = input[type];
    if (type === 'text') {
      const t = input.text;
      content = typeof t === 'string' ? { body: t } : t;
      if (!isObj(content) || typeof content.body !== 'string') return badRequest(ctx, 'text must be a string or {body}');
    } else if (type === 'contacts' ? !Array.isArray(content) : !isObj(content)) {
      return badRequest(ctx, `${type} content is missing`);
    }
    if (type === 'order') {
      const problem = orderProblem(content);
      if (problem) return badRequest(ctx, problem);
    }
    if (MEDIA_MIME[type] && isObj(content)) {
      // Inbound media is referenced by an id the business downloads later, never by a link.
      content = { id: String(randomInt(1e14, 9e14)), mime_type: MEDIA_MIME[type], sha256: randomBytes(32).toString('base64'), ...content };
    }
    // `id` repeats an earlier message's wamid: Meta redelivers a webhook it thinks was not received.
    if (input.id !== undefined && (typeof input.id !== 'string' || !input.id.startsWith('wamid.'))) {
      return badRequest(ctx, 'id must be a wamid (to redeliver an earlier message)');
    }
    const id = typeof input.id === 'string' ? input.id : wamid(who.waId);
    const message: Record<string, unknown> = { from: who.waId, id, timestamp: unixSeconds(), type, [type]: content };
    for (const extra of ['context', 'referral', 'errors']) if (input[extra] !== undefined) message[extra] = input[extra];

    ctx.body = await deliverInbound(state, who, message, {
      url: typeof input.url === 'string' ? input.url : undefined,
      name: typeof input.name === 'string' ? input.name : undefined,
    });
  });

  /** {from, phone_number_id, last_inbound_at?} sets the window's start; last_inbound_at: null closes it. */
  router.post('/whatsapp/window', async (ctx) => {
    const input = await readJson(ctx);
    if (!isObj(input)) return badRequest(ctx, 'body must be a JSON object');
    const who = userAndNumber(input);
    if (typeof who === 'string') return badRequest(ctx, who);
    const key = windowKey(who.phoneNumberId, who.waId);
    if (input.last_inbound_at === null) state.wa.windows.delete(key);
    else {
      const at = input.last_inbound_at === undefined ? Date.now() : new Date(input.last_inbound_at as string | number).getTime();
      if (Number.isNaN(at)) return badRequest(ctx, 'last_inbound_at must be an ISO date, epoch milliseconds or null');
      state.wa.windows.set(key, at);
    }
    const last = state.wa.windows.get(key);
    ctx.body = {
      ...who,
      lastInboundAt: last === undefined ? null : new Date(last).toISOString(),
      open: last !== undefined && Date.now() - last < WINDOW_MS,
    };
  });

  /** {verify_token, url?}: performs Meta's GET subscription handshake against our receiver. */
  router.post('/whatsapp/verify', async (ctx) => {
    const input = await readJson(ctx);
    if (!isObj(input) || typeof input.verify_token !== 'string') return badRequest(ctx, 'verify_token is required');
    const url = typeof input.url === 'string' ? input.url : state.config.waWebhookUrl;
    if (!url || !isHttpUrl(url)) return badRequest(ctx, 'no WhatsApp webhook URL configured');
    const challenge = String(randomInt(1e8, 1e9));
    const target = new URL(url);
    target.searchParams.set('hub.mode', 'subscribe');
    target.searchParams.set('hub.challenge', challenge);
    target.searchParams.set('hub.verify_token', input.verify_token);
    try {
      const res = await fetch(target, { signal: AbortSignal.timeout(state.options.callbackTimeoutMs) });
      const text = await res.text();
      ctx.body = { url: target.toString(), statusCode: res.status, challenge, echoed: res.ok && text.trim() === challenge };
    } catch (err) {
      ctx.body = { url: target.toString(), statusCode: null, challenge, echoed: false, error: (err as Error).message };
    }
  });
}
