import { ApplicationFailure } from '@temporalio/activity';
import type { MikroORM } from '@mikro-orm/postgresql';
import { outboundMessage, sendableMessages, type OutboundRow } from '../../services/messaging/store/dispatch.js';
import type { MessageStatus } from '../../domain/messaging/message-status.js';
import { UnknownProvider, type Provider, type ProviderRegistry, type ProviderResult, type SentMessage } from '../../providers/index.js';
import type { Logger } from '../../logger.js';
import { moveMessage } from '../../services/messaging/store/moves.js';
import { applyParkedStatuses } from '../../services/messaging/inbound.js';
import { accountStatusSql } from '../../services/account/index.js';

export interface MessageDeps {
  orm: MikroORM;
  /** Adapters by the value a channel stores in `channels.provider`. */
  providers: ProviderRegistry;
  log: Logger;
  /** Counts a per-message provider call in its channel's budget, shared with the batch dispatch (dispatch.ts providerBudgets). */
  countProviderCall: (channelType: 'sms' | 'whatsapp') => void;
}

export type { OutboundRow };

/**
 * The failure a message of a suspended account gets at dispatch time instead of its send. Failed, not
 * held: a suspended account's queue does not burst out on reactivation; the client sends again.
 */
export const ACCOUNT_SUSPENDED_ERROR = 'Not sent: the account is suspended.';

/**
 * Moves a message forward only (see services/message-moves.ts: the change and its callback event are
 * one statement). Returns the status the message has afterwards.
 */
export async function moveStatus(
  orm: MikroORM,
  messageId: number,
  to: MessageStatus,
  extra: { gatewayMessageId?: string; errorMessage?: string } = {},
): Promise<MessageStatus> {
  const r = await moveMessage(orm.em.fork(), { id: messageId }, { to, ...extra });
  if (!r) throw ApplicationFailure.nonRetryable(`message ${messageId} does not exist`, 'MessageMissing');
  return r.status;
}

/** Receipts that overtook the provider's own answer wait in pending_receipts; apply them now. */
export async function applyPendingReceipts(orm: MikroORM, providerMessageId: string, current: MessageStatus): Promise<MessageStatus> {
  return (await applyParkedStatuses(orm.em.fork(), providerMessageId))?.status ?? current;
}

/**
 * The account's status beside each message loaded for its send (the account family's table: its
 * index would offer this column, as it offers the wallet's debit statement).
 */
export const ACCOUNT_STATUS_COLUMN = `${accountStatusSql('messages.account_id')} as account_status`;

const loadMessage = (deps: MessageDeps, messageId: number) => outboundMessage(deps.orm.em.fork(), messageId, ACCOUNT_STATUS_COLUMN);

/** The messages of a batch that still wait for their provider call (a retried batch skips the rest). */
export const loadSendable = (deps: MessageDeps, ids: number[]) => sendableMessages(deps.orm.em.fork(), ids, ACCOUNT_STATUS_COLUMN);

/** The adapter of the message's channel, chosen by the channel's stored provider. */
export function providerOf(deps: MessageDeps, msg: Pick<OutboundRow, 'uid' | 'channel_type' | 'provider'>): Provider {
  try {
    return deps.providers.forChannel(msg.channel_type, msg.provider);
  } catch (err) {
    if (err instanceof UnknownProvider) throw ApplicationFailure.nonRetryable(`message ${msg.uid}: ${err.message}`, 'UnknownProvider');
    throw err;
  }
}

export function callProvider(deps: MessageDeps, msg: OutboundRow): Promise<ProviderResult<SentMessage>> {
  const provider = providerOf(deps, msg);
  if (provider.kind === 'chat') {
    if (!msg.provider_request) throw ApplicationFailure.nonRetryable(`message ${msg.uid} has no provider request`, 'MessageMalformed');
    return provider.send(msg.provider_request, msg.uid);
  }
  return provider.send({ uid: msg.uid, to: msg.recipient, from: msg.sender, body: msg.body, mediaUrl: msg.media_url });
}

