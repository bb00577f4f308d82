// Outbound status webhooks (notes §1.7). Meta reports delivery problems such as the 24 h window
// only here, after the send already returned a wamid, so receivers must handle `failed` late.
import { createHash } from 'node:crypto';
import { graphTitle } from './graph-errors.js';
import { metaJson } from './signing.js';
import type { SimState, WaRecord, WaStatusError } from './state.js';
import { unixSeconds } from './util.js';
import { deliver } from './webhooks.js';

const RANK: Record<string, number> = { accepted: 0, sent: 1, delivered: 2, read: 3, failed: 4 };

const FAILURE_DETAILS: Record<number, string> = {
  131047: 'Message failed to send because more than 24 hours have passed since the customer last replied to this number.',
  131026: 'Message Undeliverable.',
};

export function statusError(code: number): WaStatusError {
  return {
    code,
    title: graphTitle(code),
    message: graphTitle(code),
    error_data: { details: FAILURE_DETAILS[code] ?? graphTitle(code) },
    href: 'https://developers.facebook.com/docs/whatsapp/cloud-api/support/error-codes/',
  };
}

/** The change envelope every WhatsApp webhook shares; `value` carries statuses[] or messages[]. */
export function envelope(state: SimState, phoneNumberId: string, value: Record<string, unknown>): Record<string, unknown> {
  return {
    object: 'whatsapp_business_account',
    entry: [
      {
        id: state.options.waBusinessAccountId,
        changes: [
          {
            field: 'messages',
            value: {
              messaging_product: 'whatsapp',
              metadata: { display_phone_number: state.options.waDisplayPhoneNumber, phone_number_id: phoneNumberId },
              ...value,
            },
          },
        ],
      },
    ],
  };
}

function statusSequence(state: SimState, m: WaRecord): string[] {
  if (m.errors) return ['failed'];
  // Meta only ever reports `sent` for a reaction.
  if (m.type === 'reaction') return ['sent'];
  switch (state.config.waStatusMode) {
    case 'skip_delivered':
      return ['sent', 'read'];
    case 'duplicate':
      return ['sent', 'delivered', 'delivered', 'read'];
    case 'out_of_order':
      return ['sent', 'read', 'delivered'];
    default:
      return ['sent', 'delivered', 'read'];
  }
}

export function startWaTimeline(state: SimState, m: WaRecord): void {
  state.life.spawn(`wa:${m.id}`, async (gen) => {
    // `no_receipt` models a lost webhook subscription: the message reaches "sent" and nothing is reported.
    const sequence = m.noReceipt ? ['sent'] : statusSequence(state, m);
    for (const status of sequence) {
      if (!(await gen.sleep(state.config.receiptDelayMs))) return;
      const at = Date.now();
      m.history.push({ status, at: new Date(at).toISOString() });
      // The recorded status never goes backwards, mirroring what a correct receiver should do.
      if ((RANK[status] ?? 0) > (RANK[m.status] ?? 0)) m.status = status;
      if (m.noReceipt) return;
      const url = state.config.waWebhookUrl;
      if (!url) continue;
      const payload = envelope(state, m.phoneNumberId, { statuses: [statusObject(m, status, at)] });
      const request = metaJson(state.options.waAppSecret, payload);
      await deliver(state, { provider: 'whatsapp', kind: 'whatsapp.status', messageId: m.id, url, request }, gen);
    }
  });
}

function statusObject(m: WaRecord, status: string, at: number): Record<string, unknown> {
  const s: Record<string, unknown> = { id: m.id, status, timestamp: unixSeconds(at), recipient_id: m.waId };
  if (typeof m.payload.biz_opaque_callback_data === 'string') s.biz_opaque_callback_data = m.payload.biz_opaque_callback_data;
  if (status === 'failed') {
    s.errors = m.errors;
    return s;
  }
  const category = m.category;
  const conversation: Record<string, unknown> = { id: conversationId(m), origin: { type: category } };
  if (status === 'sent') conversation.expiration_timestamp = unixSeconds(at + 24 * 3600 * 1000);
  s.conversation = conversation;
  s.pricing = {
    billable: category !== 'service',
    pricing_model: 'PMP',
    category,
    type: category === 'service' ? 'free_customer_service' : 'regular',
  };
  return s;
}

// Stable per business number and user for the day, like Meta's conversation ids.
function conversationId(m: WaRecord): string {
  const day = Math.floor(m.createdAt / 86_400_000);
  return createHash('sha256').update(`${m.phoneNumberId}:${m.waId}:${day}`).digest('hex').slice(0, 32);
}
