import type { EntityManager } from '@mikro-orm/postgresql';
import { exec, many, one } from '../../../entities/db.js';
import { tablesOf, type Row } from '../../../entities/database.js';

// What a message can be sent from, and what a message received names: channels (sending routes),
// alphanumeric sender ids, numbers and short codes, and the blacklist of the account's routes.

type ChannelRow = Row<'messaging', 'channels'>;
type NumberRow = Row<'messaging', 'phone_numbers'>;

/**
 * The account's default SMS channel, else the system default (at most one row: id, code, provider).
 * `accountExpr` is an SQL expression for the account id; the authentication statement (api/auth.ts)
 * embeds this, so a send without sender_id needs no lookup of its own.
 */
export const defaultSmsChannelSql = (accountExpr: string) =>
  `select id, code, provider from channels where channel_type = 'sms' and active and is_default and (account_id = ${accountExpr} or account_id is null)
    order by account_id nulls last limit 1`;

/** The route of a message: id, code and stored provider of an SMS channel. */
export type SmsChannelRow = Pick<ChannelRow, 'id' | 'code' | 'provider'>;

/** The account's default SMS channel (or the system default); `channelId` asks for that channel instead, if the account may use it. */
export const smsChannel = (em: EntityManager, accountId: number, channelId: number | null) =>
  channelId === null
    ? one<SmsChannelRow>(em, defaultSmsChannelSql('?'), [accountId])
    : one<SmsChannelRow>(
        em,
        `select id, code, provider from channels where id = ? and channel_type = 'sms' and active and (account_id = ? or account_id is null)`,
        [channelId, accountId],
      );

/** The default SMS route as the senders listing shows it (whether it is the system's). */
export const defaultSmsRoute = (em: EntityManager, accountId: number) =>
  one<Pick<ChannelRow, 'id' | 'code' | 'account_id'>>(
    em,
    `select id, code, account_id from channels where channel_type = 'sms' and active and is_default and (account_id = ? or account_id is null)
      order by account_id nulls last limit 1`,
    [accountId],
  );

/** Whether an SMS channel is active: null when there is no such SMS channel. */
export async function smsChannelActive(em: EntityManager, channelId: number | null): Promise<boolean | null> {
  if (channelId === null) return null;
  const row = await tablesOf(em, 'messaging')
    .selectFrom('channels')
    .select('active')
    .where('id', '=', channelId)
    .where('channel_type', '=', 'sms')
    .executeTakeFirst();
  return row ? row.active : null;
}

/** A sending identity sender_id may name, and whether it can send. */
export type SenderCandidate = Pick<Row<'messaging', 'sender_ids'>, 'channel_id'> & {
  sender: string;
  kind: 'alphanumeric' | 'number' | 'short_code';
  usable: boolean;
};

/** Every identity of the account that `wanted` names: an alphanumeric id, a number (by its digits) or a short code. */
export const senderCandidates = (em: EntityManager, accountId: number, wanted: string, digits: string) =>
  many<SenderCandidate>(
    em,
    `select channel_id, value as sender, 'alphanumeric' as kind, approval_status = 'approved' as usable
         from sender_ids where account_id = ? and lower(value) = lower(?)
       union all
       select channel_id, number, 'number', (not released and capabilities @> '"sms"'::jsonb)
         from phone_numbers where account_id = ? and ? <> '' and regexp_replace(number, '[^0-9]', '', 'g') = ?
       union all
       select channel_id, code, 'short_code', assignment_status = 'active'
         from short_codes where account_id = ? and code = ?`,
    [accountId, wanted, accountId, digits, digits, accountId, wanted],
  );

/** The account's alphanumeric ids, numbers and short codes, each by id. */
export function sendingIdentities(em: EntityManager, accountId: number) {
  const db = tablesOf(em, 'messaging');
  return Promise.all([
    db
      .selectFrom('sender_ids')
      .select(['id', 'value', 'approval_status', 'channel_id'])
      .where('account_id', '=', accountId)
      .orderBy('id')
      .execute(),
    db
      .selectFrom('phone_numbers')
      .select(['id', 'number', 'capabilities', 'released', 'channel_id'])
      .where('account_id', '=', accountId)
      .orderBy('id')
      .execute(),
    db
      .selectFrom('short_codes')
      .select(['id', 'code', 'assignment_status', 'channel_id'])
      .where('account_id', '=', accountId)
      .orderBy('id')
      .execute(),
  ]);
}

