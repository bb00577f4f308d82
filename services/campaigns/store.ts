import type { EntityManager } from '@mikro-orm/postgresql';
import { exec, one } from '../../entities/db.js';
import type { Row } from '../../entities/database.js';

// Campaigns: one row per campaign, its status and its audience cursor (the last contact id whose
// page is committed). The messages and the audience are the messaging and contacts families'.

type CampaignRecord = Row<'campaigns', 'campaigns'>;
type CampaignStatus = CampaignRecord['status'];

/** A campaign as its view shows it. */
export type CampaignRow = Pick<
  CampaignRecord,
  | 'id'
  | 'uid'
  | 'account_id'
  | 'contact_group_id'
  | 'name'
  | 'message'
  | 'sender'
  | 'channel_id'
  | 'channel_code'
  | 'status'
  | 'scheduled_at'
  | 'total_recipients'
  | 'audience'
  | 'business_key'
  | 'created_at'
  | 'updated_at'
>;

const COLUMNS =
  'id, uid, account_id, contact_group_id, name, message, sender, channel_id, channel_code, status, scheduled_at, total_recipients, audience, business_key, created_at, updated_at';

/** How a request names a campaign: its numeric id or its uid. */
export type CampaignRef = { id: number } | { uid: string };
const where = (ref: CampaignRef) => `account_id = ? and ${'id' in ref ? 'id = ?' : 'uid = ?'}`;
const key = (accountId: number, ref: CampaignRef) => [accountId, 'id' in ref ? ref.id : ref.uid];

export interface NewCampaign {
  uid: string;
  accountId: number;
  groupId: number | null;
  name: string;
  message: string;
  sender: string | null;
  channelId: number | null;
  channelCode: string | null;
  status: CampaignStatus;
  scheduledAt: Date | null;
  /** Whom a campaign without a group reads. */
  audience?: Record<string, unknown> | null;
  /** Once per key and account: a second insert of the key writes nothing (insertCampaign answers null). */
  businessKey?: string | null;
}

export async function insertCampaign(em: EntityManager, c: NewCampaign & { businessKey?: null }): Promise<CampaignRow>;
export async function insertCampaign(em: EntityManager, c: NewCampaign): Promise<CampaignRow | null>;
/** The new campaign; null when its business key is the account's already (nothing written). */
export async function insertCampaign(em: EntityManager, c: NewCampaign): Promise<CampaignRow | null> {
  return one<CampaignRow>(
    em,
    `insert into campaigns (uid, account_id, contact_group_id, name, message, sender, channel_id, channel_code, status, scheduled_at,
                                audience, business_key, total_recipients, cursor, created_at, updated_at)
         values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?::jsonb, ?, 0, 0, now(), now())
         on conflict (account_id, business_key) do nothing returning ${COLUMNS}`,
    [
      c.uid,
      c.accountId,
      c.groupId,
      c.name,
      c.message,
      c.sender,
      c.channelId,
      c.channelCode,
      c.status,
      c.scheduledAt,
      c.audience == null ? null : JSON.stringify(c.audience),
      c.businessKey ?? null,
    ],
  );
}

/** The account's campaign of a business key. */
export const campaignOfKey = (em: EntityManager, accountId: number, businessKey: string) =>
  one<CampaignRow>(em, `select ${COLUMNS} from campaigns where account_id = ? and business_key = ?`, [accountId, businessKey]);

/** The account's latest campaign whose business key starts with `prefix` (matched literally). */
export const latestCampaignOfKeyPrefix = (em: EntityManager, accountId: number, prefix: string) =>
  one<CampaignRow>(
    em,
    `select ${COLUMNS} from campaigns where account_id = ? and business_key like ? escape '\\' order by id desc limit 1`,
    [accountId, `${prefix.replace(/[\\%_]/g, (ch) => `\\${ch}`)}%`],
  );

export const accountCampaign = (em: EntityManager, accountId: number, ref: CampaignRef) =>
  one<CampaignRow>(em, `select ${COLUMNS} from campaigns where ${where(ref)}`, key(accountId, ref));

/** A paused campaign moves to running; null when it is not paused (or not there). */
export const resumePaused = (em: EntityManager, accountId: number, ref: CampaignRef) =>
  one<Pick<CampaignRecord, 'id' | 'uid' | 'cursor'>>(
    em,
    `update campaigns set status = 'running', updated_at = now() where ${where(ref)} and status = 'paused' returning id, uid, cursor`,
    key(accountId, ref),
  );

export const campaignStatus = (em: EntityManager, accountId: number, ref: CampaignRef) =>
  one<Pick<CampaignRecord, 'status'>>(em, `select status from campaigns where ${where(ref)}`, key(accountId, ref));

/** The campaign locked for its next step (the transaction's). */
export const lockCampaign = (em: EntityManager, id: number) =>
  one<
    Pick<
      CampaignRecord,
      | 'id'
      | 'account_id'
      | 'contact_group_id'
      | 'message'
      | 'sender'
      | 'channel_id'
      | 'channel_code'
      | 'status'
      | 'cursor'
      | 'total_recipients'
      | 'audience'
    >
  >(
    em,
    `select id, account_id, contact_group_id, message, sender, channel_id, channel_code, status, cursor, total_recipients, audience
       from campaigns where id = ? for update`,
    [id],
  );

export const setCampaignStatus = (em: EntityManager, id: number, status: CampaignStatus) =>
  exec(em, 'update campaigns set status = ?, updated_at = now() where id = ?', [status, id]);

/** A committed page: the cursor moves past it, its recipients are counted, and the status follows. */
export const advanceCampaign = (em: EntityManager, id: number, cursor: number, inserted: number, status: 'completed' | 'running') =>
  exec(em, `update campaigns set cursor = ?, total_recipients = total_recipients + ?, status = ?, updated_at = now() where id = ?`, [
    cursor,
    inserted,
    status,
    id,
  ]);

/** A running campaign pauses; answers its cursor and count, or null when it was not running. */
export const pauseRunning = (em: EntityManager, id: number) =>
  one<Pick<CampaignRecord, 'cursor' | 'total_recipients'>>(
    em,
    `update campaigns set status = 'paused', updated_at = now() where id = ? and status = 'running' returning cursor, total_recipients`,
    [id],
  );
