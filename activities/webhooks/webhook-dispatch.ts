import { Context } from '@temporalio/activity';
import { throttledHeartbeat } from '../heartbeat.js';
import { ATTEMPT_TIMEOUT_MS } from '../../domain/webhooks/retry.js';
import { destinationAgent } from '../../services/platform/destinations.js';
import { startDelivery } from '../../services/webhooks/dispatch.js';
import { endpointRequest, postAttempt, recordAttempt, type AttemptResult, type DeliveryRef, type WebhookDeps } from './webhook-delivery.js';
import { countWebhookAttempt } from '../../observability/metrics.js';
import { processStopping } from '../../services/platform/shutdown.js';
import { lingeringWriter } from '../../services/platform/group-commit.js';
import { claimFirstAttempts, logFirstSuccesses, releaseClaims, type ClaimedDelivery } from '../../services/webhooks/store/deliveries.js';
import { clearEndpointFailures } from '../../services/webhooks/store/endpoints.js';

export interface DispatchWebhooksInput {
  /** Deliveries claimed per statement. */
  sliceSize: number;
  /** POSTs in flight at once (one keep-alive agent per worker process). */
  concurrency: number;
  /** How long a claim is ours; a claim whose worker died is claimable again after it. */
  leaseSeconds: number;
  /** The activity returns after this long (the workflow's loop and history get a turn). */
  maxSeconds: number;
  /** The activity returns once no work came for this long. */
  idleWaitMs: number;
  /** Where the retry workflows of failed first attempts run (the dispatcher's own queue). */
  taskQueue: string;
}

export interface DispatchWebhooksResult {
  attempted: number;
  succeeded: number;
  /** First attempts that failed: each is now owned by its durable retry workflow. */
  handedOver: number;
  lastError: string | null;
}

/**
 * A row is posted only while at least this much of its lease is left: past the lease another worker
 * may have claimed it, and a POST started now could still be running when the lease ends.
 */
const LEASE_MARGIN_MS = ATTEMPT_TIMEOUT_MS + 5_000;

/**
 * The first attempt of queued endpoint deliveries, in batches: the relay queues one
 * `webhook_deliveries` row per (event, endpoint) (attempts 0); the dispatcher claims them with a
 * lease, POSTs them from a bounded pool, logs successes set-based, and hands each failed first
 * attempt to its durable retry workflow (same id the delivery has always had). A worker dying
 * between claim and POST leaves the lease to run out; the row is then claimed again and sent with
 * the same webhook-id, which receivers dedupe on (at least once, never lost).
 */
