import type { EntityManager } from '@mikro-orm/postgresql';
import { exec, many, manyBound, manyPlanned, one } from '../../../entities/db.js';
import { tablesOf, type Row } from '../../../entities/database.js';
import type { MessageEventRow } from '../../webhooks/index.js';
import type { MessageStatus } from '../../../domain/messaging/message-status.js';
import type { AdmissionRow } from '../../platform/context.js';
import { defaultSmsChannelSql } from './routes.js';
import { dispatchQueueInsertSql } from './dispatch.js';

// The message records: the send statement, reads for the API, the inbound record's neighbours
// (parked receipts, conversation windows) and the campaign pages' records.

type MessageRecord = Row<'messaging', 'messages'>;

/** The columns the Message resource shows (message-view.ts). */
const VIEW_COLUMNS = [
  'id',
  'uid',
  'direction',
  'channel_type',
  'channel_id',
  'channel_code',
  'sender',
  'recipient',
  'body',
  'status',
  'media_url',
  'media_type',
  'gateway_message_id',
  'error_message',
  'metadata',
  'template_params',
  'segments',
  'encoding',
  'created_at',
  'updated_at',
  'sent_at',
  'delivered_at',
  'read_at',
] as const;
/** A message as the API presents it (message-view.ts). */
export type MessageViewRow = Pick<MessageRecord, (typeof VIEW_COLUMNS)[number]>;
/** A message just written, every column (the send statement's `returning *`). */
export type StoredMessage = MessageRecord;

/**
 * The request's records, in order (`?` account id, `?` the records as JSON); `where` gates the select.
 * With `defaultRoute`, a record without a channel takes the CTE `route`'s (the account's default SMS
 * channel): none, and nothing is written.
 */
const INSERT_MESSAGES_SQL = (where: string, defaultRoute = false, answer = 'select * from ins order by id') =>
  `ins as (insert into messages (uid, account_id, direction, channel_type, channel_id, channel_code, sender, recipient, body, status,
                             media_url, media_type, error_message, metadata, template_params, provider_request, segments, encoding,
                             campaign_id, scheduled_at, dispatch_mode, workflow_pending, chat_group_id, created_at, updated_at)
       select v.uid, ?::int, 'outbound', v.channel_type, ${defaultRoute ? 'coalesce(v.channel_id, route.id), coalesce(v.channel_code, route.code)' : 'v.channel_id, v.channel_code'},
              v.sender, v.recipient, v.body, v.status,
              v.media_url, v.media_type, v.error_message, v.metadata, v.template_params, v.provider_request, v.segments, v.encoding,
              v.campaign_id, v.scheduled_at, v.dispatch_mode, nullif(v.status = 'queued' and v.dispatch_mode = 'workflow', false), v.chat_group_id, now(), now()
         from jsonb_to_recordset(?::jsonb) as v(ord int, uid text, channel_type text, channel_id int, channel_code text, sender text,
              recipient text, body text, status text, media_url text, media_type text, error_message text, metadata jsonb,
              template_params jsonb, provider_request jsonb, segments int, encoding text, campaign_id int, scheduled_at timestamptz,
              dispatch_mode text, chat_group_id bigint)${defaultRoute ? ' cross join route' : ''}
       ${where}
        order by v.ord
       returning *),
   queued as (${dispatchQueueInsertSql('ins')})
   ${answer}`;

/** The debit of a send, as the account family writes it; `onlyIf` is this statement's own condition on it. */
export type SendDebit = (onlyIf: string | undefined) => { sql: string; params: unknown[] };

/** A row of the send statement made with the request's admission: `adm`'s columns, and a record's (all null when none was written). */
export type AdmittedMessage = AdmissionRow & { [K in keyof StoredMessage]: StoredMessage[K] | null };

/**
 * The send statement: the wallet's debit (`debit`, the account family's statement) and the records
 * together, the records written only when the debit is made (none answered: refused). With
 * `defaultRoute` the records without a channel take the account's default SMS channel, read by the
 * statement itself, and without one nothing is debited or written either. With `admission` (the
 * request's authentication and count, RequestContext.admission) its CTEs come first, nothing is
 * debited or written unless `ok` has a row, and every row carries `adm`'s columns (one row with
 * only those when nothing was written). Planned once per connection (four texts): every send runs it.
 */
