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

/** What an earlier attempt of the same claim left in processing (sent or not: the uid dedupes at the provider). */
export const claimedMessages = (em: EntityManager, claim: string, accountStatus: string) =>
  many<OutboundRow>(
    em,
    `select ${outboundColumns(accountStatus)} from messages where dispatch_claim = ? and status = 'processing' order by id`,
    [claim],
  );

/** The ids a claim holds in processing, by id. */
export const claimedIds = (em: EntityManager, claim: string) =>
  many<Pick<Row<'messaging', 'messages'>, 'id'>>(
    em,
    `select id from messages where dispatch_claim = ? and status = 'processing' order by id`,
    [claim],
  );

/** The dispatch claim: up to `limit` queued batch messages of a channel move to processing under `claim`; answers their ids. */
export const claimQueued = (em: EntityManager, claim: string, channelType: 'sms' | 'whatsapp', limit: number) =>
  many<Pick<Row<'messaging', 'messages'>, 'id'>>(
    em,
    `update messages set status = 'processing', dispatch_claim = ?, updated_at = now()
            where id in (select id from messages where status = 'queued' and dispatch_mode = 'batch' and channel_type = ?
                          order by id limit ? for update skip locked)
            returning id`,
    [claim, channelType, limit],
  );

/** The dispatch claim answering the claimed messages as their sends need them. */
export const claimQueuedOutbound = (
  em: EntityManager,
  claim: string,
  channelType: 'sms' | 'whatsapp',
  limit: number,
  accountStatus: string,
) =>
  manyBound<OutboundRow>(
    em,
    `update messages set status = 'processing', dispatch_claim = ?, updated_at = now()
            where id in (select id from messages where status = 'queued' and dispatch_mode = 'batch' and channel_type = ?
                          order by id limit ? for update skip locked)
            returning ${outboundColumns(accountStatus)}`,
    [claim, channelType, limit],
  );

/** Claims other than `claim` left in processing longer than `minutes` go back to the queue; answers their ids. */
export const releaseStaleClaims = (em: EntityManager, channelType: 'sms' | 'whatsapp', claim: string, minutes: number) =>
  many<Pick<Row<'messaging', 'messages'>, 'id'>>(
    em,
    `update messages set status = 'queued', dispatch_claim = null, updated_at = now()
      where status = 'processing' and dispatch_mode = 'batch' and channel_type = ? and dispatch_claim <> ?
        and updated_at < now() - make_interval(mins => ?)
      returning id`,
    [channelType, claim, minutes],
  );

/** Claimed messages not sent go back to the queue. */
export const unclaim = (em: EntityManager, ids: number[]) =>
  exec(em, `update messages set status = 'queued', dispatch_claim = null where id = any(?::bigint[]) and status = 'processing'`, [
    `{${ids.join(',')}}`,
  ]);

/** Batch-sent SMS with no receipt for `olderThanSeconds`, oldest sent first. */
export const silentBatchMessages = (em: EntityManager, olderThanSeconds: number, limit: number) =>
  many<Pick<Row<'messaging', 'messages'>, 'id'>>(
    em,
    `select id from messages where status = 'sent' and dispatch_mode = 'batch' and channel_type = 'sms'
          and sent_at < now() - make_interval(secs => ?) order by sent_at limit ?`,
    [olderThanSeconds, limit],
  );

/** Batch SMS checking delivery, sent within `maxAgeSeconds`, least recently asked first. */
export const checkingBatchMessages = (em: EntityManager, maxAgeSeconds: number, limit: number) =>
  many<Pick<Row<'messaging', 'messages'>, 'id'>>(
    em,
    `select id from messages where status = 'checking_delivery' and dispatch_mode = 'batch' and channel_type = 'sms'
          and sent_at > now() - make_interval(secs => ?) order by updated_at limit ?`,
    [maxAgeSeconds, limit],
  );
