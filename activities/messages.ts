import { ApplicationFailure } from '@temporalio/activity';
import type { MikroORM } from '@mikro-orm/postgresql';
import { many, one } from '../entities/db.js';
import { movableFrom, type MessageStatus } from '../domain/message-status.js';
import type { SmsGatewayClient } from './providers/sms-gateway.js';
import type { WhatsAppCloudClient } from './providers/whatsapp-cloud.js';
import type { ProviderResult } from './providers/http.js';
import type { Logger } from '../logger.js';
import { emitEvent, messageEventFields, MESSAGE_STATUS_EVENTS, type MessageEventRow } from '../services/events.js';

export interface MessageDeps { orm: MikroORM; sms: SmsGatewayClient; whatsapp: WhatsAppCloudClient; publicBaseUrl: string; log: Logger }

interface Row {
  id: string; uid: string; status: MessageStatus; channel_type: 'sms' | 'whatsapp'; sender: string | null; recipient: string; body: string;
  media_url: string | null; gateway_message_id: string | null; provider_request: { phone_number_id: string; body: Record<string, unknown> } | null;
}

/**
 * Moves a message forward only: concurrent receipts and retries can never take a status back. The
 * status change and its callback event commit in one transaction, so a change is never reported
 * twice nor lost; a move that changes nothing emits nothing.
 */
export async function moveStatus(orm: MikroORM, messageId: number, to: MessageStatus, extra: { gatewayMessageId?: string; errorMessage?: string } = {}): Promise<MessageStatus> {
  const stamp = to === 'sent' ? ', sent_at = coalesce(sent_at, now())' : to === 'delivered' ? ', delivered_at = coalesce(delivered_at, now())' : to === 'read' ? ', read_at = coalesce(read_at, now()), delivered_at = coalesce(delivered_at, now())' : '';
  const from = movableFrom(to);
  return orm.em.fork().transactional(async (tx) => {
    const row = await one<MessageEventRow>(tx,
      `update messages set status = ?, updated_at = now(), gateway_message_id = coalesce(?, gateway_message_id),
              error_message = coalesce(?, error_message)${stamp}
        where id = ? and status in (${from.map(() => '?').join(',')})
        returning id, uid, account_id, status, direction, channel_type, sender, recipient, gateway_message_id, error_message`,
      [to, extra.gatewayMessageId ?? null, extra.errorMessage ?? null, messageId, ...from]);
    if (row) {
      const kind = MESSAGE_STATUS_EVENTS[row.status];
      if (kind) await emitEvent(tx, row.account_id, kind, messageEventFields(row));
      return row.status as MessageStatus;
    }
    const current = await one<{ status: MessageStatus }>(tx, 'select status from messages where id = ?', [messageId]);
    return current!.status;
  });
}

/** Receipts that overtook the provider's own answer wait in pending_receipts; apply them now. */
async function applyPendingReceipts(orm: MikroORM, messageId: number, providerMessageId: string, current: MessageStatus): Promise<MessageStatus> {
  const pending = await many<{ status: MessageStatus; error_message: string | null }>(orm.em.fork(),
    'delete from pending_receipts where provider_message_id = ? returning status, error_message', [providerMessageId]);
  let status = current;
  for (const p of pending) status = await moveStatus(orm, messageId, p.status, p.error_message ? { errorMessage: p.error_message } : {});
  return status;
}

const loadMessage = (deps: MessageDeps, messageId: number) => one<Row>(deps.orm.em.fork(),
  'select id, uid, status, channel_type, sender, recipient, body, media_url, gateway_message_id, provider_request from messages where id = ?', [messageId]);

function callProvider(deps: MessageDeps, msg: Row): Promise<ProviderResult<{ providerMessageId: string }>> {
  if (msg.channel_type === 'whatsapp') {
    if (!msg.provider_request) throw ApplicationFailure.nonRetryable(`message ${msg.uid} has no provider request`, 'MessageMalformed');
    return deps.whatsapp.send(msg.provider_request.phone_number_id, msg.provider_request.body, msg.uid);
  }
  return deps.sms.send({
    to: msg.recipient, from: msg.sender, body: msg.body, mediaUrl: msg.media_url,
    statusCallback: `${deps.publicBaseUrl}/providers/sms/status?m=${encodeURIComponent(msg.uid)}`,
    idempotencyKey: msg.uid,
  });
}

/**
 * Hands one message to its provider. The provider idempotency key is the message uid, so a retry
 * after a crash between the provider call and the database write never sends twice. Shared by the
 * per-message workflow and the batch dispatcher; `claimed` means the caller already moved it to processing.
 */
export async function dispatchOnce(deps: MessageDeps, messageId: number): Promise<{ status: MessageStatus; gatewayMessageId: string | null }> {
  const msg = await loadMessage(deps, messageId);
  if (!msg) throw ApplicationFailure.nonRetryable(`message ${messageId} does not exist`, 'MessageMissing');
  if (msg.status !== 'queued' && msg.status !== 'processing') return { status: msg.status, gatewayMessageId: msg.gateway_message_id };
  if (msg.status === 'queued') await moveStatus(deps.orm, messageId, 'processing');
  const result = await callProvider(deps, msg);
  if (result.ok) {
    const id = result.value.providerMessageId;
    const status = await moveStatus(deps.orm, messageId, 'sent', { gatewayMessageId: id });
    return { status: await applyPendingReceipts(deps.orm, messageId, id, status), gatewayMessageId: id };
  }
  if (result.permanent) {
    const status = await moveStatus(deps.orm, messageId, 'failed', { errorMessage: `${result.message} (provider code ${result.code})` });
    return { status, gatewayMessageId: null };
  }
  throw ApplicationFailure.create({
    message: `${result.message} (provider code ${result.code})`, type: 'ProviderTransient',
    nextRetryDelay: result.retryAfterSeconds ? `${result.retryAfterSeconds} seconds` : undefined,
  });
}

/** Asks the provider where an SMS stands when no receipt came; records what it says. */
export async function pollOnce(deps: MessageDeps, messageId: number): Promise<MessageStatus> {
  const msg = await loadMessage(deps, messageId);
  if (!msg?.gateway_message_id || msg.channel_type !== 'sms') return msg?.status ?? 'failed';
  const res = await deps.sms.fetchStatus(msg.gateway_message_id);
  if (!res.ok) {
    if (res.permanent) return msg.status;
    throw ApplicationFailure.create({ message: res.message, type: 'ProviderTransient' });
  }
  const mapped = mapSmsProviderStatus(res.value.status);
  if (!mapped) return msg.status;
  return moveStatus(deps.orm, messageId, mapped, mapped === 'failed' ? { errorMessage: `Delivery failed (provider code ${res.value.errorCode ?? 'unknown'})` } : {});
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

/** Twilio-style statuses to ours; interim ones (queued, sending, accepted) change nothing. */
export function mapSmsProviderStatus(s: string): MessageStatus | null {
  switch (s) {
    case 'sent': return 'sent';
    case 'delivered': return 'delivered';
    case 'read': return 'read';
    case 'undelivered': case 'failed': case 'canceled': return 'failed';
    default: return null;
  }
}

export type MessageActivities = ReturnType<typeof createMessageActivities>;
