import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import { many, one } from '../entities/db.js';
import { mergeRecipients, toE164 } from '../domain/recipients.js';
import { estimateSegments } from '../domain/segments.js';
import { validationFailed, notFound } from '../api/errors.js';
import type { RequestContext } from '../api/context.js';
import type { Config } from '../config.js';
import { resolveSmsRoute } from './channels.js';
import { messageView, type MessageRow } from './message-view.js';
import { newUid } from './ids.js';
import { messageWorkflowId } from '../temporal/ids.js';
import { AccountId, ResourceId, ResourceType } from '../temporal/search-attributes.js';
import type { MessageWorkflowInput } from '../workflows/message.js';

export interface SmsSendInput {
  recipient?: string; recipients?: string[]; sender_id?: string; message?: string; body?: string;
  message_type?: string; type?: string; schedule_time?: string; media_url?: string; media_type?: string;
}

export interface MessageServiceDeps { temporal: Client; config: Config }

const GENERIC_BODY = 'You have a new message.';

export function parseScheduleTime(value: string | undefined): Date | null {
  if (value === undefined || value.trim() === '') return null;
  // ISO 8601 with an explicit offset or Z: a time without a zone would mean different instants to different readers.
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})$/i.test(value.trim())) {
    throw validationFailed({ schedule_time: ['The schedule time must be an ISO 8601 date and time with an offset, e.g. 2026-12-01T09:00:00+03:00.'] });
  }
  const d = new Date(value.trim());
  if (Number.isNaN(d.getTime())) throw validationFailed({ schedule_time: ['The schedule time is not a valid date.'] });
  return d;
}

export async function sendSms(rc: RequestContext, deps: MessageServiceDeps, input: SmsSendInput) {
  const recipients = mergeRecipients(input.recipient, input.recipients);
  if (recipients.length === 0) {
    throw validationFailed({ recipient: ['The recipient field is required when recipients is not present.'], recipients: ['The recipients field is required when recipient is not present.'] });
  }
  const scheduledAt = parseScheduleTime(input.schedule_time);
  const route = await resolveSmsRoute(rc, input.sender_id);
  const text = (input.message ?? input.body ?? '').length > 0 ? (input.message || input.body)! : GENERIC_BODY;
  const seg = estimateSegments(text);
  const future = scheduledAt !== null && scheduledAt.getTime() > Date.now();

  const out = [];
  // Recipients are processed one after another: each gets its own record and outcome.
  for (const raw of recipients) {
    const e164 = toE164(raw);
    const uid = newUid('msg');
    const failure = e164 ? null : 'The recipient is not a valid phone number.';
    const row = await one<MessageRow>(rc.em,
      `insert into messages (uid, account_id, direction, channel_type, channel_id, channel_code, sender, recipient, body, status,
                             media_url, media_type, error_message, metadata, segments, encoding, scheduled_at, created_at, updated_at)
       values (?, ?, 'outbound', 'sms', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, now(), now()) returning *`,
      [uid, rc.account.id, route.channelId, route.channelCode, route.sender, e164 ?? raw, text, failure ? 'failed' : 'queued',
        input.media_url ?? null, input.media_type ?? null, failure, JSON.stringify({ source: 'api' }), seg.segments, seg.encoding,
        future ? scheduledAt : null]);
    if (row && !failure) await startMessageWorkflow(deps, rc.account.id, row, future ? scheduledAt!.toISOString() : null);
    out.push(messageView(row!));
  }
  return out;
}

export async function startMessageWorkflow(deps: MessageServiceDeps, accountId: number, row: { id: string | number; uid: string }, sendAt: string | null) {
  const input: MessageWorkflowInput = {
    accountId, messageId: Number(row.id), uid: row.uid, sendAt,
    receiptTimeoutSeconds: deps.config.receiptTimeoutSeconds,
    deliveryPollSeconds: deps.config.deliveryPollSeconds,
    deliveryPollAttempts: deps.config.deliveryPollAttempts,
  };
  try {
    await deps.temporal.workflow.start('messageWorkflow', {
      taskQueue: deps.config.taskQueue,
      workflowId: messageWorkflowId(accountId, row.uid),
      // One process per message, ever: a repeated start (reconciler, retry) is a no-op.
      workflowIdReusePolicy: 'REJECT_DUPLICATE',
      workflowIdConflictPolicy: 'FAIL',
      args: [input],
      typedSearchAttributes: [
        { key: AccountId, value: String(accountId) },
        { key: ResourceId, value: row.uid },
        { key: ResourceType, value: 'message' },
      ],
      memo: { messageId: Number(row.id) },
    });
  } catch (err) {
    if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
  }
}

export async function getMessage(rc: RequestContext, channelType: 'sms' | 'whatsapp', ref: string) {
  const byId = /^\d+$/.test(ref);
  const row = await one<MessageRow>(rc.em,
    `select * from messages where account_id = ? and channel_type = ? and ${byId ? 'id = ?' : 'uid = ?'}`,
    [rc.account.id, channelType, byId ? Number(ref) : ref]);
  if (!row) throw notFound('Message');
  return messageView(row);
}

/** Queued outbound messages whose workflow may never have started (a crash between insert and start). */
export async function findUnstartedMessages(em: RequestContext['em'], olderThanSeconds: number, limit: number) {
  return many<{ id: string; uid: string; account_id: number; scheduled_at: Date | null }>(em,
    `select id, uid, account_id, scheduled_at from messages
      where status = 'queued' and direction = 'outbound' and created_at < now() - make_interval(secs => ?)
        and (scheduled_at is null or scheduled_at < now() - make_interval(secs => ?))
      order by id limit ?`, [olderThanSeconds, olderThanSeconds, limit]);
}
