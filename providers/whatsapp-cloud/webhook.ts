// What Meta posts to our WhatsApp webhook (signed with X-Hub-Signature-256): an envelope
// {object, entry[{id, changes[{field, value}]}]} whose values carry `statuses` of our messages and
// `messages` customers sent, plus the GET subscription handshake (hub.mode/hub.verify_token/hub.challenge).
import { isRecord } from '../http.js';
import { decodeUtf8 } from '../../domain/platform/utf8.js';
import {
  MalformedWebhook,
  type ChatGroupEvent,
  type ChatOrderItem,
  type GroupEventError,
  type GroupParticipantRef,
  type GroupSettingChange,
  type ChatOrderMessage,
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
 * for, and entries without an id, yield nothing. Statuses of group sends are statuses like any other
 * (one per participant for delivered and read); messages written into a group and the group fields
 * are left to parseWhatsAppGroupWebhook.
 */
export function parseWhatsAppWebhook(req: WebhookRequest): ProviderEvent[] {
  const payload = readPayload(req);
  const events: ProviderEvent[] = [];
  for (const entry of list(rec(payload).entry)) {
    for (const change of list(rec(entry).changes)) {
      const value = rec(rec(change).value);
      for (const s of list(value.statuses)) {
        const update = statusOf(rec(s));
        if (update) events.push(update);
      }
      const phoneNumberId = str(rec(value.metadata).phone_number_id);
      for (const m of list(value.messages)) {
        // A participant writing into a group belongs to the group, not to a 1:1 conversation: see parseWhatsAppGroupWebhook.
        if (groupIdOf(rec(m))) continue;
        const inbound = inboundOf(rec(m), phoneNumberId);
        events.push(inbound.metadata?.type === 'order' ? orderOf(inbound, rec(rec(m).order)) : inbound);
      }
    }
  }
  return events;
}

function readPayload(req: WebhookRequest): unknown {
  // Bytes that are not UTF-8 are refused, not stored as replacement characters in a customer's message.
  const text = decodeUtf8(req.rawBody);
  if (text === null) throw new MalformedWebhook('The request body is not valid UTF-8.');
  try {
    return JSON.parse(text);
  } catch {
    throw new MalformedWebhook('The request body is not valid JSON.');
  }
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

const num = (v: unknown): number | null => {
  const n = typeof v === 'number' ? v : typeof v === 'string' && v.trim() !== '' ? Number(v) : NaN;
  return Number.isFinite(n) ? n : null;
};

/**
 * A cart sent from the catalogue: the inbound message (its body the customer's note, else "[order]")
 * and the order as sent. Items without a retailer id or a positive whole quantity cannot be lines
 * of an order and are left out; prices stay in the major units Meta sends.
 */
function orderOf(inbound: InboundMessage, order: Record<string, unknown>): ChatOrderMessage {
  const items: ChatOrderItem[] = [];
  for (const raw of list(order.product_items)) {
    const item = rec(raw);
    const retailerId =
      str(item.product_retailer_id) ?? (typeof item.product_retailer_id === 'number' ? String(item.product_retailer_id) : '');
    const quantity = num(item.quantity);
    if (!retailerId || quantity === null || !Number.isInteger(quantity) || quantity < 1) continue;
    const currency = str(item.currency)?.trim().toUpperCase();
    items.push({
      retailerId,
      quantity,
      itemPrice: num(item.item_price),
      currency: currency && /^[A-Z]{3}$/.test(currency) ? currency : null,
    });
  }
  const text = str(order.text) ?? null;
  const catalogueId = str(order.catalog_id) ?? (typeof order.catalog_id === 'number' ? String(order.catalog_id) : '');
  return {
    ...inbound,
    type: 'order',
    body: text ?? '[order]',
    metadata: { ...inbound.metadata, order: { catalog_id: catalogueId, text, product_items: order.product_items ?? [] } },
    order: { catalogueId, text, items },
  };
}

// --- Groups (notes §2.4) -------------------------------------------------------------------------------

/** The chat-group port's event, as this adapter's group parser reads Meta's webhook. */
export type WhatsAppGroupEvent = ChatGroupEvent;
type GroupEventBase = Pick<ChatGroupEvent, 'phoneNumberId' | 'at'>;

/** The group id a message written into a group carries (on the message; `context.group_id` is read too). */
function groupIdOf(m: Record<string, unknown>): string | undefined {
  return str(m.group_id) ?? str(rec(m.context).group_id);
}

function groupErrors(v: unknown): GroupEventError[] {
  return list(v).map((raw) => {
    const e = rec(raw);
    return {
      code: typeof e.code === 'number' ? e.code : null,
      message: str(rec(e.error_data).details) ?? str(e.message) ?? str(e.title) ?? 'unknown error',
    };
  });
}

function timestampOf(v: unknown): Date | null {
  const n = typeof v === 'number' ? v : typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : NaN;
  return Number.isFinite(n) ? new Date(n * 1000) : null;
}

function participantRefs(v: unknown): GroupParticipantRef[] {
  const out: GroupParticipantRef[] = [];
  for (const raw of list(v)) {
    const p = typeof raw === 'string' ? { wa_id: raw } : rec(raw);
    const waId = str(p.wa_id) ?? str(p.input);
    if (waId) out.push({ waId, input: str(p.input) ?? null });
  }
  return out;
}

function settingChange(v: unknown): GroupSettingChange | undefined {
  if (!isRecord(v)) return undefined;
  return { text: str(v.text) ?? null, ok: v.update_successful !== false, errors: groupErrors(v.errors) };
}

function groupEventOf(field: string, g: Record<string, unknown>, base: GroupEventBase): WhatsAppGroupEvent | null {
  const type = str(g.type) ?? '';
  const groupId = str(g.group_id);
  const requestId = str(g.request_id);
  switch (field) {
    case 'group_lifecycle_update':
      if (type === 'group_create') {
        const errors = groupErrors(g.errors);
        if (errors.length > 0 || !groupId) {
          return requestId ? { ...base, type: 'group_create_failed', requestId, errors } : null;
        }
        if (!requestId) return null;
        return {
          ...base,
          type: 'group_created',
          requestId,
          groupId,
          subject: str(g.subject) ?? null,
          description: str(g.description) ?? null,
          inviteLink: str(g.invite_link) ?? null,
          joinApprovalMode: str(g.join_approval_mode) ?? null,
        };
      }
      if (type === 'group_delete' && groupId) {
        return { ...base, type: 'group_deleted', groupId, requestId: requestId ?? null, errors: groupErrors(g.errors) };
      }
      return null;
    case 'group_participants_update': {
      if (!groupId) return null;
      if (type === 'group_participants_add') {
        return {
          ...base,
          type: 'participants_added',
          groupId,
          reason: str(g.reason) ?? null,
          participants: participantRefs(g.added_participants),
        };
      }
      if (type === 'group_participants_remove') {
        return {
          ...base,
          type: 'participants_removed',
          groupId,
          initiatedBy: str(g.initiated_by) ?? null,
          participants: participantRefs(g.removed_participants),
          failed: list(g.failed_participants).map((raw) => {
            const f = rec(raw);
            return { input: str(f.input) ?? null, waId: str(f.wa_id) ?? null, errors: groupErrors(f.errors) };
          }),
        };
      }
      const joinRequestId = str(g.join_request_id);
      const waId = str(g.wa_id);
      if ((type === 'group_join_request_created' || type === 'group_join_request_revoked') && joinRequestId && waId) {
        const kind = type === 'group_join_request_created' ? 'join_request_created' : 'join_request_revoked';
        return { ...base, type: kind, groupId, joinRequestId, waId };
      }
      return null;
    }
    case 'group_settings_update': {
      if (!groupId) return null;
      const event: WhatsAppGroupEvent = { ...base, type: 'settings_updated', groupId, requestId: requestId ?? null };
      const subject = settingChange(g.group_subject);
      const description = settingChange(g.group_description);
      const picture = settingChange(g.profile_picture);
      if (subject) event.subject = subject;
      if (description) event.description = description;
      if (picture) event.profilePicture = picture;
      return event;
    }
    case 'group_status_update':
      if (!groupId) return null;
      if (type === 'group_suspend') return { ...base, type: 'group_suspended', groupId };
      if (type === 'group_suspend_cleared') return { ...base, type: 'group_suspend_cleared', groupId };
      return null;
    default:
      return null;
  }
}

/**
 * The Groups API's side of the same webhook: the four `group_*` fields (each `value.groups[]`) and
 * messages participants wrote into a group (field `messages`, the message carrying `group_id` and
 * `from` the participant). Unknown types and items without the ids they need yield nothing; other
 * fields (1:1 messages, statuses) are parseWhatsAppWebhook's.
 */
export function parseWhatsAppGroupWebhook(req: WebhookRequest): WhatsAppGroupEvent[] {
  const payload = readPayload(req);
  const events: WhatsAppGroupEvent[] = [];
  for (const entry of list(rec(payload).entry)) {
    for (const change of list(rec(entry).changes)) {
      const field = str(rec(change).field) ?? '';
      const value = rec(rec(change).value);
      const phoneNumberId = str(rec(value.metadata).phone_number_id);
      if (field === 'messages') {
        for (const raw of list(value.messages)) {
          const m = rec(raw);
          const groupId = groupIdOf(m);
          if (!groupId) continue;
          const message = inboundOf(m, phoneNumberId);
          message.metadata = { ...message.metadata, group_id: groupId };
          events.push({ phoneNumberId, at: timestampOf(m.timestamp), type: 'group_message', groupId, message });
        }
        continue;
      }
      for (const raw of list(value.groups)) {
        const g = rec(raw);
        const event = groupEventOf(field, g, { phoneNumberId, at: timestampOf(g.timestamp) });
        if (event) events.push(event);
      }
    }
  }
  return events;
}

/** Meta's subscription check: echo hub.challenge when hub.verify_token is ours; null refuses it. */
export function whatsAppHandshake(req: WebhookRequest, verifyToken: string): WebhookAnswer | null {
  const q = req.url.indexOf('?');
  const query = new URLSearchParams(q < 0 ? '' : req.url.slice(q + 1));
  if (query.get('hub.mode') !== 'subscribe' || query.get('hub.verify_token') !== verifyToken) return null;
  return { status: 200, contentType: 'text/plain', body: query.get('hub.challenge') ?? '' };
}
