import type { EntityManager } from '@mikro-orm/postgresql';
import { sql, type UpdateObject } from 'kysely';
import { tablesOf, type FamilyTables, type Row } from '../../entities/database.js';
import { exec, many, one } from '../../entities/db.js';
import type { GroupStatus, ParticipantStatus } from '../../domain/groups/index.js';

// The chat-groups family's tables (chat_groups, chat_group_participants, chat_group_join_requests):
// the only code that names them. A group's moves are guarded statements (the state they leave is in
// their WHERE), so a repeat or a race moves a row once; callers emit the move's event in the same
// transaction when a row comes back.

const db = (em: EntityManager) => tablesOf(em, 'groups');
const now = sql<string>`now()`;

/** Every column a group's services read (its view, its events, the workflow's activities). */
const GROUP_COLUMNS = [
  'id',
  'account_id',
  'sender_phone_number_id',
  'channel_id',
  'provider_group_id',
  'provider_request_id',
  'subject',
  'description',
  'join_approval_mode',
  'status',
  'invite_link',
  'invite_template',
  'invitees',
  'failure_reason',
  'last_participant_message_at',
  'created_at',
  'updated_at',
] as const;

/** A chat group as every group service reads it. */
export type GroupRow = Pick<Row<'groups', 'chat_groups'>, (typeof GROUP_COLUMNS)[number]>;
type ParticipantRow = Row<'groups', 'chat_group_participants'>;
type JoinRequestRow = Row<'groups', 'chat_group_join_requests'>;

// ---- chat_groups: reads ------------------------------------------------------------------------------

/** The account's group by its local id (locked for the caller's transaction when asked); null when it has none. */
export async function groupOfAccount(
  em: EntityManager,
  groupId: string | number,
  accountId: number,
  opts: { forUpdate?: boolean } = {},
): Promise<GroupRow | null> {
  const q = db(em).selectFrom('chat_groups').select(GROUP_COLUMNS).where('id', '=', String(groupId)).where('account_id', '=', accountId);
  return (await (opts.forUpdate ? q.forUpdate() : q).executeTakeFirst()) ?? null;
}

/** The group the provider knows by this id (its webhooks name it so). */
export async function groupByProviderGroupId(em: EntityManager, providerGroupId: string): Promise<GroupRow | null> {
  return (
    (await db(em).selectFrom('chat_groups').select(GROUP_COLUMNS).where('provider_group_id', '=', providerGroupId).executeTakeFirst()) ??
    null
  );
}

/** The group whose create request the provider knows by this id (its group_create webhook names it). */
export async function groupByCreateRequestId(em: EntityManager, requestId: string): Promise<GroupRow | null> {
  return (
    (await db(em).selectFrom('chat_groups').select(GROUP_COLUMNS).where('provider_request_id', '=', requestId).executeTakeFirst()) ?? null
  );
}

/** Takes the group's row lock for the caller's transaction (places under the participant limit are claimed under it). */
export async function lockGroup(tx: EntityManager, groupId: string | number): Promise<void> {
  await db(tx).selectFrom('chat_groups').select('id').where('id', '=', String(groupId)).forUpdate().execute();
}

/** Groups still `creating` with no create request recorded, older than `olderThanSeconds` (their workflow start was lost). */
export function owedGroupCreations(em: EntityManager, olderThanSeconds: number, limit: number) {
  return many<Pick<GroupRow, 'id' | 'account_id'>>(
    em,
    `select id, account_id from chat_groups
      where status = 'creating' and provider_request_id is null
        and created_at < now() - make_interval(secs => ?) and created_at > now() - interval '1 day'
      order by created_at limit ?`,
    [olderThanSeconds, limit],
  );
}

/** A page of the account's groups, newest first: a status (absent: every one but deleted; 'all') and a sender. */
export async function groupsPage(
  em: EntityManager,
  accountId: number,
  filter: { status?: GroupStatus | 'all'; senderId?: string },
  page: { limit: number; offset: number },
): Promise<{ total: number; rows: GroupRow[] }> {
  let q = db(em).selectFrom('chat_groups').where('account_id', '=', accountId);
  if (!filter.status) q = q.where('status', '<>', 'deleted');
  else if (filter.status !== 'all') q = q.where('status', '=', filter.status);
  if (filter.senderId !== undefined) q = q.where('sender_phone_number_id', '=', filter.senderId);
  const count = await q.select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow();
  const rows = await q.select(GROUP_COLUMNS).orderBy('id', 'desc').limit(page.limit).offset(page.offset).execute();
  return { total: Number(count.n), rows };
}

