import type { EntityManager } from '@mikro-orm/postgresql';
import type { Row } from '../../entities/database.js';
import { newUid } from '../platform/ids.js';
import { insertEvent } from './store/outbox.js';
import type { EventPayload } from '../../entities/webhooks.js';

export { messageEventsInsertSql } from './store/outbox.js';
export type { EventPayload };

/**
 * Every communication-callback kind. Message kinds are emitted by moveStatus and receiveInbound
 * today; the others are declared so that each feature, when it lands, emits through emitEvent in
 * the transaction of its own change and endpoints can already subscribe to them.
 */
export const EVENT_KINDS = [
  // messages: the statuses a receiver acts on (processing and checking_delivery are internal steps)
  'message.sent',
  'message.delivered',
  'message.read',
  'message.failed',
  'message.received',
  'group.created',
  'group.failed',
  'group.updated',
  'group.deleted',
  'group.participant_joined',
  'group.participant_left',
  'group.participant_removed',
  'group.join_requested',
  'template.status_changed',
  'form.submitted',
  'form.expired',
  'cart.submitted',
  'cart.abandoned',
  'order.received',
  'order.paid',
  'product.drifted',
  'product.created',
  'product.updated',
  'product.deleted',
  'product.low_stock',
  'catalogue.sync.completed',
  'catalogue.sync.failed',
  'catalogue.feed.disabled',
  'lead.created',
  'lead.updated',
  'lead.stage_changed',
  'lead.label_added',
  'lead.label_removed',
  'lead.note_added',
  'lead.assigned',
  'lead.merged',
  'lead.deleted',
  'flow.session.started',
  'flow.session.ended',
  'post.published',
  'post.failed',
  // agent runs (docs/agents.md): each change of a run's status a receiver may act on
  'agent.run.started',
  'agent.run.requires_action',
  'agent.run.completed',
  'agent.run.failed',
  'agent.run.cancelled',
] as const;

export type EventKind = (typeof EVENT_KINDS)[number];

/**
 * Every filter an endpoint may subscribe with: `*`, each kind, and each dotted prefix of a kind
 * followed by `*` (message.*, flow.*, flow.session.*). Stated as an enum, so the document lists them.
 */
export const EVENT_FILTERS: readonly string[] = [
  '*',
  ...new Set(
    EVENT_KINDS.flatMap((k) =>
      k
        .split('.')
        .slice(0, -1)
        .map((_, i, parts) => `${parts.slice(0, i + 1).join('.')}.*`),
    ),
  ),
  ...EVENT_KINDS,
];

/** A subscription filter entry: an exact kind, `prefix.*`, or `*`. */
export function isEventFilter(f: string): boolean {
  if (f === '*') return true;
  if (f.endsWith('.*')) return EVENT_KINDS.some((k) => k.startsWith(f.slice(0, -1)));
  return (EVENT_KINDS as readonly string[]).includes(f);
}

export function matchesFilter(filters: readonly string[], kind: string): boolean {
  return filters.some((f) => f === '*' || f === kind || (f.endsWith('.*') && kind.startsWith(f.slice(0, -1))));
}

/**
 * Records a communication event in the outbox. Call it with the transaction that makes the change
 * the event reports: both commit or neither does, and the relay delivers whatever committed.
 * The payload is flat: event_id, event and occurred_at first, then the kind's own fields.
 */
export async function emitEvent(
  tx: EntityManager,
  accountId: number,
  kind: EventKind,
  fields: Record<string, unknown>,
  occurredAt = new Date(),
): Promise<string> {
  const eventId = newUid('evt');
  const payload = { event_id: eventId, event: kind, occurred_at: occurredAt.toISOString(), account_id: accountId, ...fields };
  await insertEvent(tx, { event_id: eventId, account_id: accountId, kind, payload, occurred_at: occurredAt });
  return eventId;
}

/** jsonb keeps keys in its own order: put the envelope fields first again for receivers. */
export function orderedPayload(p: EventPayload): EventPayload {
  const { event_id, event, occurred_at, ...rest } = p;
  return { event_id, event, occurred_at, ...rest };
}

/** What a message event tells of its message: the message record's own columns (entities/messaging.ts). */
export type MessageEventRow = Pick<
  Row<'messaging', 'messages'>,
  'id' | 'uid' | 'account_id' | 'status' | 'direction' | 'channel_type' | 'sender' | 'recipient' | 'gateway_message_id' | 'error_message'
>;

/** The flat message payload; message_id is the numeric local id receivers look records up by. */
export const messageEventFields = (m: MessageEventRow) => ({
  message_id: Number(m.id),
  uid: m.uid,
  status: m.status,
  direction: m.direction,
  channel_type: m.channel_type,
  sender: m.sender,
  recipient: m.recipient,
  gateway_message_id: m.gateway_message_id,
  error_message: m.error_message,
});

/** Statuses that produce a callback, and under which kind. */
export const MESSAGE_STATUS_EVENTS: Record<string, EventKind> = {
  sent: 'message.sent',
  delivered: 'message.delivered',
  read: 'message.read',
  failed: 'message.failed',
  received: 'message.received',
};
