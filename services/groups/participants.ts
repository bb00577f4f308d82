import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import type { Client } from '@temporalio/client';
import type { Logger } from '../../logger.js';
import type { ParticipantStatus } from '../../domain/groups/index.js';
import type { ChatGroupEvent } from '../../providers/index.js';
import { emitEvent } from '../webhooks/index.js';
import type { GroupRow } from './group-row.js';
import { approveJoinRequestOf, groupByProviderGroupId, insertJoinRequest, revokeJoinRequest, setParticipantStatus } from './store.js';
import { groupEventFields } from './lifecycle.js';

// Who is in a group, as the provider's group_participants_update webhooks tell it: people joining by
// the invite link (or once their join request was approved), leaving or removed, and join requests
// made or withdrawn. Every change is one guarded statement (the status it leaves is in its WHERE)
// with its event in the same transaction, so a redelivered webhook, or the webhook that follows our
// own removal call, changes the row and emits once.

export interface ParticipantsDeps {
  orm: MikroORM;
  temporal?: Client;
  log?: Logger;
}

/** A group_participants_update, in our words. */
export interface GroupParticipantsNotice {
  action: 'group_participants_add' | 'group_participants_remove' | 'group_join_request_created' | 'group_join_request_revoked';
  /** The business number the webhook came for (metadata.phone_number_id), when it says. */
  phoneNumberId?: string | null;
  /** The provider's group id. */
  groupId: string;
  /** Added or removed people: their WhatsApp ids. */
  participants?: readonly string[];
  /** Who removed them: the business (a removal) or the participant (left). */
  initiatedBy?: 'business' | 'participant' | null;
  joinRequestId?: string | null;
  /** The person asking to join (join request notices). */
  waId?: string | null;
}

/** The provider's participants events as its webhook parser gives them. */
export type ProviderParticipantsEvent = Extract<
  ChatGroupEvent,
  { type: 'participants_added' | 'participants_removed' | 'join_request_created' | 'join_request_revoked' }
>;

/** The parser's event in our words (a notice already in them is kept). */
export function participantsNoticeOf(e: GroupParticipantsNotice | ProviderParticipantsEvent): GroupParticipantsNotice {
  if (!('type' in e)) return e;
  switch (e.type) {
    case 'participants_added':
      return {
        action: 'group_participants_add',
        phoneNumberId: e.phoneNumberId,
        groupId: e.groupId,
        participants: e.participants.map((p) => p.waId),
      };
    case 'participants_removed':
      return {
        action: 'group_participants_remove',
        phoneNumberId: e.phoneNumberId,
        groupId: e.groupId,
        participants: e.participants.map((p) => p.waId),
        initiatedBy: e.initiatedBy === 'participant' ? 'participant' : e.initiatedBy === 'business' ? 'business' : null,
      };
    case 'join_request_created':
    case 'join_request_revoked':
      return {
        action: e.type === 'join_request_created' ? 'group_join_request_created' : 'group_join_request_revoked',
        phoneNumberId: e.phoneNumberId,
        groupId: e.groupId,
        joinRequestId: e.joinRequestId,
        waId: e.waId,
      };
    default:
      return e as GroupParticipantsNotice;
  }
}

/** A WhatsApp id as stored: the digits of the number. */
export const waIdOf = (raw: string) => raw.replace(/\D/g, '');

const participantFields = (g: GroupRow, waId: string, status: ParticipantStatus) => ({
  ...groupEventFields(g),
  wa_id: waId,
  phone: `+${waId}`,
  participant_status: status,
});

/**
 * Sets one person's place in a group to `to` unless it is there already, with the event of that
 * move in the same transaction; true when it moved. An unknown person gets a row of their own (a
 * join by a link forwarded by someone we invited).
 */
export async function moveParticipant(
  tx: EntityManager,
  g: GroupRow,
  waId: string,
  to: ParticipantStatus,
  extra: Record<string, unknown> = {},
): Promise<boolean> {
  if (!(await setParticipantStatus(tx, g.account_id, g.id, waId, to))) return false;
  const kind =
    to === 'joined'
      ? 'group.participant_joined'
      : to === 'left'
        ? 'group.participant_left'
        : to === 'removed'
          ? 'group.participant_removed'
          : null;
  if (kind) await emitEvent(tx, g.account_id, kind, { ...participantFields(g, waId, to), ...extra });
  return true;
}

/**
 * group_participants_update: joins (participant joined, group.participant_joined; a pending or
 * approved join request of that person is settled as approved), departures (left when the
 * participant initiated it, else removed), join requests (pending with group.join_requested; a
 * withdrawn one revoked). A notice for a group we do not know, or from another business number
 * than the group's, changes nothing.
 */
export async function applyGroupParticipantsEvent(
  deps: ParticipantsDeps,
  event: GroupParticipantsNotice | ProviderParticipantsEvent,
): Promise<void> {
  const n = participantsNoticeOf(event);
  const em = deps.orm.em.fork();
  const g = await groupByProviderGroupId(em, n.groupId);
  if (!g) {
    deps.log?.info({ providerGroupId: n.groupId, action: n.action }, 'group_participants_update for a group we do not know');
    return;
  }
  if (n.phoneNumberId && n.phoneNumberId !== g.sender_phone_number_id) {
    deps.log?.warn(
      { group: Number(g.id), phoneNumberId: n.phoneNumberId },
      'group_participants_update from another business number; ignored',
    );
    return;
  }
  await em.transactional(async (tx) => {
    switch (n.action) {
      case 'group_participants_add':
        for (const raw of n.participants ?? []) {
          const waId = waIdOf(raw);
          if (!waId) continue;
          await moveParticipant(tx, g, waId, 'joined');
          await approveJoinRequestOf(tx, g.id, waId);
        }
        return;
      case 'group_participants_remove': {
        const to: ParticipantStatus = n.initiatedBy === 'participant' ? 'left' : 'removed';
        for (const raw of n.participants ?? []) {
          const waId = waIdOf(raw);
          if (waId) await moveParticipant(tx, g, waId, to, { initiated_by: n.initiatedBy ?? null });
        }
        return;
      }
      case 'group_join_request_created': {
        const waId = waIdOf(n.waId ?? '');
        if (!n.joinRequestId || !waId) return;
        if (await insertJoinRequest(tx, g.account_id, g.id, n.joinRequestId, waId))
          await emitEvent(tx, g.account_id, 'group.join_requested', {
            ...groupEventFields(g),
            join_request_id: n.joinRequestId,
            wa_id: waId,
            phone: `+${waId}`,
          });
        return;
      }
      case 'group_join_request_revoked':
        if (!n.joinRequestId) return;
        await revokeJoinRequest(tx, g.id, n.joinRequestId);
        return;
    }
  });
}