export function insertMessagesWithDebit(
  em: EntityManager,
  debitFor: SendDebit,
  accountId: number,
  records: string,
  opts: { defaultRoute: boolean },
): Promise<StoredMessage[]>;
export function insertMessagesWithDebit(
  em: EntityManager,
  debitFor: SendDebit,
  accountId: number,
  records: string,
  opts: { defaultRoute: boolean; admission: { sql: string; params: unknown[] } },
): Promise<AdmittedMessage[]>;
export function insertMessagesWithDebit(
  em: EntityManager,
  debitFor: SendDebit,
  accountId: number,
  records: string,
  opts: { defaultRoute: boolean; admission?: { sql: string; params: unknown[] } },
): Promise<StoredMessage[] | AdmittedMessage[]> {
  const admission = opts.admission;
  const admitted = admission ? `${admission.sql}, ` : '';
  const onlyIf = [opts.defaultRoute ? 'exists (select from route)' : '', admission ? 'exists (select from ok)' : '']
    .filter(Boolean)
    .join(' and ');
  const debit = debitFor(onlyIf || undefined);
  const answer = admission ? 'select adm.*, ins.* from adm left join ins on true order by ins.id' : undefined;
  const route = opts.defaultRoute ? `route as (${defaultSmsChannelSql('?::int')}), ` : '';
  // Without an admission every row is a whole record (AdmittedMessage with no nulls).
  return manyPlanned<AdmittedMessage>(
    em,
    `with ${admitted}${route}debit as (${debit.sql}), ${INSERT_MESSAGES_SQL(' where exists (select from debit)', opts.defaultRoute, answer)}`,
    [...(admission?.params ?? []), ...(opts.defaultRoute ? [accountId] : []), ...debit.params, accountId, records],
  );
}

/** The request's records without a debit of their own (the caller debits in the same transaction). */
export const insertMessages = (em: EntityManager, accountId: number, records: string) =>
  manyBound<StoredMessage>(em, `with ${INSERT_MESSAGES_SQL('')}`, [accountId, records]);

/** Hands a still-queued immediate send to the batch dispatcher (no workflow of its own was started). */
export const toBatchDispatch = (em: EntityManager, id: number | string) =>
  one<StoredMessage>(
    em,
    `with m as (update messages set dispatch_mode = 'batch', workflow_pending = null, updated_at = now()
                  where id = ? and status = 'queued' and dispatch_mode = 'workflow' returning *),
          q as (${dispatchQueueInsertSql('m')})
     select * from m`,
    [id],
  );

export const messageById = (em: EntityManager, id: number | string) =>
  tablesOf(em, 'messaging').selectFrom('messages').select(VIEW_COLUMNS).where('id', '=', String(id)).executeTakeFirst();

/** One message of the account on one channel type, by numeric id or uid. */
export function accountMessage(
  em: EntityManager,
  accountId: number,
  channelType: 'sms' | 'whatsapp',
  ref: { id: number } | { uid: string },
) {
  const q = tablesOf(em, 'messaging')
    .selectFrom('messages')
    .select(VIEW_COLUMNS)
    .where('account_id', '=', accountId)
    .where('channel_type', '=', channelType);
  return ('id' in ref ? q.where('id', '=', String(ref.id)) : q.where('uid', '=', ref.uid)).executeTakeFirst();
}

export interface MessageFilter {
  accountId: number;
  status?: string;
  direction?: string;
  channelType?: string;
}

/** One page of the account's messages, newest first, and how many match in all. */
export async function messagesPage(em: EntityManager, f: MessageFilter, limit: number, offset: number) {
  let q = tablesOf(em, 'messaging').selectFrom('messages').where('account_id', '=', f.accountId);
  // The filters are compared as text: a value no message has matches none.
  if (f.status) q = q.where('status', '=', f.status as MessageRecord['status']);
  if (f.direction) q = q.where('direction', '=', f.direction as MessageRecord['direction']);
  if (f.channelType) q = q.where('channel_type', '=', f.channelType as MessageRecord['channel_type']);
  const counted = await q.select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow();
  const rows = await q.select(VIEW_COLUMNS).orderBy('id', 'desc').limit(limit).offset(offset).execute();
  return { total: Number(counted.n), rows };
}

/** Queued outbound messages whose workflow may never have started (a crash between insert and start). */
export const unstartedMessages = (em: EntityManager, olderThanSeconds: number, limit: number) =>
  many<Pick<MessageRecord, 'id' | 'uid' | 'account_id'> & { channel_type: 'sms' | 'whatsapp' }>(
    em,
    `select id, uid, account_id, channel_type from messages
      where workflow_pending and status = 'queued' and direction = 'outbound' and dispatch_mode = 'workflow' and created_at < now() - make_interval(secs => ?)
        and (scheduled_at is null or scheduled_at < now() - make_interval(secs => ?))
      order by id limit ?`,
    [olderThanSeconds, olderThanSeconds, limit],
  );

/**
 * Lets the provider's id of rows a statement just wrote find them (message_provider_ids): `source`
 * names a row set with id and gateway_message_id, `where` picks the rows that need it.
 */