/** Whether a participant wrote into the group within the last `hours` (free-form group messages need it). */
export async function groupWindowOpen(em: EntityManager, groupId: string | number, hours: number): Promise<boolean> {
  const row = await one<{ open: boolean }>(
    em,
    `select coalesce(last_participant_message_at > now() - make_interval(hours => ?), false) as open from chat_groups where id = ?`,
    [hours, groupId],
  );
  return row?.open ?? false;
}

// ---- chat_groups: writes -----------------------------------------------------------------------------

export interface NewGroup {
  accountId: number;
  senderPhoneNumberId: string;
  channelId: number | null;
  subject: string;
  description: string | null;
  joinApprovalMode: GroupRow['join_approval_mode'];
  inviteTemplate: string | null;
  invitees: string[];
}

/** A new group in `creating`. */
export async function insertGroup(em: EntityManager, g: NewGroup): Promise<GroupRow> {
  return db(em)
    .insertInto('chat_groups')
    .values({
      account_id: g.accountId,
      sender_phone_number_id: g.senderPhoneNumberId,
      channel_id: g.channelId,
      subject: g.subject,
      description: g.description,
      join_approval_mode: g.joinApprovalMode,
      status: 'creating',
      invite_template: g.inviteTemplate,
      invitees: sql<string[]>`${JSON.stringify(g.invitees)}::jsonb`,
      created_at: now,
      updated_at: now,
    })
    .returning(GROUP_COLUMNS)
    .executeTakeFirstOrThrow();
}

/** A participant wrote into the group: its window opens (never moves back). */
export async function openGroupWindow(tx: EntityManager, groupId: string | number, accountId: number): Promise<void> {
  await exec(
    tx,
    `update chat_groups set last_participant_message_at = greatest(coalesce(last_participant_message_at, now()), now()), updated_at = now()
      where id = ? and account_id = ?`,
    [groupId, accountId],
  );
}

/** Keeps the provider's id of the create request, once. */
export async function setCreateRequestId(em: EntityManager, accountId: number, groupId: number, requestId: string): Promise<void> {
  await db(em)
    .updateTable('chat_groups')
    .set({ provider_request_id: requestId, updated_at: now })
    .where('id', '=', String(groupId))
    .where('account_id', '=', accountId)
    .where('provider_request_id', 'is', null)
    .execute();
}

/** One guarded move of a group's row: the changed row, or null when the guard (its state) did not hold. */
async function moveGroup(
  em: EntityManager,
  accountId: number,
  groupId: number,
  set: UpdateObject<FamilyTables['groups'], 'chat_groups'>,
  guard: { status?: GroupStatus; notStatus?: readonly GroupStatus[] },
): Promise<GroupRow | null> {
  let q = db(em)
    .updateTable('chat_groups')
    .set({ ...set, updated_at: now })
    .where('id', '=', String(groupId))
    .where('account_id', '=', accountId);
  if (guard.status) q = q.where('status', '=', guard.status);
  if (guard.notStatus) q = q.where('status', 'not in', guard.notStatus);
  return (await q.returning(GROUP_COLUMNS).executeTakeFirst()) ?? null;
}

/** creating → active with the provider's group id and invite link. */
export const setGroupActive = (em: EntityManager, accountId: number, groupId: number, providerGroupId: string, inviteLink: string | null) =>
  moveGroup(
    em,
    accountId,
    groupId,
    { status: 'active', provider_group_id: providerGroupId, invite_link: inviteLink, failure_reason: null },
    { status: 'creating' },
  );

/** creating → failed with the reason. */
export const setGroupFailed = (em: EntityManager, accountId: number, groupId: number, reason: string) =>
  moveGroup(em, accountId, groupId, { status: 'failed', failure_reason: reason }, { status: 'creating' });

/** Any state but deleted → deleted. */
export const setGroupDeleted = (em: EntityManager, accountId: number, groupId: number) =>
  moveGroup(em, accountId, groupId, { status: 'deleted', deleted_at: now }, { notStatus: ['deleted'] });

