import { Context } from '@temporalio/activity';
import { throttledHeartbeat } from '../heartbeat.js';
import { many, manyPlanned } from '../../entities/db.js';
import { ATTEMPT_TIMEOUT_MS } from '../../domain/webhooks/retry.js';
import { destinationAgent } from '../../services/platform/destinations.js';
import { startDelivery } from '../../services/webhooks/dispatch.js';
import { endpointRequest, postAttempt, recordAttempt, type AttemptResult, type DeliveryRef, type WebhookDeps } from './webhook-delivery.js';
import { countWebhookAttempt } from '../../observability/metrics.js';
import { processStopping } from '../../services/platform/shutdown.js';
import { lingeringWriter } from '../../services/platform/group-commit.js';

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

interface ClaimedRow {
  id: string;
  account_id: number;
  workflow_id: string;
  event_id: string;
  target_id: number;
  claimed_until: Date;
  url: string | null;
  secret: string;
  previous_secret: string | null;
  previous_secret_expires_at: Date | null;
  endpoint_status: string | null;
  payload: Record<string, unknown> | null;
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
    return lingeringWriter<{ row: ClaimedRow; r: AttemptResult }>(async (batch) => {
      await deps.orm.em.fork().transactional(async (tx) => {
        // Only rows still waiting for their first attempt: a row a retry workflow has taken
        // over (a re-claim after a lost lease) is that workflow's to log.
        await many(
          tx,
          `with s as (select * from unnest(?::bigint[], ?::timestamptz[], ?::int[], ?::int[], ?::text[]) as s(id, at, code, ms, excerpt)),
              done as (update webhook_deliveries d set status = 'succeeded', attempts = 1, last_status_code = s.code, last_error = null,
                              updated_at = now(), completed_at = now(), claimed_until = null
                         from s where d.id = s.id and d.status = 'pending' and d.attempts = 0 returning d.id)
         insert into delivery_attempts (delivery_id, attempt, attempted_at, status_code, latency_ms, error, response_excerpt)
         select s.id, 1, s.at, s.code, s.ms, null, s.excerpt from s join done on done.id = s.id
         on conflict (delivery_id, attempt) do nothing`,
          [
            batch.map((b) => b.row.id),
            batch.map((b) => b.r.attemptedAt),
            batch.map((b) => b.r.statusCode),
            batch.map((b) => b.r.latencyMs),
            batch.map((b) => b.r.responseExcerpt),
          ],
        );
        // One success resets an endpoint's failure count, as for an attempt of a retry workflow.
        await many(
          tx,
          `update webhook_endpoints set consecutive_failures = 0, failing_since = null
          where id = any(?::int[]) and (consecutive_failures > 0 or failing_since is not null)`,
          [[...new Set(batch.map((b) => b.row.target_id))]],
        );
      });
      countWebhookAttempt('succeeded', true, batch.length);
    });
  }

  /**
   * Claims up to `limit` queued first attempts with a lease, with what signing them needs, in one
   * statement (asked several times a second while deliveries flow: planned once per connection).
   */
  const claim = (limit: number, leaseSeconds: number) =>
    manyPlanned<ClaimedRow>(
      deps.orm.em.fork(),
      `with picked as (
         select id from webhook_deliveries
          where status = 'pending' and attempts = 0 and target_type = 'endpoint' and (claimed_until is null or claimed_until < now())
          order by id limit ? for update skip locked),
       claimed as (
         update webhook_deliveries d set claimed_until = now() + make_interval(secs => ?)
           from picked where d.id = picked.id
         returning d.id, d.account_id, d.workflow_id, d.event_id, d.target_id, d.claimed_until)
       select c.*, w.url, w.secret, w.previous_secret, w.previous_secret_expires_at, w.status as endpoint_status, e.payload
         from claimed c
         left join webhook_endpoints w on w.id = c.target_id and w.account_id = c.account_id
         left join events e on e.event_id = c.event_id and e.account_id = c.account_id
        order by c.id`,
      [limit, leaseSeconds],
    );

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
      let queue: ClaimedRow[] = [];
      let idleSince = Date.now();
      let refilling: Promise<void> | null = null;
      let emptyAt = 0;
      let emptyWaitMs = 0;
      let exhausted = false;
      let failure: unknown = null;
      const late: ClaimedRow[] = [];
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
      const attempt = async (row: ClaimedRow) => {
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
              endpointRequest(row as ClaimedRow & { url: string }, row.event_id, row.payload!, now),
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
        await recordAttempt(deps.orm, { ...ref, workflowId: row.workflow_id, attempt: 1, result: r, final: true });
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
        await many(deps.orm.em.fork(), `update webhook_deliveries set claimed_until = null where id = any(?::bigint[]) and attempts = 0`, [
          unsent.map((r) => r.id),
        ]);
      return out;
    },
  };
}

export type WebhookDispatchActivities = ReturnType<typeof createWebhookDispatchActivities>;