/** A WhatsApp business number of the account, with its channel's stored provider (null: the chat default). */
export type WhatsAppNumber = Pick<NumberRow, 'id' | 'number' | 'channel_id' | 'business_account_id'> & {
  provider_phone_number_id: string;
  provider?: string | null;
};

/** The account's unreleased WhatsApp numbers that have a provider phone-number id, by id. */
export const whatsappSenders = (em: EntityManager, accountId: number) =>
  many<WhatsAppNumber>(
    em,
    `select p.id, p.number, p.channel_id, p.provider_phone_number_id, p.business_account_id, c.provider
       from phone_numbers p left join channels c on c.id = p.channel_id and c.channel_type = 'whatsapp'
      where p.account_id = ? and not p.released and p.capabilities @> '"whatsapp"'::jsonb and p.provider_phone_number_id is not null
      order by p.id`,
    [accountId],
  );

/** The account's number with this provider phone-number id (a live one first) and its channel's provider; null when none. */
export const chatSenderOf = (em: EntityManager, accountId: number, providerPhoneNumberId: string) =>
  one<Pick<NumberRow, 'number'> & { provider: string | null }>(
    em,
    `select p.number, c.provider from phone_numbers p left join channels c on c.id = p.channel_id and c.channel_type = 'whatsapp'
      where p.account_id = ? and p.provider_phone_number_id = ? order by p.released, p.id limit 1`,
    [accountId, providerPhoneNumberId],
  );

/** The account's unreleased WhatsApp numbers, by id (the business accounts listing). */
export const whatsappNumbers = (em: EntityManager, accountId: number) =>
  many<Pick<NumberRow, 'id' | 'number' | 'channel_id' | 'provider_phone_number_id' | 'business_account_id'>>(
    em,
    `select id, number, channel_id, provider_phone_number_id, business_account_id from phone_numbers
      where account_id = ? and not released and capabilities @> '"whatsapp"'::jsonb order by id`,
    [accountId],
  );

/** The account that owns a business number, found by provider phone-number id, else by its digits. */
export type NumberOwner = Pick<NumberRow, 'account_id' | 'number' | 'channel_id'>;
export const numberOwner = (em: EntityManager, business: { phoneNumberId?: string | null; digits: string }) =>
  business.phoneNumberId
    ? one<NumberOwner>(
        em,
        'select account_id, number, channel_id from phone_numbers where provider_phone_number_id = ? and not released order by id limit 1',
        [business.phoneNumberId],
      )
    : one<NumberOwner>(
        em,
        `select account_id, number, channel_id from phone_numbers where regexp_replace(number, '[^0-9]', '', 'g') = ? and not released order by id limit 1`,
        [business.digits],
      );

/**
 * Which of `numbers` (digits only) the account's blacklist blocks for every route (channel_id null)
 * or for `channelId`; the blacklist's phones are compared by their digits.
 */
export async function blockedNumbers(
  em: EntityManager,
  accountId: number,
  channelId: number | null,
  numbers: string[],
): Promise<Set<string>> {
  const wanted = numbers.filter((n) => n !== '');
  if (!wanted.length) return new Set();
  const rows = await many<{ digits: string }>(
    em,
    `select distinct regexp_replace(b.phone, '[^0-9]', '', 'g') as digits from blacklist b
      where b.account_id = ? and (b.channel_id is null or b.channel_id = ?)
        and regexp_replace(b.phone, '[^0-9]', '', 'g') in (select jsonb_array_elements_text(?::jsonb))`,
    [accountId, channelId, JSON.stringify(wanted)],
  );
  return new Set(rows.map((r) => r.digits));
}

// ---------------------------------------------------------------------------------------------
// Sending identities and routes an operator keeps per account (services/account/identities.ts):
// each kind's table and the columns the operator writes.

