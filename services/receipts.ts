import type { MikroORM } from '@mikro-orm/postgresql';
import type { Client } from '@temporalio/client';
import { one } from '../entities/db.js';
import { moveStatus, mapSmsProviderStatus } from '../activities/messages.js';
import { messageWorkflowId } from '../temporal/ids.js';
import { receiptSignal } from '../workflows/message.js';

interface ReceiptDeps { orm: MikroORM; temporal: Client }

/**
 * Applies a delivery receipt to the record (forward moves only, so duplicates and late arrivals are
 * harmless) and tells the message workflow, which then stops waiting or polling.
 */
export async function applySmsReceipt(deps: ReceiptDeps, uid: string, params: Record<string, string>): Promise<void> {
  const em = deps.orm.em.fork();
  const sid = params.MessageSid ?? params.SmsSid;
  const msg = uid
    ? await one<{ id: string; uid: string; account_id: number; dispatch_mode: string }>(em, 'select id, uid, account_id, dispatch_mode from messages where uid = ?', [uid])
    : await one<{ id: string; uid: string; account_id: number; dispatch_mode: string }>(em, 'select id, uid, account_id, dispatch_mode from messages where gateway_message_id = ?', [sid]);
  if (!msg) return; // not ours (or long gone): acknowledge so the provider stops retrying
  const to = mapSmsProviderStatus(params.MessageStatus ?? params.SmsStatus ?? '');
  if (!to) return;
  const status = await moveStatus(deps.orm, Number(msg.id), to, {
    gatewayMessageId: sid,
    errorMessage: to === 'failed' ? `Delivery failed (provider code ${params.ErrorCode ?? 'unknown'})` : undefined,
  });
  // Batch-sent messages have no workflow of their own to tell.
  if (msg.dispatch_mode !== 'workflow') return;
  try {
    await deps.temporal.workflow.getHandle(messageWorkflowId(msg.account_id, msg.uid)).signal(receiptSignal, status);
  } catch {
    // The workflow may have finished already (it polled the provider); the record is what counts.
  }
}
