import { proxyLocalActivities, sleep, workflowInfo } from '@temporalio/workflow';
import type { WebhookActivities, DeliveryTarget, AttemptResult } from '../../activities/webhooks/webhook-delivery.js';
import { COMMUNICATION_RETRY_SECONDS, AUTOMATION_RETRY_SECONDS } from '../../domain/webhooks/retry.js';

export interface WebhookDeliveryInput {
  accountId: number;
  /** evt_… (communication callback) or a business-event uuid (automation callback). */
  eventId: string;
  target: DeliveryTarget;
  /** Seconds to wait after each failed attempt; defaults to the target's contract schedule. */
  retryDelaysSeconds?: number[];
  /**
   * The failed first attempt the batch dispatcher made (webhook-dispatcher.ts): this workflow logs
   * it as attempt 1 and goes on with the schedule's first delay. Absent: attempt 1 is made here.
   */
  firstAttempt?: AttemptResult;
}

export interface WebhookDeliveryResult {
  status: 'succeeded' | 'failed';
  attempts: number;
  lastStatusCode: number | null;
  lastError: string | null;
}

// Each attempt is a local activity (the request and its log entry), so a delivery costs the server
// a workflow start, a few workflow tasks and its timers, not activity round trips. Receiver
// failures are results, never thrown: the schedule below is their retry policy. The small policy
// here covers our own database work only (a retry re-sends with the same webhook-id).
const act = proxyLocalActivities<WebhookActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '10 seconds', maximumAttempts: 5 },
});

/**
 * One event to one receiver: the first attempt at once (or the dispatcher's, handed over), then one attempt after each delay of the
 * schedule (durable timers), until a 2xx. Every attempt is logged; the last failure marks the
 * delivery failed. A disabled or deleted target, or a 410 Gone, ends it early.
 */
export async function webhookDeliveryWorkflow(input: WebhookDeliveryInput): Promise<WebhookDeliveryResult> {
  const delays = input.retryDelaysSeconds ?? (input.target.type === 'endpoint' ? COMMUNICATION_RETRY_SECONDS : AUTOMATION_RETRY_SECONDS);
  const ref = { accountId: input.accountId, eventId: input.eventId, target: input.target };
  const { workflowId } = workflowInfo();
  let last: AttemptResult | null = null;
  let from = 1;
  if (input.firstAttempt) {
    last = input.firstAttempt;
    const final = delays.length === 0;
    await act.recordWebhookAttempt({ ...ref, workflowId, attempt: 1, result: last, final });
    if (final) return { status: 'failed', attempts: 1, lastStatusCode: last.statusCode, lastError: last.error };
    await sleep(delays[0] * 1000);
    from = 2;
  }
  for (let attempt = from; attempt <= delays.length + 1; attempt++) {
    const final = attempt === delays.length + 1;
    last = await act.deliverWebhookAttempt({ ...ref, workflowId, attempt, final });
    if (last.outcome === 'succeeded') return { status: 'succeeded', attempts: attempt, lastStatusCode: last.statusCode, lastError: null };
    if (last.outcome !== 'failed' || final)
      return { status: 'failed', attempts: attempt, lastStatusCode: last.statusCode, lastError: last.error };
    await sleep(delays[attempt - 1] * 1000);
  }
  throw new Error('unreachable');
}
