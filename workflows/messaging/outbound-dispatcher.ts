import { proxyActivities, continueAsNew, defineQuery, setHandler, sleep, workflowInfo, patched } from '@temporalio/workflow';
import type { DispatchActivities } from '../../activities/messaging/dispatch.js';
import { dispatchTaskQueueOf } from '../../domain/messaging/dispatch-runs.js';

export interface DispatcherInput {
  channelType: 'sms' | 'whatsapp';
  providerTaskQueue: string;
  batchSize: number;
  concurrency: number;
  idleWaitMs: number;
  receiptTimeoutSeconds: number;
  pollWindowSeconds: number;
  /**
   * Which of the channel's dispatcher runs this is (DISPATCH_RUNS of them claim from the same
   * queue); run 0 alone sweeps silent messages. Absent in runs started when there was one.
   */
  run?: number;
  /** Carried across continue-as-new. */
  iteration?: number;
  sent?: number;
  lastSweepAt?: number;
}

export interface DispatcherState {
  iteration: number;
  sent: number;
  lastBatch: number;
  retrying: number;
  lastError: string | null;
}
export const dispatcherStateQuery = defineQuery<DispatcherState>('state');

const RETRY_DELAYS_MS = [1000, 5000, 15000, 60000, 120000];
const ITERATIONS_PER_RUN = 100;
/** How long one streaming dispatch activity runs before it reports back (and the sweep gets a turn). */
const STREAM_SECONDS = 30;

/**
 * Sends the messages queued for batch dispatch (immediate sends under load, campaigns): one activity
 * at a time claims slices and keeps the provider busy for up to STREAM_SECONDS, the workflow retries
 * transient failures with backoff, and now and then sweeps sent messages that got no receipt. Several
 * per channel (DISPATCH_RUNS), running for good and claiming disjoint slices (SKIP LOCKED, a claim tag
 * per run and iteration); their streaming activities share a per-worker slot so that runs spread
 * over workers (domain/messaging/dispatch-runs.ts). The history stays bounded by continue-as-new.
 */
export async function outboundDispatcherWorkflow(input: DispatcherInput): Promise<void> {
  const state: DispatcherState = { iteration: input.iteration ?? 0, sent: input.sent ?? 0, lastBatch: 0, retrying: 0, lastError: null };
  setHandler(dispatcherStateQuery, () => state);
  const claimActs = proxyActivities<DispatchActivities>({
    taskQueue: input.providerTaskQueue,
    startToCloseTimeout: `${Math.ceil(input.idleWaitMs / 1000) + 30} seconds`,
    heartbeatTimeout: '20 seconds',
    retry: { initialInterval: '1 second', maximumInterval: '30 seconds' },
  });
  const sendActs = proxyActivities<DispatchActivities>({
    taskQueue: input.providerTaskQueue,
    startToCloseTimeout: '10 minutes',
    heartbeatTimeout: '60 seconds',
    retry: { initialInterval: '1 second', maximumInterval: '30 seconds' },
  });
  // Runs recorded before several dispatcher runs shared a channel streamed on the provider queue.
  const spread = patched('dispatch-runs');
  const streamActs = proxyActivities<DispatchActivities>({
    taskQueue: spread ? dispatchTaskQueueOf(input.providerTaskQueue) : input.providerTaskQueue,
    startToCloseTimeout: `${STREAM_SECONDS + Math.ceil(input.idleWaitMs / 1000) + 120} seconds`,
    heartbeatTimeout: '30 seconds',
    retry: { initialInterval: '1 second', maximumInterval: '30 seconds' },
  });
  let lastSweepAt = input.lastSweepAt ?? 0;

  // Runs recorded before streaming dispatch claimed a batch per activity; they replay on that path.
  const streaming = patched('streaming-dispatch');
  for (let i = 0; i < ITERATIONS_PER_RUN; i++) {
    const claim = `${workflowInfo().workflowId}:${state.iteration++}`;
    let pending: number[];
    if (streaming) {
      const r = await streamActs.dispatchQueuedMessages({
        channelType: input.channelType,
        claim,
        sliceSize: input.batchSize,
        concurrency: input.concurrency,
        maxSeconds: STREAM_SECONDS,
        idleWaitMs: input.idleWaitMs,
        maxRetry: input.batchSize,
      });
      state.sent += r.sent;
      state.lastBatch = r.sent + r.retry.length;
      state.lastError = r.lastError;
      pending = r.retry;
    } else {
      const ids = await claimActs.claimQueuedMessages({
        channelType: input.channelType,
        limit: input.batchSize,
        waitMs: input.idleWaitMs,
        claim,
      });
      state.lastBatch = ids.length;
      pending = ids;
    }
    // Transient failures: the same messages again, with growing pauses, then failed.
    for (let attempt = streaming ? 1 : 0; pending.length && attempt <= RETRY_DELAYS_MS.length; attempt++) {
      if (attempt > 0) {
        state.retrying = pending.length;
        await sleep(RETRY_DELAYS_MS[attempt - 1]);
      }
      const r = await sendActs.sendMessageBatch({ ids: pending, concurrency: input.concurrency, channelType: input.channelType });
      state.sent += r.sent;
      state.lastError = r.lastError;
      pending = r.retry;
    }
    state.retrying = 0;
    if (pending.length)
      await sendActs.failMessages({ ids: pending, errorMessage: `Provider unavailable: ${state.lastError ?? 'retries exhausted'}` });

    if (input.channelType === 'sms' && (input.run ?? 0) === 0 && Date.now() - lastSweepAt > (input.receiptTimeoutSeconds * 1000) / 2) {
      lastSweepAt = Date.now();
      await sendActs.sweepSilentMessages({ olderThanSeconds: input.receiptTimeoutSeconds, limit: 500 });
      await sendActs.pollCheckingMessages({ limit: 500, maxAgeSeconds: input.receiptTimeoutSeconds + input.pollWindowSeconds });
    }
  }
  await continueAsNew<typeof outboundDispatcherWorkflow>({ ...input, iteration: state.iteration, sent: state.sent, lastSweepAt });
}