export const IDENTITY_TABLES = {
  'sender-ids': { table: 'sender_ids', columns: ['value', 'channel_id', 'approval_status'] },
  'phone-numbers': {
    table: 'phone_numbers',
    columns: ['number', 'channel_id', 'capabilities', 'released', 'provider_phone_number_id', 'business_account_id'],
  },
  'short-codes': { table: 'short_codes', columns: ['code', 'channel_id', 'assignment_status'] },
  channels: { table: 'channels', columns: ['channel_type', 'code', 'provider', 'is_default', 'active', 'config'] },
  blacklist: { table: 'blacklist', columns: ['phone', 'channel_id'] },
} as const;

export type IdentityKind = keyof typeof IDENTITY_TABLES;
type StoredIdentity = { [K in IdentityKind]: Row<'messaging', (typeof IDENTITY_TABLES)[K]['table']> };
/**
 * One identity as stored: every column of its kind's table. Always read by account, so a channel's
 * account is never the null of the service's own channels.
 */
export type IdentityRecord<K extends IdentityKind> = K extends 'channels'
  ? Omit<StoredIdentity[K], 'account_id'> & { account_id: number }
  : StoredIdentity[K];

/** Every column of a kind's table (what the operator reads back). */
const identityColumns = (kind: IdentityKind) => ['id', 'account_id', ...IDENTITY_TABLES[kind].columns, 'created_at'].join(', ');
const encode = (v: unknown) => (v !== null && typeof v === 'object' ? JSON.stringify(v) : v);
/** The kind's columns the values set, in the table's order: never a key the caller made up. */
const setColumns = (kind: IdentityKind, values: Record<string, unknown>) =>
  (IDENTITY_TABLES[kind].columns as readonly string[]).filter((c) => values[c] !== undefined);

export const identitiesOf = <K extends IdentityKind>(em: EntityManager, kind: K, accountId: number) =>
  many<IdentityRecord<K>>(em, `select ${identityColumns(kind)} from ${IDENTITY_TABLES[kind].table} where account_id = ? order by id`, [
    accountId,
  ]);

export const identityOf = <K extends IdentityKind>(em: EntityManager, kind: K, accountId: number, id: number) =>
  one<IdentityRecord<K>>(em, `select ${identityColumns(kind)} from ${IDENTITY_TABLES[kind].table} where id = ? and account_id = ?`, [
    id,
    accountId,
  ]);

/** Adds one; a new default channel replaces the account's old default of its type, in the same transaction. */
export async function insertIdentity<K extends IdentityKind>(
  em: EntityManager,
  kind: K,
  accountId: number,
  values: Record<string, unknown>,
) {
  const cols = setColumns(kind, values);
  return em.transactional(async (tx) => {
    if (kind === 'channels' && values.is_default === true)
      await exec(tx, 'update channels set is_default = false where account_id = ? and channel_type = ?', [accountId, values.channel_type]);
    return one<IdentityRecord<K>>(
      tx,
      `insert into ${IDENTITY_TABLES[kind].table} (account_id, ${cols.join(', ')}, created_at) values (?, ${cols.map(() => '?').join(', ')}, now())
       returning ${identityColumns(kind)}`,
      [accountId, ...cols.map((c) => encode(values[c]))],
    );
  });
}

/** Sets the given columns of one; null when the account has no such identity. */
export async function updateIdentityColumns<K extends IdentityKind>(
  em: EntityManager,
  kind: K,
  accountId: number,
  id: number,
  values: Record<string, unknown>,
) {
  const cols = setColumns(kind, values);
  if (!cols.length) return identityOf(em, kind, accountId, id);
  return one<IdentityRecord<K>>(
    em,
    `update ${IDENTITY_TABLES[kind].table} set ${cols.map((c) => `${c} = ?`).join(', ')} where id = ? and account_id = ? returning ${identityColumns(kind)}`,
    [...cols.map((c) => encode(values[c])), id, accountId],
  );
}

/** Removes one; whether it was there. */
export const deleteIdentity = async (em: EntityManager, kind: IdentityKind, accountId: number, id: number) =>
  (await one(em, `delete from ${IDENTITY_TABLES[kind].table} where id = ? and account_id = ? returning id`, [id, accountId])) !== null;
