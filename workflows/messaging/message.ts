import {
  proxyActivities,
  defineSignal,
  defineQuery,
  defineUpdate,
  setHandler,
  condition,
  sleep,
  allHandlersFinished,
  ActivityFailure,
  ApplicationFailure,
  log,
} from '@temporalio/workflow';
import type { MessageActivities } from '../../activities/messaging/messages.js';
import { FINAL_STATUSES, type MessageStatus } from '../../domain/messaging/message-status.js';

export interface MessageWorkflowInput {
  accountId: number;
  messageId: number;
  uid: string;
  channelType: 'sms' | 'whatsapp';
  /** Task queue of the rate-limited provider workers for this channel (admission control). */
  providerTaskQueue: string;
  /** ISO time; a future value holds the message as queued until then. */
  sendAt: string | null;
  receiptTimeoutSeconds: number;
  deliveryPollSeconds: number;
  deliveryPollAttempts: number;
}

export interface MessageWorkflowState {
  status: MessageStatus;
  gatewayMessageId: string | null;
  dispatched: boolean;
  pollsLeft: number;
}

/** A provider receipt seen by the API ingress (already written to the record). */
export const receiptSignal = defineSignal<[MessageStatus]>('receipt');
export const stateQuery = defineQuery<MessageWorkflowState>('state');
/** Answers once the provider has answered, or after `waitMs`, whichever comes first. */
export const firstOutcomeUpdate = defineUpdate<MessageWorkflowState, [number]>('firstOutcome');

const db = proxyActivities<MessageActivities>({
  startToCloseTimeout: '15 seconds',
  retry: { initialInterval: '500 milliseconds', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 50 },
});

/** One outbound message: wait until due, hand it to the provider, then follow it to a final status. */
export async function messageWorkflow(input: MessageWorkflowInput): Promise<MessageWorkflowState> {
  const state: MessageWorkflowState = {
    status: 'queued',
    gatewayMessageId: null,
    dispatched: false,
    pollsLeft: input.deliveryPollAttempts,
  };
  const provider = proxyActivities<MessageActivities>({
    taskQueue: input.providerTaskQueue,
    // A send waiting for a rate-limited provider slot is admission control, not a failure: allow it time.
    scheduleToStartTimeout: '1 hour',
    startToCloseTimeout: '30 seconds',
    retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '2 minutes', maximumAttempts: 12 },
  });
  setHandler(stateQuery, () => state);
  setHandler(receiptSignal, (status) => {
    state.status = status;
  });
  setHandler(firstOutcomeUpdate, async (waitMs) => {
    if (waitMs > 0) await condition(() => state.dispatched, waitMs);
    return state;
  });

  if (input.sendAt) {
    const wait = Date.parse(input.sendAt) - Date.now();
    if (wait > 0) await sleep(wait);
  }

  try {
    const outcome = await provider.dispatchMessage({ messageId: input.messageId });
    state.gatewayMessageId = outcome.gatewayMessageId;
    if (!FINAL_STATUSES.includes(state.status)) state.status = outcome.status;
  } catch (err) {
    // Retries ran out on a transient provider problem, or the message can never be sent (its channel
    // names no provider we have, it is malformed): the record must not stay in processing, and its
    // reason says which of the two it was.
    const cause = err instanceof ActivityFailure ? err.cause : undefined;
    const reason = cause ? cause.message : String(err);
    const unsendable = cause instanceof ApplicationFailure && cause.nonRetryable;
    log.warn('dispatch gave up', { uid: input.uid, reason, unsendable });
    state.status = await db.markMessageFailed({
      messageId: input.messageId,
      errorMessage: `${unsendable ? 'Cannot be sent' : 'Provider unavailable'}: ${reason}`,
    });
  }
  state.dispatched = true;
  if (FINAL_STATUSES.includes(state.status)) return finish(state);

  // Most receipts arrive within seconds; when none comes, ask the provider until it settles.
  if (await condition(() => FINAL_STATUSES.includes(state.status), input.receiptTimeoutSeconds * 1000)) return finish(state);
  if (input.channelType === 'whatsapp') return finish(state); // the Cloud API has no status read; receipts are all there is
  state.status = await db.markCheckingDelivery({ messageId: input.messageId });
  while (!FINAL_STATUSES.includes(state.status) && state.pollsLeft > 0) {
    state.pollsLeft -= 1;
    const polled = await provider.pollDeliveryStatus({ messageId: input.messageId });
    if (!FINAL_STATUSES.includes(state.status)) state.status = polled;
    if (FINAL_STATUSES.includes(state.status)) break;
    await condition(() => FINAL_STATUSES.includes(state.status), input.deliveryPollSeconds * 1000);
  }
  return finish(state);
}

/** A first-outcome update still waiting must get its answer before the workflow closes. */
async function finish(state: MessageWorkflowState): Promise<MessageWorkflowState> {
  await condition(allHandlersFinished);
  return state;
}