export const providerIdInsertSql = (source: string, where: string) =>
  `insert into message_provider_ids (provider_message_id, message_id)
     select ${source}.gateway_message_id, ${source}.id from ${source} where ${source}.gateway_message_id is not null and ${where}
   on conflict do nothing`;

/** Whether the account already stored this provider's inbound message (a redelivery). */
export const inboundStored = (em: EntityManager, accountId: number, providerMessageId: string) =>
  one(
    em,
    `select m.id from message_provider_ids k join messages m on m.id = k.message_id
      where k.provider_message_id = ? and m.direction = 'inbound' and m.account_id = ?`,
    [providerMessageId, accountId],
  );

/** Adds fields to a message's metadata (what became of the order a chat message carried). */
/** An inbound message as the provider handed it, stored as received (its group's id when it came into one). */
export interface InboundRecord {
  uid: string;
  accountId: number;
  channelType: 'sms' | 'whatsapp';
  channelId: number | null;
  channelCode: string | null;
  sender: string;
  recipient: string;
  body: string;
  mediaUrl: string | null;
  mediaType: string | null;
  providerMessageId: string;
  /** JSON text. */
  metadata: string;
  chatGroupId: number | null;
}

export const insertInbound = (tx: EntityManager, r: InboundRecord) =>
  one<MessageEventRow & { chat_group_id: string | null }>(
    tx,
    `with m as (insert into messages (uid, account_id, direction, channel_type, channel_id, channel_code, sender, recipient, body, status, media_url, media_type,
                           gateway_message_id, metadata, segments, encoding, chat_group_id, created_at, updated_at)
     values (?, ?, 'inbound', ?, ?, ?, ?, ?, ?, 'received', ?, ?, ?, ?, 1, 'GSM-7', ?, now(), now())
     returning id, uid, account_id, status, direction, channel_type, sender, recipient, gateway_message_id, error_message, chat_group_id),
          k as (${providerIdInsertSql('m', 'true')})
     select * from m`,
    [
      r.uid,
      r.accountId,
      r.channelType,
      r.channelId,
      r.channelCode,
      r.sender,
      r.recipient,
      r.body,
      r.mediaUrl,
      r.mediaType,
      r.providerMessageId,
      r.metadata,
      r.chatGroupId,
    ],
  );

export const noteOnMessage = (em: EntityManager, id: number, fields: Record<string, unknown>) =>
  exec(em, "update messages set metadata = coalesce(metadata, '{}'::jsonb) || ?::jsonb where id = ?", [JSON.stringify(fields), id]);

/** Parks a status for a provider id no message carries yet. */
export const parkStatus = (em: EntityManager, providerMessageId: string, status: MessageStatus, errorMessage: string | null) =>
  exec(em, 'insert into pending_receipts (provider_message_id, status, error_message, received_at) values (?, ?, ?, now())', [
    providerMessageId,
    status,
    errorMessage,
  ]);

/**
 * Hands over the statuses parked for a provider id once a message carries it (none while none does):
 * `delete … returning` gives each parked status to exactly one caller.
 */
export const takeParkedStatuses = (em: EntityManager, providerMessageId: string) =>
  many<{ status: MessageStatus } & Pick<Row<'messaging', 'pending_receipts'>, 'error_message'>>(
    em,
    `delete from pending_receipts where provider_message_id = ? and exists (select 1 from message_provider_ids where provider_message_id = ?)
     returning status, error_message`,
    [providerMessageId, providerMessageId],
  );

/** Opens (or extends) the 24-hour customer service window of a business number and customer. */
export const openWindow = (em: EntityManager, accountId: number, channelType: string, businessNumber: string, customer: string) =>
  exec(
    em,
    `insert into conversation_windows (account_id, channel_type, business_number, customer, last_inbound_at) values (?, ?, ?, ?, now())
       on conflict (account_id, channel_type, business_number, customer) do update set last_inbound_at = now()`,
    [accountId, channelType, businessNumber, customer],
  );

/** Whether a customer wrote to this business number in the last 24 hours (free-form chat allowed). */
/** The message an automation's operation run created (its metadata names the run); null when none yet. */
export const messageOfOperationRun = (em: EntityManager, accountId: number, runId: string) =>
  one<Pick<MessageRecord, 'id' | 'uid' | 'status'>>(
    em,
    `select id, uid, status from messages where account_id = ? and metadata->>'operation_run' = ?`,
    [accountId, runId],
  );

/** The message another family's send left its key on (metadata source_key), so a retried send finds it instead of sending again. */
export const messageOfSourceKey = (em: EntityManager, accountId: number, key: string) =>
  one<Pick<MessageRecord, 'id' | 'uid' | 'status'>>(
    em,
    `select id, uid, status from messages where account_id = ? and metadata->>'source_key' = ?`,
    [accountId, key],
  );

