import { proxyActivities, defineSignal, defineQuery, setHandler, condition, sleep, ActivityFailure, log } from '@temporalio/workflow';
import type { MessageActivities } from '../activities/messages.js';
import { FINAL_STATUSES, type MessageStatus } from '../domain/message-status.js';

export interface MessageWorkflowInput {
  accountId: number;
  messageId: number;
  uid: string;
  /** ISO time; a future value holds the message as queued until then. */
  sendAt: string | null;
  receiptTimeoutSeconds: number;
  deliveryPollSeconds: number;
  deliveryPollAttempts: number;
}

export interface MessageWorkflowState { status: MessageStatus; gatewayMessageId: string | null; pollsLeft: number }

/** A provider receipt seen by the API ingress (already written to the record). */
export const receiptSignal = defineSignal<[MessageStatus]>('receipt');
export const stateQuery = defineQuery<MessageWorkflowState>('state');

const provider = proxyActivities<MessageActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '2 minutes', maximumAttempts: 12 },
});
const db = proxyActivities<MessageActivities>({
  startToCloseTimeout: '15 seconds',
  retry: { initialInterval: '500 milliseconds', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 50 },
});

/** One outbound message: wait until due, hand it to the provider, then follow it to a final status. */
export async function messageWorkflow(input: MessageWorkflowInput): Promise<MessageWorkflowState> {
  const state: MessageWorkflowState = { status: 'queued', gatewayMessageId: null, pollsLeft: input.deliveryPollAttempts };
  setHandler(stateQuery, () => state);
  setHandler(receiptSignal, (status) => { state.status = status; });

  if (input.sendAt) {
    const wait = Date.parse(input.sendAt) - Date.now();
    if (wait > 0) await sleep(wait);
  }

  try {
    const outcome = await provider.dispatchMessage({ messageId: input.messageId });
    state.gatewayMessageId = outcome.gatewayMessageId;
    if (!FINAL_STATUSES.includes(state.status)) state.status = outcome.status;
  } catch (err) {
    // Retries ran out on a transient provider problem: the record must not stay in processing.
    const reason = err instanceof ActivityFailure && err.cause ? err.cause.message : String(err);
    log.warn('dispatch gave up', { uid: input.uid, reason });
    state.status = await db.markMessageFailed({ messageId: input.messageId, errorMessage: `Provider unavailable: ${reason}` });
    return state;
  }
  if (FINAL_STATUSES.includes(state.status)) return state;

  // Most receipts arrive within seconds; when none comes, ask the provider until it settles.
  if (await condition(() => FINAL_STATUSES.includes(state.status), input.receiptTimeoutSeconds * 1000)) return state;
  state.status = await db.markCheckingDelivery({ messageId: input.messageId });
  while (!FINAL_STATUSES.includes(state.status) && state.pollsLeft > 0) {
    state.pollsLeft -= 1;
    const polled = await provider.pollDeliveryStatus({ messageId: input.messageId });
    if (!FINAL_STATUSES.includes(state.status)) state.status = polled;
    if (FINAL_STATUSES.includes(state.status)) break;
    await condition(() => FINAL_STATUSES.includes(state.status), input.deliveryPollSeconds * 1000);
  }
  return state;
}
