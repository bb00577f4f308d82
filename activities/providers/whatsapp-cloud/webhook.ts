// What Meta posts to our WhatsApp webhook (signed with X-Hub-Signature-256): an envelope
// {object, entry[{id, changes[{field, value}]}]} whose values carry `statuses` of our messages and
// `messages` customers sent, plus the GET subscription handshake (hub.mode/hub.verify_token/hub.challenge).
import { isRecord } from '../http.js';
import {
  MalformedWebhook,
  type InboundMessage,
  type ProviderEvent,
  type StatusUpdate,
  type WebhookAnswer,
  type WebhookRequest,
} from '../types.js';
import { mapWhatsAppStatus, whatsAppFailureMessage, type GraphStatusError } from './status.js';

export const WHATSAPP_WEBHOOK_PATH = '/providers/whatsapp/webhook';

const MEDIA_TYPES = new Set(['image', 'video', 'audio', 'document', 'sticker']);
const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const rec = (v: unknown): Record<string, unknown> => (isRecord(v) ? v : {});
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

/**
 * Statuses (sent, delivered, read, failed: out of order and possibly twice; the record only moves
 * forward) and inbound messages, in the order Meta listed them per change. Statuses we have no word
 * for, and entries without an id, yield nothing.
 */
export function parseWhatsAppWebhook(req: WebhookRequest): ProviderEvent[] {
  let payload: unknown;
  try {
    payload = JSON.parse(req.rawBody.toString('utf8'));
  } catch {
    throw new MalformedWebhook('The request body is not valid JSON.');
  }
  const events: ProviderEvent[] = [];
  for (const entry of list(rec(payload).entry)) {
    for (const change of list(rec(entry).changes)) {
      const value = rec(rec(change).value);
      for (const s of list(value.statuses)) {
        const update = statusOf(rec(s));
        if (update) events.push(update);
      }
      const phoneNumberId = str(rec(value.metadata).phone_number_id);
      for (const m of list(value.messages)) events.push(inboundOf(rec(m), phoneNumberId));
    }
  }
  return events;
}

function statusOf(s: Record<string, unknown>): StatusUpdate | null {
  const status = mapWhatsAppStatus(str(s.status) ?? '');
  const id = str(s.id);
  if (!status || !id) return null;
  const update: StatusUpdate = { type: 'status', providerMessageId: id, status };
  if (status === 'failed') update.errorMessage = whatsAppFailureMessage(list(s.errors)[0] as GraphStatusError | undefined);
  return update;
}

function inboundOf(m: Record<string, unknown>, phoneNumberId: string | undefined): InboundMessage {
  const type = str(m.type) ?? '';
  const content = rec(m[type]);
  const context = rec(m.context);
  return {
    type: 'inbound',
    channelType: 'whatsapp',
    businessNumber: { phoneNumberId },
    from: str(m.from) ?? '',
    body: str(rec(m.text).body) ?? str(content.caption) ?? str(content.body) ?? `[${type}]`,
    providerMessageId: str(m.id) ?? '',
    mediaUrl: str(content.link) ?? null,
    mediaType: MEDIA_TYPES.has(type) ? type : null,
    metadata: {
      type,
      ...(context.id ? { in_reply_to: context.id } : {}),
      ...(type === 'reaction' ? { reaction: m.reaction } : {}),
      ...(type === 'interactive' ? { interactive: m.interactive } : {}),
    },
  };
}

/** Meta's subscription check: echo hub.challenge when hub.verify_token is ours; null refuses it. */
export function whatsAppHandshake(req: WebhookRequest, verifyToken: string): WebhookAnswer | null {
  const q = req.url.indexOf('?');
  const query = new URLSearchParams(q < 0 ? '' : req.url.slice(q + 1));
  if (query.get('hub.mode') !== 'subscribe' || query.get('hub.verify_token') !== verifyToken) return null;
  return { status: 200, contentType: 'text/plain', body: query.get('hub.challenge') ?? '' };
}