/** A message of the account by uid, as a pin names it: its group and the provider's id; null when none. */
export const messageRef = async (em: EntityManager, accountId: number, uid: string) =>
  (await tablesOf(em, 'messaging')
    .selectFrom('messages')
    .select(['uid', 'chat_group_id', 'gateway_message_id'])
    .where('uid', '=', uid)
    .where('account_id', '=', accountId)
    .executeTakeFirst()) ?? null;

/** Which chat a message of the account belongs to (its direction, business number's code and both ends); null when none. */
export const chatOfMessage = async (em: EntityManager, accountId: number, uid: string) =>
  (await tablesOf(em, 'messaging')
    .selectFrom('messages')
    .select(['direction', 'channel_code', 'sender', 'recipient'])
    .where('uid', '=', uid)
    .where('account_id', '=', accountId)
    .where('channel_type', '=', 'whatsapp')
    .executeTakeFirst()) ?? null;

export async function windowOpen(em: EntityManager, accountId: number, channelType: string, businessNumber: string, customer: string) {
  const row = await one(
    em,
    `select 1 from conversation_windows where account_id = ? and channel_type = ? and business_number = ? and customer = ? and last_inbound_at > now() - interval '24 hours'`,
    [accountId, channelType, businessNumber, customer],
  );
  return row !== null;
}

/** The records of one campaign page, in order: the batch dispatcher sends the queued ones. */
export interface CampaignPageRecords {
  accountId: number;
  campaignId: number;
  channelId: number | null;
  channelCode: string | null;
  sender: string | null;
  metadata: Record<string, unknown>;
  /** As JSON: ord, uid, recipient, body, status, error_message, segments, encoding, contact_id. */
  records: string;
}

/**
 * Writes a campaign page's records in one statement. A (campaign, contact) pair already written is
 * left alone (ON CONFLICT DO NOTHING), so repeating a page adds nothing; answers what was inserted.
 * (Looking the pairs up instead saves the speculative insertion's confirmation record, 28 bytes
 * of WAL a message, but doubled the statement's time: docs/benchmarks.md.)
 */
export const insertCampaignRecords = (em: EntityManager, p: CampaignPageRecords) =>
  manyBound<Pick<MessageRecord, 'status' | 'segments'>>(
    em,
    `with ins as (insert into messages (uid, account_id, direction, channel_type, channel_id, channel_code, sender, recipient, body, status, error_message,
                           metadata, segments, encoding, campaign_id, contact_id, dispatch_mode, created_at, updated_at)
     select v.uid, ?::int, 'outbound', 'sms', ?::int, ?::text, ?::text, v.recipient, v.body, v.status, v.error_message,
            ?::jsonb, v.segments, v.encoding, ?::int, v.contact_id, 'batch', now(), now()
       from jsonb_to_recordset(?::jsonb) as v(ord int, uid text, recipient text, body text, status text, error_message text, segments int, encoding text, contact_id bigint)
      order by v.ord
     on conflict (campaign_id, contact_id) do nothing
     returning id, channel_type, status, dispatch_mode, segments),
          queued as (${dispatchQueueInsertSql('ins')})
     select status, segments from ins`,
    [p.accountId, p.channelId, p.channelCode, p.sender, JSON.stringify(p.metadata), p.campaignId, p.records],
  );

/**
 * Where a campaign's messages are, in one aggregate: queued (written, not yet taken by the provider:
 * queued, processing), sent (the contract's sent_count: sent, delivered, read, checking delivery),
 * of those delivered (delivered, read) and awaiting their receipt (sent, checking delivery), and
 * failed. queued + sent + failed is every message written.
 */
export async function campaignCounts(em: EntityManager, campaignId: number) {
  const row = await one<{ queued: string; sent: string; delivered: string; awaiting_receipt: string; failed: string }>(
    em,
    `select count(*) filter (where m.status in ('queued', 'processing')) as queued,
            count(*) filter (where m.status in ('sent', 'delivered', 'read', 'checking_delivery')) as sent,
            count(*) filter (where m.status in ('delivered', 'read')) as delivered,
            count(*) filter (where m.status in ('sent', 'checking_delivery')) as awaiting_receipt,
            count(*) filter (where m.status = 'failed') as failed
       from messages m where m.campaign_id = ?`,
    [campaignId],
  );
  return {
    queued: Number(row?.queued ?? 0),
    sent: Number(row?.sent ?? 0),
    delivered: Number(row?.delivered ?? 0),
    awaitingReceipt: Number(row?.awaiting_receipt ?? 0),
    failed: Number(row?.failed ?? 0),
  };
}
