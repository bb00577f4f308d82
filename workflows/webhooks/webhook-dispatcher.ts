import { proxyActivities, continueAsNew, defineQuery, setHandler, workflowInfo } from '@temporalio/workflow';
import type { WebhookDispatchActivities, DispatchWebhooksInput } from '../../activities/webhooks/webhook-dispatch.js';

export interface WebhookDispatcherInput {
  sliceSize: number;
  concurrency: number;
  leaseSeconds: number;
  idleWaitMs: number;
  /** Activity runs before continue-as-new (keeps the history short). */
  runsPerExecution?: number;
  /** Carried across continue-as-new. */
  iteration?: number;
  attempted?: number;
  succeeded?: number;
  handedOver?: number;
}

export interface WebhookDispatcherState {
  iteration: number;
  attempted: number;
  succeeded: number;
  handedOver: number;
  lastError: string | null;
}
export const webhookDispatcherStateQuery = defineQuery<WebhookDispatcherState>('state');

/** How long one dispatch activity runs before it reports back. */
const RUN_SECONDS = 30;

/**
 * First attempts of queued webhook deliveries, in batches, running for good: each activity run claims
 * leased slices and keeps a pool of POSTs busy for up to RUN_SECONDS. Failed first attempts start
 * their own durable retry workflow (webhookDeliveryWorkflow) from inside the activity. Several of
 * these may run (ids webhook-dispatcher/<n>); their claims never overlap.
 */
export async function webhookDispatcherWorkflow(input: WebhookDispatcherInput): Promise<void> {
  const state: WebhookDispatcherState = {
    iteration: input.iteration ?? 0,
    attempted: input.attempted ?? 0,
    succeeded: input.succeeded ?? 0,
    handedOver: input.handedOver ?? 0,
    lastError: null,
  };
  setHandler(webhookDispatcherStateQuery, () => state);
  const acts = proxyActivities<WebhookDispatchActivities>({
    startToCloseTimeout: `${RUN_SECONDS + Math.ceil(input.idleWaitMs / 1000) + 60} seconds`,
    heartbeatTimeout: '30 seconds',
    retry: { initialInterval: '1 second', maximumInterval: '30 seconds' },
  });
  const run: DispatchWebhooksInput = {
    sliceSize: input.sliceSize,
    concurrency: input.concurrency,
    leaseSeconds: input.leaseSeconds,
    idleWaitMs: input.idleWaitMs,
    maxSeconds: RUN_SECONDS,
    taskQueue: workflowInfo().taskQueue,
  };
  for (let i = 0; i < (input.runsPerExecution ?? 100); i++) {
    state.iteration++;
    const r = await acts.dispatchWebhookDeliveries(run);
    state.attempted += r.attempted;
    state.succeeded += r.succeeded;
    state.handedOver += r.handedOver;
    state.lastError = r.lastError ?? state.lastError;
  }
  await continueAsNew<typeof webhookDispatcherWorkflow>({
    ...input,
    iteration: state.iteration,
    attempted: state.attempted,
    succeeded: state.succeeded,
    handedOver: state.handedOver,
  });
}
