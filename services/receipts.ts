import type { MikroORM } from '@mikro-orm/postgresql';
import type { Client } from '@temporalio/client';
import { mapSmsProviderStatus } from '../domain/message-status.js';
import { moveMessage } from './message-moves.js';
import { messageWorkflowId } from '../temporal/ids.js';
import { receiptSignal } from '../workflows/message.js';

interface ReceiptDeps { orm: MikroORM; temporal: Client }

/**
 * Applies a delivery receipt to the record (forward moves only, so duplicates and late arrivals are
 * harmless) and tells the message workflow, which then stops waiting or polling.
 */
export async function applySmsReceipt(deps: ReceiptDeps, uid: string, params: Record<string, string>): Promise<void> {
  const sid = params.MessageSid ?? params.SmsSid;
  const to = mapSmsProviderStatus(params.MessageStatus ?? params.SmsStatus ?? '');
  if (!to || (!uid && !sid)) return;
  const moved = await moveMessage(deps.orm.em.fork(), uid ? { uid } : { gatewayMessageId: sid }, {
    to, gatewayMessageId: sid,
    errorMessage: to === 'failed' ? `Delivery failed (provider code ${params.ErrorCode ?? 'unknown'})` : undefined,
  });
  // Not ours (or long gone): acknowledged all the same, so the provider stops retrying. Batch-sent
  // messages have no workflow of their own to tell.
  if (!moved || moved.dispatchMode !== 'workflow') return;
  try {
    await deps.temporal.workflow.getHandle(messageWorkflowId(moved.accountId, moved.uid)).signal(receiptSignal, moved.status);
  } catch {
    // The workflow may have finished already (it polled the provider); the record is what counts.
  }
}
