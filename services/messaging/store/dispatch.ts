import type { EntityManager } from '@mikro-orm/postgresql';
import { exec, many, manyBound, one } from '../../../entities/db.js';
import type { Row } from '../../../entities/database.js';

// The outbound side of the records: what a send needs of a message, the batch dispatcher's claims,
// and the sweeps of sent messages that never got a receipt.

/** A message as its provider call needs it, with its channel's stored provider and its account's status. */
export type OutboundRow = Pick<
  Row<'messaging', 'messages'>,
  'id' | 'uid' | 'status' | 'sender' | 'recipient' | 'body' | 'media_url' | 'gateway_message_id' | 'provider_request'
> & {
  channel_type: 'sms' | 'whatsapp';
  /** The stored provider of the message's channel (null: none stored, the channel type's default). */
  provider: string | null;
  /** The account's status when the message was loaded for its send: only an active account's messages go out. */
  account_status: string;
};

/**
 * The columns of an OutboundRow. `accountStatus` is the column giving the account's status of
 * `messages.account_id`, as `account_status`: the account family's table, so its text comes from
 * the caller.
 */
const outboundColumns = (accountStatus: string) =>
  'id, uid, status, channel_type, sender, recipient, body, media_url, gateway_message_id, provider_request, ' +
  '(select provider from channels where channels.id = messages.channel_id and channels.channel_type = messages.channel_type) as provider, ' +
  accountStatus;

export const outboundMessage = (em: EntityManager, messageId: number, accountStatus: string) =>
  one<OutboundRow>(em, `select ${outboundColumns(accountStatus)} from messages where id = ?`, [messageId]);

/** The messages of a batch that still wait for their provider call (a retried batch skips the rest). */
export const sendableMessages = (em: EntityManager, ids: number[], accountStatus: string) =>
  many<OutboundRow>(
    em,
    `select ${outboundColumns(accountStatus)} from messages where id = any(?::bigint[]) and status in ('queued', 'processing') order by id`,
    [`{${ids.map((i) => Math.trunc(Number(i))).join(',')}}`],
  );

/**
 * Queues the batch-dispatch messages among rows a statement just wrote: `source` names a row set
 * with id, channel_type, status and dispatch_mode (the writer's `returning`), to embed as a CTE.
 */
export const dispatchQueueInsertSql = (source: string) =>
  `insert into message_dispatch_queue (message_id, channel_type)
     select ${source}.id, ${source}.channel_type from ${source} where ${source}.status = 'queued' and ${source}.dispatch_mode = 'batch'
   on conflict do nothing`;

/** What an earlier attempt of the same claim took and has not sent yet (sent or not: the uid dedupes at the provider). */
export const claimedMessages = (em: EntityManager, claim: string, accountStatus: string) =>
  many<OutboundRow>(
    em,
    `select ${outboundColumns(accountStatus)} from messages
      where id in (select unnest(message_ids) from message_dispatch_batches where claim = ? and sent_at is null) and status = 'queued'
      order by id`,
    [claim],
  );

/**
 * The dispatch claim: up to `limit` messages of a channel leave the queue into one dispatch batch
 * tagged `claim` (SKIP LOCKED: runs claim disjoint slices); answers them as their sends need them.
 * The messages themselves are not written: they stay queued until their send's outcome moves them.
 */
export const claimQueuedOutbound = (
  em: EntityManager,
  claim: string,
  channelType: 'sms' | 'whatsapp',
  limit: number,
  accountStatus: string,
) =>
  manyBound<OutboundRow>(
    em,
    `with q as (delete from message_dispatch_queue where message_id in (
                  select message_id from message_dispatch_queue where channel_type = ? order by message_id limit ? for update skip locked)
                returning message_id),
          b as (insert into message_dispatch_batches (claim, channel_type, message_ids, claimed_at)
                select ?, ?, array_agg(message_id order by message_id), now() from q having count(*) > 0)
     select ${outboundColumns(accountStatus)} from messages where id in (select message_id from q) and status = 'queued' order by id`,
    [channelType, limit, claim, channelType],
  );

/** The claim's batches are done: every message in them was sent, failed, or handed back. */
export const closeClaim = (em: EntityManager, claim: string) =>
  exec(em, `update message_dispatch_batches set sent_at = now() where claim = ? and sent_at is null`, [claim]);

/**
 * Claims other than `claim` left open longer than `minutes` (a dispatcher run terminated or reset)
 * are closed and what they still hold queued goes back to the queue; answers those messages' ids.
 */
export const releaseStaleClaims = (em: EntityManager, channelType: 'sms' | 'whatsapp', claim: string, minutes: number) =>
  many<{ id: string }>(
    em,
    `with b as (update message_dispatch_batches set sent_at = now()
                 where sent_at is null and channel_type = ? and claim <> ? and claimed_at < now() - make_interval(mins => ?)
                 returning message_ids)
     insert into message_dispatch_queue (message_id, channel_type)
       select m.id, m.channel_type from messages m where m.id in (select unnest(message_ids) from b) and m.status = 'queued'
     on conflict do nothing
     returning message_id as id`,
    [channelType, claim, minutes],
  );

/** Claimed messages not sent go back to the queue. */
export const unclaim = (em: EntityManager, ids: number[]) =>
  exec(
    em,
    `insert into message_dispatch_queue (message_id, channel_type)
       select id, channel_type from messages where id = any(?::bigint[]) and status = 'queued'
     on conflict do nothing`,
    [`{${ids.join(',')}}`],
  );

/**
 * Batch-sent SMS with no receipt `olderThanSeconds` after their batch was sent: the batches not yet
 * swept (up to `batches` of them) are narrowed to those messages, which are answered for the sweep
 * to ask the provider about. A batch whose messages all had their receipt is left empty.
 */
export const silentBatchMessages = (em: EntityManager, olderThanSeconds: number, batches: number) =>
  many<{ id: string }>(
    em,
    `with b as (select id, message_ids from message_dispatch_batches
                 where channel_type = 'sms' and swept_at is null and sent_at < now() - make_interval(secs => ?)
                 order by id limit ? for update skip locked),
          silent as (select b.id as batch, m.id from b cross join unnest(b.message_ids) as u(id) join messages m on m.id = u.id
                      where m.status = 'sent'),
          n as (update message_dispatch_batches x set swept_at = now(),
                       message_ids = coalesce((select array_agg(s.id order by s.id) from silent s where s.batch = x.id), '{}')
                 where x.id in (select id from b))
     select id from silent order by id`,
    [olderThanSeconds, batches],
  );

/**
 * Swept batch SMS still without a final status, in batches sent within `maxAgeSeconds`, least
 * recently asked first; batches older than that are dropped (their messages stay where they are).
 */
export async function checkingBatchMessages(em: EntityManager, maxAgeSeconds: number, limit: number) {
  await exec(
    em,
    `delete from message_dispatch_batches where sent_at < now() - make_interval(secs => ?) or (swept_at is not null and message_ids = '{}')`,
    [maxAgeSeconds],
  );
  return many<{ id: string }>(
    em,
    `select m.id from message_dispatch_batches b cross join unnest(b.message_ids) as u(id) join messages m on m.id = u.id
      where b.channel_type = 'sms' and b.swept_at is not null and m.status in ('sent', 'checking_delivery')
      order by m.updated_at limit ?`,
    [limit],
  );
}