/** `from` → deleting (a deletion at the provider starts). */
export const setGroupDeleting = (em: EntityManager, accountId: number, groupId: number, from: GroupStatus) =>
  moveGroup(em, accountId, groupId, { status: 'deleting' }, { status: from });

/** deleting → the state it was deleted from (the provider refused, or never answered). */
export const restoreGroupStatus = (em: EntityManager, accountId: number, groupId: number, previous: GroupStatus) =>
  moveGroup(em, accountId, groupId, { status: previous }, { status: 'deleting' });

/** active ↔ suspended, as the provider says. */
export const setGroupSuspended = (em: EntityManager, accountId: number, groupId: number, suspended: boolean) =>
  moveGroup(em, accountId, groupId, { status: suspended ? 'suspended' : 'active' }, { status: suspended ? 'active' : 'suspended' });

/** The provider's new invite link, unless the group is deleted. */
export const setInviteLink = (em: EntityManager, accountId: number, groupId: number, inviteLink: string) =>
  moveGroup(em, accountId, groupId, { invite_link: inviteLink }, { notStatus: ['deleted'] });

/**
 * Subject and/or description (undefined: unchanged; null: description cleared) of a group that is
 * neither deleted nor failed; the row only when either actually changed.
 */
export function setGroupSettings(
  em: EntityManager,
  accountId: number,
  groupId: number,
  s: { subject?: string; description?: string | null },
): Promise<GroupRow | null> {
  const subject = s.subject ?? null;
  const setDescription = s.description !== undefined;
  const description = s.description ?? null;
  return one<GroupRow>(
    em,
    `update chat_groups set subject = coalesce(?, subject),
                            description = case when ?::boolean then ? else description end,
                            updated_at = now()
      where id = ? and account_id = ? and status not in ('deleted', 'failed')
        and (subject is distinct from coalesce(?, subject) or (?::boolean and description is distinct from ?))
      returning ${GROUP_COLUMNS.join(', ')}`,
    [subject, setDescription, description, groupId, accountId, subject, setDescription, description],
  );
}

// ---- chat_group_participants -------------------------------------------------------------------------

/** Everyone in the group or invited to it, with their place. */
export function participantsOf(em: EntityManager, groupId: string | number) {
  return many<Pick<ParticipantRow, 'wa_id' | 'status'>>(em, 'select wa_id, status from chat_group_participants where group_id = ?', [
    groupId,
  ]);
}

/** The places of these people (WhatsApp ids) in the account's group. */
export function participantsAmong(em: EntityManager, groupId: string | number, accountId: number, waIds: readonly string[]) {
  return many<Pick<ParticipantRow, 'wa_id' | 'status'>>(
    em,
    'select wa_id, status from chat_group_participants where group_id = ? and account_id = ? and wa_id = any(?::text[])',
    [groupId, accountId, waIds],
  );
}

/** Who already has an invitation message recorded. */
export function invitedWithMessage(em: EntityManager, groupId: string | number) {
  return many<Pick<ParticipantRow, 'wa_id'>>(
    em,
    'select wa_id from chat_group_participants where group_id = ? and invite_message_uid is not null',
    [groupId],
  );
}

/** These people take a place as `invited` (someone who left or was never in comes back invited, no message yet). */
export async function claimInvitations(tx: EntityManager, accountId: number, groupId: string | number, waIds: readonly string[]) {
  await exec(
    tx,
    `insert into chat_group_participants (account_id, group_id, wa_id, status, created_at, updated_at)
     select ?, ?, w, 'invited', now(), now() from unnest(?::text[]) as w
     on conflict (group_id, wa_id) do update set status = 'invited', invite_message_uid = null, updated_at = now()`,
    [accountId, groupId, waIds],
  );
}

/** Invitations claimed for a send that never happened give their places back. */
export async function releaseInvitations(em: EntityManager, groupId: string | number, waIds: readonly string[]) {
  await exec(em, `delete from chat_group_participants where group_id = ? and status = 'invited' and wa_id = any(?::text[])`, [
    groupId,
    waIds,
  ]);
}

/** The invitation message sent to someone still invited. */
export async function recordInvitationMessage(em: EntityManager, groupId: string | number, waId: string, messageUid: string) {
  await exec(
    em,
    `update chat_group_participants set invite_message_uid = ?, updated_at = now() where group_id = ? and wa_id = ? and status = 'invited'`,
    [messageUid, groupId, waId],
  );
}