export function createWebhookDispatchActivities(deps: WebhookDeps) {
  const timeoutMs = deps.attemptTimeoutMs ?? ATTEMPT_TIMEOUT_MS;
  const agent = destinationAgent(deps.destinations, { timeoutMs });

  /** Successful first attempts, written a batch at a time while the next ones gather (group commit). */
  function successWriter() {
    return lingeringWriter<{ row: ClaimedDelivery; r: AttemptResult }>(async (batch) => {
      await deps.orm.em.fork().transactional(async (tx) => {
        await logFirstSuccesses(tx, {
          ids: batch.map((b) => b.row.id),
          at: batch.map((b) => b.r.attemptedAt),
          codes: batch.map((b) => b.r.statusCode),
          latencies: batch.map((b) => b.r.latencyMs),
          excerpts: batch.map((b) => b.r.responseExcerpt),
        });
        // One success resets an endpoint's failure count, as for an attempt of a retry workflow.
        await clearEndpointFailures(tx, [...new Set(batch.map((b) => b.row.target_id))]);
      });
      countWebhookAttempt('succeeded', true, batch.length);
    });
  }

  const claim = (limit: number, leaseSeconds: number) => claimFirstAttempts(deps.orm.em.fork(), limit, leaseSeconds);

  return {
    /**
     * Runs first attempts until `maxSeconds` pass or no work came for `idleWaitMs`. Safe to retry
     * and to run on several workers at once: claims are leased rows (SKIP LOCKED), successes are
     * logged only on rows still waiting, and a retry workflow's id refuses a second start.
     */
    async dispatchWebhookDeliveries(input: DispatchWebhooksInput): Promise<DispatchWebhooksResult> {
      const ctx = Context.current();
      const client = ctx.client;
      const retryDeps = { temporal: client, config: { webhookTaskQueue: input.taskQueue } };
      const beat = throttledHeartbeat();
      const writer = successWriter();
      const until = Date.now() + input.maxSeconds * 1000;
      const out: DispatchWebhooksResult = { attempted: 0, succeeded: 0, handedOver: 0, lastError: null };
      let queue: ClaimedDelivery[] = [];
      let idleSince = Date.now();
      let refilling: Promise<void> | null = null;
      let emptyAt = 0;
      let emptyWaitMs = 0;
      let exhausted = false;
      let failure: unknown = null;
      const late: ClaimedDelivery[] = [];
      const stopping = () => Date.now() >= until || ctx.cancellationSignal.aborted || processStopping.aborted;
      // A few rows beyond the pool: enough that no sender waits for a claim, few enough that a
      // claimed row is posted long before its lease ends.
      const sliceSize = Math.min(input.sliceSize, input.concurrency * 2);
      const refill = async () => {
        try {
          const rows = await claim(sliceSize, input.leaseSeconds);
          if (rows.length) {
            queue = queue.concat(rows);
            idleSince = Date.now();
            emptyWaitMs = 0;
          } else {
            emptyAt = Date.now();
            // An empty queue is asked again after 50 ms, doubling to 400 ms while it stays empty.
            emptyWaitMs = Math.min(Math.max(emptyWaitMs * 2, 50), 400);
          }
        } catch (err) {
          failure = err;
        }
        refilling = null;
      };
      const attempt = async (row: ClaimedDelivery) => {
        const ref: DeliveryRef = { accountId: row.account_id, eventId: row.event_id, target: { type: 'endpoint', id: row.target_id } };
        const now = new Date();
        const skip = !row.url
          ? 'endpoint deleted'
          : row.endpoint_status !== 'active'
            ? 'endpoint disabled'
            : !row.payload
              ? 'event not found'
              : null;
        const r: AttemptResult = skip
          ? { outcome: 'skipped', attemptedAt: now.toISOString(), statusCode: null, latencyMs: 0, error: skip, responseExcerpt: null }
          : await postAttempt(
              deps,
              agent,
              timeoutMs,
              ref,
              endpointRequest(row as ClaimedDelivery & { url: string }, row.event_id, row.payload!, now),
              now,
            );
        out.attempted++;
        if (r.outcome === 'succeeded') {
          out.succeeded++;
          writer.add({ row, r });
          return;
        }
        out.lastError = r.error;
        if (r.outcome === 'failed') {
          // The durable schedule takes over from here; the workflow logs this attempt as its first.
          await startDelivery(retryDeps, { ...ref, firstAttempt: r });
          out.handedOver++;
          return;
        }
        // Gone (410) or skipped: final at once, logged like any last attempt (a 410 disables the endpoint).
        await recordAttempt(deps, { ...ref, workflowId: row.workflow_id, attempt: 1, result: r, final: true });
      };
      await Promise.all(
        Array.from({ length: input.concurrency }, async () => {
          for (;;) {
            if (failure) throw failure;
            if (queue.length < input.concurrency && !refilling && !stopping() && Date.now() - emptyAt >= emptyWaitMs) refilling = refill();
            if (!queue.length) {
              if (refilling) {
                await refilling;
                continue;
              }
              if (stopping() || exhausted || Date.now() - idleSince >= input.idleWaitMs) {
                exhausted = true;
                return;
              }
              beat(out);
              await new Promise((r) => setTimeout(r, 50));
              continue;
            }
            // A worker shutting down stops here; what it claimed and did not post is released below.
            if (ctx.cancellationSignal.aborted) return;
            const row = queue.shift()!;
            // Too little lease left to be sure no other worker claims it meanwhile: leave it.
            if (new Date(row.claimed_until).getTime() - Date.now() < LEASE_MARGIN_MS) {
              late.push(row);
              continue;
            }
            // Our own failure (the database, Temporal): every loop stops, the activity is retried, and
            // this row's lease runs out so it is claimed again (same webhook-id).
            await attempt(row).catch((err: unknown) => {
              failure ??= err;
            });
            beat(out);
          }
        }),
      );
      await writer.drain();
      // Claimed but not posted (a stop, or too little lease left): claimable again at once.
      const unsent = [...queue, ...late];
      if (unsent.length)
        await releaseClaims(
          deps.orm.em.fork(),
          unsent.map((r) => r.id),
        );
      return out;
    },
  };
}

export type WebhookDispatchActivities = ReturnType<typeof createWebhookDispatchActivities>;
