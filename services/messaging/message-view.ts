// The Message resource exactly as the contract lists it, from a `messages` row.
import type { MessageViewRow } from './store/messages.js';

const iso = (d: Date | string | null) => (d === null || d === undefined ? null : new Date(d).toISOString());

export function messageView(r: MessageViewRow) {
  return {
    id: Number(r.id),
    uid: r.uid,
    direction: r.direction,
    channel_type: r.channel_type,
    tenant_channel_id: r.channel_id,
    channel_code: r.channel_code,
    sender: r.sender,
    recipient: r.recipient,
    body: r.body,
    status: r.status,
    media_url: r.media_url,
    media_type: r.media_type,
    gateway_message_id: r.gateway_message_id,
    error_message: r.status === 'failed' ? r.error_message : null,
    metadata: r.metadata,
    template_params: r.template_params,
    segments: r.segments,
    encoding: r.encoding,
    created_at: iso(r.created_at),
    updated_at: iso(r.updated_at),
    sent_at: iso(r.sent_at),
    delivered_at: iso(r.delivered_at),
    read_at: iso(r.read_at),
  };
}

const nullable = <const T extends string>(type: T) => ({ type: [type, 'null'] }) as const;
const ts = nullable('string');

export const messageSchema = {
  type: 'object',
  required: ['id', 'uid', 'direction', 'channel_type', 'recipient', 'body', 'status'],
  properties: {
    id: { type: 'integer' },
    uid: { type: 'string' },
    direction: { enum: ['inbound', 'outbound'] },
    channel_type: { enum: ['sms', 'whatsapp'] },
    tenant_channel_id: nullable('integer'),
    channel_code: ts,
    sender: ts,
    recipient: { type: 'string' },
    body: { type: 'string' },
    status: { enum: ['queued', 'processing', 'sent', 'checking_delivery', 'delivered', 'read', 'failed', 'received'] },
    media_url: ts,
    media_type: ts,
    gateway_message_id: ts,
    error_message: ts,
    metadata: nullable('object'),
    template_params: nullable('object'),
    segments: { type: 'integer', description: 'SMS segment estimate (GSM-7 160/153, UCS-2 70/67)' },
    encoding: { enum: ['GSM-7', 'UCS-2'] },
    created_at: ts,
    updated_at: ts,
    sent_at: ts,
    delivered_at: ts,
    read_at: ts,
  },
} as const;
