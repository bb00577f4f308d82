import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import type { Client } from '@temporalio/client';
import { inboundStored, insertInbound, openWindow, parkStatus, takeParkedStatuses } from './store/messages.js';
import { numberOwner } from './store/routes.js';
import { moveMessage, type MoveResult } from './store/moves.js';
import { messageStarter, messageWorkflowId } from '../../workflows/messaging/message.starter.js';
import { signalWorkflow } from '../../temporal/starters.js';
import type { MessageStatus } from '../../domain/messaging/message-status.js';
import { newUid } from '../platform/ids.js';
import { emitEvent, messageEventFields } from '../webhooks/index.js';
import type { InboundMessage as ProviderInboundMessage, StatusUpdate } from '../../providers/index.js';

interface IngressDeps {
  orm: MikroORM;
  temporal: Client;
}

/**
 * A status keyed by the provider's id alone (chat: sent/delivered/read/failed, in any order, possibly
 * twice). Applied forward only; a status for an id not stored yet (it overtook the send's own answer)
 * waits in pending_receipts.
 */
export async function applyParkableStatus(deps: IngressDeps, s: Pick<StatusUpdate, 'providerMessageId' | 'status' | 'errorMessage'>) {
  const id = s.providerMessageId;
  if (!id) return;
  const to = s.status;
  const errorMessage = s.errorMessage;
  const em = deps.orm.em.fork();
  const moved = await moveMessage(em, { gatewayMessageId: id }, { to, errorMessage });
  if (!moved) {
    await parkStatus(em, id, to, errorMessage ?? null);
    // The send's outcome may have stored this id after our lookup and checked for parked statuses
    // before our insert; then nobody would apply it. Looking again after parking closes that gap.
    const applied = await applyParkedStatuses(em, id);
    if (applied?.dispatchMode === 'workflow') await signal(deps, applied.accountId, applied.uid, applied.status);
    return;
  }
  if (moved.dispatchMode === 'workflow') await signal(deps, moved.accountId, moved.uid, moved.status);
}

/**
 * Applies the statuses parked for a provider id, once a message carries that id; returns where the
 * message stands, or null when none carries it yet (the statuses stay parked). Both sides call it
 * after their own commit: the send's outcome after storing the id, a status after parking itself.
 * Whichever runs second sees the other's row, and `delete … returning` hands each parked status to
 * exactly one caller.
 */
export async function applyParkedStatuses(em: EntityManager, providerMessageId: string): Promise<MoveResult | null> {
  const parked = await takeParkedStatuses(em, providerMessageId);
  let last: MoveResult | null = null;
  for (const p of parked) {
    last =
      (await moveMessage(em, { gatewayMessageId: providerMessageId }, { to: p.status, errorMessage: p.error_message ?? undefined })) ??
      last;
  }
  return last;
}

export async function signal(deps: IngressDeps, accountId: number, uid: string, status: MessageStatus) {
  try {
    await signalWorkflow(deps.temporal, messageStarter, messageWorkflowId(accountId, uid), 'receipt', status);
  } catch {
    // The workflow may have finished already (it polled the provider); the record is what counts.
  }
}

/** An inbound message as the provider adapters parse it. */
export type InboundMessage = Omit<ProviderInboundMessage, 'type'>;

/** An inbound message just stored, as work committed with it (a chat order) needs it. */
export interface StoredInbound {
  accountId: number;
  messageId: number;
  uid: string;
  /** The customer as the record's sender: E.164 with '+'. */
  customer: string;
}

/**
 * Stores an inbound message (direction inbound, status received) for the account that owns the
 * business number, and opens the 24-hour customer service window for that number and customer.
 * A provider redelivery of the same message changes nothing. `also` runs in the same transaction
 * once the message is stored (never for a redelivery), so what the message carries (an order)
 * commits with it or not at all. `chatGroup` marks a participant's message into a chat group: stored
 * with the group's id when the group is the number owner's, and no one-to-one window is opened.
 */
export async function receiveInbound<T = undefined>(
  deps: IngressDeps,
  m: InboundMessage,
  also?: (tx: EntityManager, stored: StoredInbound) => Promise<T>,
  opts: { chatGroup?: { id: number; accountId: number } } = {},
): Promise<{ stored: boolean; uid?: string; also?: T }> {
  const em = deps.orm.em.fork();
  const owner = await numberOwner(em, {
    phoneNumberId: m.businessNumber.phoneNumberId,
    digits: (m.businessNumber.number ?? '').replace(/[^\d]/g, ''),
  });
  if (!owner) return { stored: false };
  const from = `+${m.from.replace(/[^\d]/g, '')}`;
  const business = m.businessNumber.phoneNumberId ?? owner.number;
  return em.transactional(async (tx) => {
    if (await inboundStored(tx, owner.account_id, m.providerMessageId)) return { stored: false };
    const row = await insertInbound(tx, {
      uid: newUid('msg'),
      accountId: owner.account_id,
      channelType: m.channelType,
      channelId: owner.channel_id,
      channelCode: m.channelType === 'whatsapp' ? `whatsapp:${business}` : null,
      sender: from,
      recipient: owner.number,
      body: m.body,
      mediaUrl: m.mediaUrl ?? null,
      mediaType: m.mediaType ?? null,
      providerMessageId: m.providerMessageId,
      metadata: JSON.stringify({ source: 'provider', ...m.metadata }),
      chatGroupId: opts.chatGroup?.accountId === owner.account_id ? opts.chatGroup.id : null,
    });
    // A message into a group opens the group's window (its caller's work), not a one-to-one conversation.
    if (!opts.chatGroup) await openWindow(tx, owner.account_id, m.channelType, business, from);
    // The callback commits with the record: a redelivered provider webhook adds neither.
    const group = row!.chat_group_id ? { chat_group_id: Number(row!.chat_group_id) } : {};
    await emitEvent(tx, owner.account_id, 'message.received', {
      ...messageEventFields(row!),
      body: m.body,
      media_url: m.mediaUrl ?? null,
      ...group,
    });
    if (!also) return { stored: true, uid: row!.uid };
    const extra = await also(tx, { accountId: owner.account_id, messageId: Number(row!.id), uid: row!.uid, customer: from });
    return { stored: true, uid: row!.uid, also: extra };
  });
}
