import type { FromSchema } from 'json-schema-to-ts';
import { accountMessage, messagesPage, unstartedMessages } from './store/messages.js';
import { checkRecipients } from '../../domain/messaging/recipients.js';
import { estimateSegments } from '../../domain/messaging/segments.js';
import { validationFailed, notFound } from '../platform/errors.js';
import type { RequestContext } from '../platform/context.js';
import { smsSendRoute } from './channels.js';
import { messageView } from './message-view.js';
import { createOutboundMessages, draftsFor, type MessageServiceDeps } from './outbound.js';
import { sendWhatsApp } from './whatsapp.js';
import { pageAnswer, pageOf, pageQueryProperties } from '../platform/pagination.js';

export { smsSendBody, type SmsSendInput } from './send-schemas.js';
import type { SmsSendInput } from './send-schemas.js';
import { SCHEDULE_TIME_PATTERN } from '../../domain/messaging/schedule-time.js';
import { readDateTime } from '../../domain/platform/date-time.js';

const GENERIC_BODY = 'You have a new message.';
const SCHEDULE_TIME_RE = new RegExp(SCHEDULE_TIME_PATTERN);
const SMS_TYPES = new Set(['plain', 'text', 'sms']);

export function parseScheduleTime(value: string | undefined): Date | null {
  if (value === undefined || value.trim() === '') return null;
  // The schema's own pattern (domain/messaging/schedule-time.ts): the send admits what the document says.
  if (!SCHEDULE_TIME_RE.test(value)) {
    throw validationFailed({
      schedule_time: ['The schedule time must be an ISO 8601 date and time with an offset, e.g. 2026-12-01T09:00:00+03:00.'],
    });
  }
  const d = readDateTime(value.trim(), 'iso8601');
  if (!d) throw validationFailed({ schedule_time: ['The schedule time is not a valid date.'] });
  return d;
}

/** POST /sms/send, rules 1–7 of the contract. */
export async function sendSms(rc: RequestContext, deps: MessageServiceDeps, input: SmsSendInput) {
  const typeField = input.message_type !== undefined ? 'message_type' : 'type';
  const kind = (input.message_type ?? input.type ?? 'plain').trim().toLowerCase() || 'plain';
  if (kind === 'whatsapp') {
    return sendWhatsApp(rc, deps, {
      recipient: input.recipient,
      recipients: input.recipients,
      sender_id: input.sender_id,
      message: input.message,
      body: input.body,
      schedule_time: input.schedule_time,
      media_url: input.media_url,
      media_type: input.media_type,
    });
  }
  if (!SMS_TYPES.has(kind)) throw validationFailed({ [typeField]: ['The message type must be one of plain, text, sms or whatsapp.'] });
  // Every recipient is checked before anything is created: a bad one refuses the whole request.
  const { recipients, errors } = checkRecipients(input.recipient, input.recipients);
  if (Object.keys(errors).length) throw validationFailed(errors);
  const scheduledAt = parseScheduleTime(input.schedule_time);
  const route = await smsSendRoute(rc, input.sender_id);
  const text = input.message || input.body || GENERIC_BODY;
  const seg = estimateSegments(text);
  return createOutboundMessages(
    rc,
    deps,
    draftsFor(recipients, {
      channelType: 'sms',
      ...(route === 'default'
        ? { channelId: null, channelCode: null, defaultSmsRoute: true, sender: null }
        : { channelId: route.channelId, channelCode: route.channelCode, sender: route.sender }),
      body: text,
      mediaUrl: input.media_url ?? null,
      mediaType: input.media_type ?? null,
      metadata: { source: 'api', ...(input.media_url ? { mms: true } : {}) },
      segments: seg.segments,
      encoding: seg.encoding,
      scheduledAt,
    }),
  );
}

export async function getMessage(rc: RequestContext, channelType: 'sms' | 'whatsapp', ref: string) {
  const byId = /^\d+$/.test(ref);
  if (byId && ref.length > 18) throw notFound('Message');
  const row = await accountMessage(rc.em, rc.account.id, channelType, byId ? { id: Number(ref) } : { uid: ref });
  if (!row) throw notFound('Message');
  return messageView(row);
}

/** The query of GET /messages: the filters and the page. */
export const messageListQuery = {
  type: 'object',
  properties: {
    status: { enum: ['queued', 'processing', 'sent', 'checking_delivery', 'delivered', 'read', 'failed', 'received'] },
    direction: { enum: ['inbound', 'outbound'] },
    channel_type: { enum: ['sms', 'whatsapp'] },
    ...pageQueryProperties,
  },
} as const;
export type MessageListQuery = FromSchema<typeof messageListQuery>;

/** Newest first, page-number pagination; `limit` wins over `per_page`, default 20, cap 100. */
export async function listMessages(rc: RequestContext, q: MessageListQuery) {
  const page = pageOf(q);
  const { total, rows } = await messagesPage(
    rc.em,
    { accountId: rc.account.id, status: q.status, direction: q.direction, channelType: q.channel_type },
    page.perPage,
    page.offset,
  );
  return pageAnswer('messages', rows.map(messageView), page, total);
}

/** Queued outbound messages whose workflow may never have started (a crash between insert and start). */
export async function findUnstartedMessages(em: RequestContext['em'], olderThanSeconds: number, limit: number) {
  return unstartedMessages(em, olderThanSeconds, limit);
}
