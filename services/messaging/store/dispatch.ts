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
 * Queues the batch-dispatch messages among rows a statement just wrote, as one dispatch batch per
 * channel: `source` names a row set with id, channel_type, status and dispatch_mode (the writer's
 * `returning`), to embed as a CTE. A campaign page is one batch of up to a thousand messages.
 */
export const dispatchQueueInsertSql = (source: string) =>
  `insert into message_dispatch_batches (channel_type, message_ids, queued_at)
     select ${source}.channel_type, array_agg(${source}.id order by ${source}.id), now() from ${source}
      where ${source}.status = 'queued' and ${source}.dispatch_mode = 'batch'
      group by ${source}.channel_type`;

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
 * The dispatch claim: the oldest unclaimed batches of a channel, whole, until they hold `limit`
 * messages (at least one batch), are tagged `claim` (SKIP LOCKED: runs claim disjoint batches);
 * answers their still-queued messages as their sends need them. The messages themselves are not
 * written: they stay queued until their send's outcome moves them.
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
    `with c as (select id, cardinality(message_ids) as n from message_dispatch_batches
                 where claim is null and channel_type = ? order by id limit ? for update skip locked),
          pick as (select id from (select id, sum(n) over (order by id) - n as before from c) x where before < ?),
          b as (update message_dispatch_batches set claim = ?, claimed_at = now() where id in (select id from pick) returning message_ids)
     select ${outboundColumns(accountStatus)} from messages where id in (select unnest(message_ids) from b) and status = 'queued' order by id`,
    [channelType, limit, limit, claim],
  );

/**
 * The claim's batches are done: every message in them was sent, failed, handed back, or is among
 * `retrying`, which stay claimed in an open batch of their own until the stale-claim release.
 */
export const closeClaim = (em: EntityManager, claim: string, channelType: 'sms' | 'whatsapp', retrying: number[] = []) =>
  exec(
    em,
    `with c as (select ?::text as claim, ?::text as channel_type, ?::bigint[] as retrying),
          closed as (update message_dispatch_batches b set sent_at = now() from c where b.claim = c.claim and b.sent_at is null)
     insert into message_dispatch_batches (channel_type, message_ids, queued_at, claim, claimed_at)
       select c.channel_type, c.retrying, now(), c.claim, now() from c where cardinality(c.retrying) > 0`,
    [claim, channelType, `{${retrying.join(',')}}`],
  );

/**
 * Batches of claims other than `claim` left open longer than `minutes` (a dispatcher run terminated
 * or reset) are offered again, whole: the next claim takes what of them is still queued. Answers
 * the batches' ids.
 */
export const releaseStaleClaims = (em: EntityManager, channelType: 'sms' | 'whatsapp', claim: string, minutes: number) =>
  many<{ id: string }>(
    em,
    `update message_dispatch_batches set claim = null, claimed_at = null
      where sent_at is null and claim is not null and channel_type = ? and claim <> ? and claimed_at < now() - make_interval(mins => ?)
      returning id`,
    [channelType, claim, minutes],
  );

/**
 * Claimed messages not sent go back to the queue, as a batch of their own, and leave the claim's
 * batches (so that a stale claim offered again cannot offer them twice).
 */
export const unclaim = (em: EntityManager, claim: string, ids: number[]) =>
  exec(
    em,
    `with given as (select unnest(?::bigint[]) as id),
          left_claim as (update message_dispatch_batches b
                            set message_ids = array(select x from unnest(b.message_ids) as x where x not in (select id from given))
                          where b.claim = ? and b.sent_at is null and b.message_ids && array(select id from given))
     insert into message_dispatch_batches (channel_type, message_ids, queued_at)
       select channel_type, array_agg(id order by id), now() from messages where id in (select id from given) and status = 'queued' group by channel_type`,
    [`{${ids.join(',')}}`, claim],
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

/** Batches done with: closed longer than `maxAgeSeconds` ago, or swept with nothing left to ask about (their messages stay where they are). */
export const dropSettledBatches = (em: EntityManager, maxAgeSeconds: number) =>
  exec(
    em,
    `delete from message_dispatch_batches where sent_at < now() - make_interval(secs => ?) or (swept_at is not null and message_ids = '{}')`,
    [maxAgeSeconds],
  );

/** Swept batch SMS still without a final status, least recently asked first. */
export const checkingBatchMessages = (em: EntityManager, limit: number) =>
  many<{ id: string }>(
    em,
    `select m.id from message_dispatch_batches b cross join unnest(b.message_ids) as u(id) join messages m on m.id = u.id
      where b.channel_type = 'sms' and b.swept_at is not null and m.status in ('sent', 'checking_delivery')
      order by m.updated_at limit ?`,
    [limit],
  );