/** Pending invitations withdrawn; answers whose were. */
export async function withdrawInvitations(tx: EntityManager, groupId: string | number, accountId: number, waIds: readonly string[]) {
  const rows = await many<Pick<ParticipantRow, 'wa_id'>>(
    tx,
    `delete from chat_group_participants where group_id = ? and account_id = ? and wa_id = any(?::text[]) and status = 'invited'
     returning wa_id`,
    [groupId, accountId, waIds],
  );
  return rows.map((r) => r.wa_id);
}

/** Sets one person's place to `to` unless it is there already (a person we never knew gets a row); true when it moved. */
export async function setParticipantStatus(
  tx: EntityManager,
  accountId: number,
  groupId: string | number,
  waId: string,
  to: ParticipantStatus,
): Promise<boolean> {
  const moved = await one<Pick<ParticipantRow, 'id'>>(
    tx,
    `insert into chat_group_participants (account_id, group_id, wa_id, status, created_at, updated_at)
     values (?, ?, ?, ?, now(), now())
     on conflict (group_id, wa_id) do update set status = excluded.status, updated_at = now()
      where chat_group_participants.status <> excluded.status
     returning id`,
    [accountId, groupId, waId, to],
  );
  return moved !== null;
}

// ---- chat_group_join_requests ------------------------------------------------------------------------

/** The group's pending join requests, oldest first. */
export function pendingJoinRequests(em: EntityManager, groupId: string | number, accountId: number) {
  return many<Pick<JoinRequestRow, 'join_request_id' | 'wa_id' | 'status' | 'created_at'>>(
    em,
    `select join_request_id, wa_id, status, created_at from chat_group_join_requests
      where group_id = ? and account_id = ? and status = 'pending' order by created_at, id`,
    [groupId, accountId],
  );
}

/** Which of these join request ids are pending in the group, with who asked. */
export function pendingJoinRequestsAmong(em: EntityManager, groupId: string | number, accountId: number, ids: readonly string[]) {
  return many<Pick<JoinRequestRow, 'join_request_id' | 'wa_id'>>(
    em,
    `select join_request_id, wa_id from chat_group_join_requests
      where group_id = ? and account_id = ? and status = 'pending' and join_request_id = any(?::text[])`,
    [groupId, accountId, ids],
  );
}

/** Pending requests the provider decided leave `pending` (a webhook that settled one first wins). */
export async function settleJoinRequests(
  em: EntityManager,
  groupId: string | number,
  accountId: number,
  ids: readonly string[],
  to: 'approved' | 'rejected',
) {
  await exec(
    em,
    `update chat_group_join_requests set status = ?, updated_at = now()
      where group_id = ? and account_id = ? and join_request_id = any(?::text[]) and status = 'pending'`,
    [to, groupId, accountId, ids],
  );
}

/** Someone joined: their pending request (if any) was approved. */
export async function approveJoinRequestOf(tx: EntityManager, groupId: string | number, waId: string) {
  await db(tx)
    .updateTable('chat_group_join_requests')
    .set({ status: 'approved', updated_at: now })
    .where('group_id', '=', String(groupId))
    .where('wa_id', '=', waId)
    .where('status', '=', 'pending')
    .execute();
}

/** A new pending join request; false when the provider told us of it already. */
export async function insertJoinRequest(
  tx: EntityManager,
  accountId: number,
  groupId: string | number,
  joinRequestId: string,
  waId: string,
): Promise<boolean> {
  const created = await one<Pick<JoinRequestRow, 'id'>>(
    tx,
    `insert into chat_group_join_requests (account_id, group_id, join_request_id, wa_id, status, created_at, updated_at)
     values (?, ?, ?, ?, 'pending', now(), now())
     on conflict (group_id, join_request_id) do nothing returning id`,
    [accountId, groupId, joinRequestId, waId],
  );
  return created !== null;
}

/** The asker withdrew a pending request. */
export async function revokeJoinRequest(tx: EntityManager, groupId: string | number, joinRequestId: string) {
  await db(tx)
    .updateTable('chat_group_join_requests')
    .set({ status: 'revoked', updated_at: now })
    .where('group_id', '=', String(groupId))
    .where('join_request_id', '=', joinRequestId)
    .where('status', '=', 'pending')
    .execute();
}