/**
 * Hands one message to its provider. The provider idempotency key is the message uid, so a retry
 * after a crash between the provider call and the database write never sends twice. Shared by the
 * per-message workflow and the batch dispatcher; `claimed` means the caller already moved it to processing.
 */
export async function dispatchOnce(
  deps: MessageDeps,
  messageId: number,
): Promise<{ status: MessageStatus; gatewayMessageId: string | null }> {
  const msg = await loadMessage(deps, messageId);
  if (!msg) throw ApplicationFailure.nonRetryable(`message ${messageId} does not exist`, 'MessageMissing');
  if (msg.status !== 'queued' && msg.status !== 'processing') return { status: msg.status, gatewayMessageId: msg.gateway_message_id };
  if (msg.account_status !== 'active') {
    return { status: await moveStatus(deps.orm, messageId, 'failed', { errorMessage: ACCOUNT_SUSPENDED_ERROR }), gatewayMessageId: null };
  }
  if (msg.status === 'queued') await moveStatus(deps.orm, messageId, 'processing');
  // Paced by the provider task queue's rate limit; counted so that the batch dispatch yields to it.
  deps.countProviderCall(msg.channel_type);
  const result = await callProvider(deps, msg);
  if (result.ok) {
    const id = result.value.providerMessageId;
    const status = await moveStatus(deps.orm, messageId, 'sent', { gatewayMessageId: id });
    // Only statuses keyed by the provider's id alone (chat) can overtake the send's answer.
    if (!providerOf(deps, msg).statusesMayPrecedeSend) return { status, gatewayMessageId: id };
    return { status: await applyPendingReceipts(deps.orm, id, status), gatewayMessageId: id };
  }
  if (result.permanent) {
    const status = await moveStatus(deps.orm, messageId, 'failed', { errorMessage: `${result.message} (provider code ${result.code})` });
    return { status, gatewayMessageId: null };
  }
  throw ApplicationFailure.create({
    message: `${result.message} (provider code ${result.code})`,
    type: 'ProviderTransient',
    nextRetryDelay: result.retryAfterSeconds ? `${result.retryAfterSeconds} seconds` : undefined,
  });
}

/** Asks the provider where a message stands when no receipt came (providers that can say); records what it says. */
export async function pollOnce(deps: MessageDeps, messageId: number): Promise<MessageStatus> {
  const msg = await loadMessage(deps, messageId);
  if (!msg?.gateway_message_id) return msg?.status ?? 'failed';
  const provider = providerOf(deps, msg);
  if (!provider.fetchStatus) return msg.status;
  const res = await provider.fetchStatus(msg.gateway_message_id);
  if (!res.ok) {
    if (res.permanent) return msg.status;
    throw ApplicationFailure.create({ message: res.message, type: 'ProviderTransient' });
  }
  const { status, errorMessage } = res.value;
  if (!status) return msg.status;
  return moveStatus(deps.orm, messageId, status, errorMessage ? { errorMessage } : {});
}

export function createMessageActivities(deps: MessageDeps) {
  return {
    async dispatchMessage({ messageId }: { messageId: number }): Promise<{ status: MessageStatus; gatewayMessageId: string | null }> {
      return dispatchOnce(deps, messageId);
    },

    async markMessageFailed({ messageId, errorMessage }: { messageId: number; errorMessage: string }): Promise<MessageStatus> {
      return moveStatus(deps.orm, messageId, 'failed', { errorMessage });
    },

    async markCheckingDelivery({ messageId }: { messageId: number }): Promise<MessageStatus> {
      return moveStatus(deps.orm, messageId, 'checking_delivery');
    },

    async pollDeliveryStatus({ messageId }: { messageId: number }): Promise<MessageStatus> {
      return pollOnce(deps, messageId);
    },
  };
}

export type MessageActivities = ReturnType<typeof createMessageActivities>;
