import type { MikroORM } from '@mikro-orm/postgresql';
import type { Client } from '@temporalio/client';
import type { Logger } from '../../logger.js';
import { receiveInbound, type InboundMessage } from '../messaging/index.js';
import { groupByProviderGroupId, openGroupWindow } from './store.js';

// A participant's message into a group (Cloud API: a `messages` entry with a group_id): stored by
// the messaging family as any inbound message is, carrying the group's id, and in the same
// transaction it opens the group's 24-hour window (chat_groups.last_participant_message_at), which
// free-form group messages need (GROUP_LIMITS.windowHours).

export interface GroupInboundDeps {
  orm: MikroORM;
  temporal: Client;
  log?: Logger;
}

/** An inbound message that names the group it was written into (the provider's group id). */
export type GroupInboundMessage = InboundMessage & { groupId: string };
/** The webhook parser's shape: the group id beside the message. */
export interface ProviderGroupMessage {
  groupId: string;
  message: InboundMessage & { type?: string };
}

/**
 * Stores the message as an inbound message of the group and opens the group's window. A message for
 * a group we do not know, or arriving on another business number than the group's, is not stored as
 * a group message (false); a provider redelivery stores nothing twice.
 */
export async function receiveGroupInbound(
  deps: GroupInboundDeps,
  event: GroupInboundMessage | ProviderGroupMessage,
): Promise<{ stored: boolean; uid?: string }> {
  const m: GroupInboundMessage = 'message' in event ? { ...withoutType(event.message), groupId: event.groupId } : event;
  const g = await groupByProviderGroupId(deps.orm.em.fork(), m.groupId);
  if (!g) {
    deps.log?.info({ providerGroupId: m.groupId }, 'group message for a group we do not know; not stored');
    return { stored: false };
  }
  const phoneNumberId = m.businessNumber.phoneNumberId;
  if (phoneNumberId && phoneNumberId !== g.sender_phone_number_id) {
    deps.log?.warn({ group: Number(g.id), phoneNumberId }, 'group message from another business number; not stored');
    return { stored: false };
  }
  const { groupId: _groupId, ...message } = m;
  const r = await receiveInbound(
    deps,
    { ...message, businessNumber: { phoneNumberId: g.sender_phone_number_id }, metadata: { ...message.metadata, group_id: m.groupId } },
    async (tx, stored) => {
      // The account that owns the number is the group's (a number moved to another account keeps its groups apart).
      if (stored.accountId !== g.account_id) return;
      await openGroupWindow(tx, g.id, g.account_id);
    },
    { chatGroup: { id: Number(g.id), accountId: g.account_id } },
  );
  return { stored: r.stored, uid: r.uid };
}

function withoutType(m: InboundMessage & { type?: string }): InboundMessage {
  const { type: _type, ...rest } = m;
  return rest;
}
