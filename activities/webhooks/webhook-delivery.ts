import type { MikroORM, EntityManager } from '@mikro-orm/postgresql';
import { request, type Agent } from 'undici';
import { exec, many, one } from '../../entities/db.js';
import type { Logger } from '../../logger.js';
import { countWebhookAttempt } from '../../observability/metrics.js';
import { communicationHeaders, automationHeaders } from '../../services/webhooks/signing.js';
import { orderedPayload } from '../../services/webhooks/events.js';
import { businessEnvelope, emitBusinessEvent, type BusinessEventRow } from '../../services/automations/index.js';
import {
  ATTEMPT_TIMEOUT_MS,
  DISABLE_AFTER_FAILED_DELIVERIES,
  DISABLE_AFTER_FAILING_HOURS,
  isDelivered,
} from '../../domain/webhooks/retry.js';
import {
  DESTINATION_NOT_ALLOWED,
  checkDestinationText,
  destinationAgent,
  isDestinationRefusal,
  type DestinationPolicy,
} from '../../services/platform/destinations.js';

export interface WebhookDeps {
  orm: MikroORM;
  log: Logger;
  /** Checked again on every connection: what a name resolves to can change after it was saved. */
  destinations: DestinationPolicy;
  attemptTimeoutMs?: number;
}

/**
 * How much of an answer the delivery log keeps. Enough to read a receiver's error message; too
 * little to use the worker as a reader of other people's pages.
 */
const EXCERPT_CHARS = 256;
const EXCERPT_BYTES = 1024;

/** The start of a body; the rest is not read (the connection is dropped instead). */
async function readExcerpt(body: AsyncIterable<Buffer> & { destroy(): unknown }): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    chunks.push(chunk);
    size += chunk.length;
    if (size >= EXCERPT_BYTES) {
      body.destroy();
      break;
    }
  }
  return Buffer.concat(chunks).subarray(0, EXCERPT_BYTES).toString('utf8').slice(0, EXCERPT_CHARS);
}

export interface DeliveryTarget {
  type: 'endpoint' | 'subscription';
  id: number;
}
export interface DeliveryRef {
  accountId: number;
  eventId: string;
  target: DeliveryTarget;
}

export interface AttemptResult {
  /** skipped: the target is gone or disabled, nothing was sent; gone: the receiver answered 410. */
  outcome: 'succeeded' | 'failed' | 'gone' | 'skipped';
  attemptedAt: string;
  statusCode: number | null;
  latencyMs: number;
  error: string | null;
  responseExcerpt: string | null;
}

export interface Prepared {
  url: string;
  body: string;
  headers: Record<string, string>;
}

/**
 * One signed POST and what came of it. Receiver problems (refusals, timeouts, connection errors)
 * are results, never thrown: whoever owns the delivery decides about retries.
 */
export async function postAttempt(
  deps: { log: Logger; destinations: DestinationPolicy },
  agent: Agent,
  timeoutMs: number,
  ref: DeliveryRef,
  req: Prepared,
  now: Date,
): Promise<AttemptResult> {
  const base = { attemptedAt: now.toISOString(), responseExcerpt: null };
  const refused = () => {
    deps.log.warn({ account: ref.accountId, target: ref.target }, 'webhook destination refused');
    return { ...base, outcome: 'failed' as const, statusCode: null, latencyMs: 0, error: DESTINATION_NOT_ALLOWED };
  };
  // Rows saved before the policy existed, or under a looser one, are judged again here.
  if ('refused' in checkDestinationText(req.url, deps.destinations)) return refused();
  const started = performance.now();
  try {
    // undici's request follows no redirects: a 3xx is logged as the answer, never fetched.
    const res = await request(req.url, {
      method: 'POST',
      headers: req.headers,
      body: req.body,
      dispatcher: agent,
      signal: AbortSignal.timeout(timeoutMs),
    });
    const text = await readExcerpt(res.body).catch(() => '');
    const latencyMs = Math.round(performance.now() - started);
    const ok = isDelivered(res.statusCode);
    return {
      ...base,
      outcome: ok ? 'succeeded' : res.statusCode === 410 ? 'gone' : 'failed',
      statusCode: res.statusCode,
      latencyMs,
      error: ok ? null : `HTTP ${res.statusCode}`,
      responseExcerpt: text || null,
    };
  } catch (err) {
    if (isDestinationRefusal(err)) return refused();
    const e = err as Error & { code?: string; cause?: { code?: string } };
    const timedOut = e.name === 'TimeoutError' || e.name === 'AbortError' || /TIMEOUT/.test(e.code ?? '');
    const code = e.code ?? e.cause?.code;
    const reason = timedOut ? `timed out after ${timeoutMs} ms` : `connection failed${code ? ` (${code})` : ''}`;
    return { ...base, outcome: 'failed', statusCode: null, latencyMs: Math.round(performance.now() - started), error: reason };
  }
}

/** The signed request of a communication callback, from the endpoint's secrets and the stored payload. */
export function endpointRequest(
  ep: { url: string; secret: string; previous_secret: string | null; previous_secret_expires_at: Date | string | null },
  eventId: string,
  payload: Record<string, unknown>,
  now: Date,
): Prepared {
  const body = JSON.stringify(orderedPayload(payload));
  const overlap = ep.previous_secret && ep.previous_secret_expires_at && new Date(ep.previous_secret_expires_at) > now;
  return {
    url: ep.url,
    body,
    headers: communicationHeaders(overlap ? [ep.secret, ep.previous_secret!] : [ep.secret], eventId, body, now),
  };
}

/** The request for one attempt, signed now (a retry gets a fresh timestamp, same webhook-id). */
async function prepare(em: EntityManager, ref: DeliveryRef, now: Date): Promise<Prepared | string> {
  if (ref.target.type === 'endpoint') {
    const ep = await one<{
      url: string;
      secret: string;
      previous_secret: string | null;
      previous_secret_expires_at: Date | null;
      status: string;
    }>(
      em,
      'select url, secret, previous_secret, previous_secret_expires_at, status from webhook_endpoints where id = ? and account_id = ?',
      [ref.target.id, ref.accountId],
    );
    if (!ep) return 'endpoint deleted';
    if (ep.status !== 'active') return 'endpoint disabled';
    const ev = await one<{ payload: Record<string, unknown> }>(em, 'select payload from events where event_id = ? and account_id = ?', [
      ref.eventId,
      ref.accountId,
    ]);
    if (!ev) return 'event not found';
    return endpointRequest(ep, ref.eventId, ev.payload, now);
  }
  const sub = await one<{ target_url: string; secret: string; active: boolean }>(
    em,
    'select target_url, secret, active from automation_subscriptions where id = ? and account_id = ?',
    [ref.target.id, ref.accountId],
  );
  if (!sub) return 'subscription deleted';
  if (!sub.active) return 'subscription inactive';
  const ev = await one<BusinessEventRow>(em, 'select * from business_events where id = ? and account_id = ?', [ref.eventId, ref.accountId]);
  if (!ev) return 'event not found';
  const body = JSON.stringify(businessEnvelope(ev));
  return { url: sub.target_url, body, headers: automationHeaders(sub.secret, ev.id, ev.type, body, now) };
}

export function createWebhookActivities(deps: WebhookDeps) {
  const timeoutMs = deps.attemptTimeoutMs ?? ATTEMPT_TIMEOUT_MS;
  const agent = destinationAgent(deps.destinations, { timeoutMs });
  const api = {
    /**
     * One HTTP attempt. Receiver problems (refusals, timeouts, connection errors) are results, never
     * thrown: the workflow's schedule decides about retries. Only our own database reads throw.
     */
    async sendWebhookAttempt(ref: DeliveryRef): Promise<AttemptResult> {
      const now = new Date();
      const req = await prepare(deps.orm.em.fork(), ref, now);
      const base = { attemptedAt: now.toISOString(), responseExcerpt: null };
      if (typeof req === 'string') return { ...base, outcome: 'skipped', statusCode: null, latencyMs: 0, error: req };
      return postAttempt(deps, agent, timeoutMs, ref, req, now);
    },

    /**
     * Logs the attempt and the delivery's state in one transaction; on a final failure counts it
     * against the endpoint and disables an endpoint that keeps failing. A retry of this activity after
     * a commit finds the attempt already logged and changes nothing.
     */
    async recordWebhookAttempt(
      input: DeliveryRef & { workflowId: string; attempt: number; result: AttemptResult; final: boolean },
    ): Promise<{ disabled: boolean }> {
      return recordAttempt(deps.orm, input);
    },
  };
  return {
    ...api,
    /**
     * One attempt of a delivery: the request, then its log entry. Receiver problems come back as the
     * result; only our own database work throws, and a retry of it re-sends with the same webhook-id.
     */
    async deliverWebhookAttempt(
      input: DeliveryRef & { workflowId: string; attempt: number; final: boolean },
    ): Promise<AttemptResult & { disabled: boolean }> {
      const result = await api.sendWebhookAttempt(input);
      const { disabled } = await api.recordWebhookAttempt({ ...input, result });
      return { ...result, disabled };
    },
  };
}

/**
 * Logs one attempt and the delivery's state in one transaction; on a final failure counts it against
 * the endpoint and disables an endpoint that keeps failing. Run again after a commit, it finds the
 * attempt already logged and changes nothing.
 */
export async function recordAttempt(
  orm: MikroORM,
  input: DeliveryRef & { workflowId: string; attempt: number; result: AttemptResult; final: boolean },
): Promise<{ disabled: boolean }> {
  const { result: r, target } = input;
  const final = input.final || r.outcome !== 'failed';
  const status = r.outcome === 'succeeded' ? 'succeeded' : final ? 'failed' : 'pending';
  return orm.em.fork().transactional(async (tx) => {
    const delivery = await one<{ id: string }>(
      tx,
      `insert into webhook_deliveries (account_id, workflow_id, event_id, target_type, target_id, status, attempts, last_status_code, last_error, created_at, updated_at, completed_at)
       values (?, ?, ?, ?, ?, ?, ?, ?, ?, now(), now(), ${final ? 'now()' : 'null'})
       on conflict (workflow_id) do update set status = excluded.status, attempts = greatest(webhook_deliveries.attempts, excluded.attempts),
         last_status_code = excluded.last_status_code, last_error = excluded.last_error, updated_at = now(), completed_at = excluded.completed_at
       returning id`,
      [input.accountId, input.workflowId, input.eventId, target.type, target.id, status, input.attempt, r.statusCode, r.error],
    );
    const logged = await one(
      tx,
      `insert into delivery_attempts (delivery_id, attempt, attempted_at, status_code, latency_ms, error, response_excerpt) values (?, ?, ?, ?, ?, ?, ?)
       on conflict (delivery_id, attempt) do nothing returning id`,
      [delivery!.id, input.attempt, r.attemptedAt, r.statusCode, r.latencyMs, r.error, r.responseExcerpt],
    );
    if (logged) countWebhookAttempt(r.outcome, final);
    if (!logged || target.type !== 'endpoint' || r.outcome === 'skipped') return { disabled: false };
    if (r.outcome === 'succeeded') {
      await exec(
        tx,
        'update webhook_endpoints set consecutive_failures = 0, failing_since = null where id = ? and (consecutive_failures > 0 or failing_since is not null)',
        [target.id],
      );
      return { disabled: false };
    }
    return countFailure(tx, input.accountId, target.id, r, final);
  });
}

async function countFailure(
  tx: EntityManager,
  accountId: number,
  endpointId: number,
  r: AttemptResult,
  final: boolean,
): Promise<{ disabled: boolean }> {
  const ep = await one<{ consecutive_failures: number; failing_hours: number }>(
    tx,
    `update webhook_endpoints set failing_since = coalesce(failing_since, ?), consecutive_failures = consecutive_failures + ?, updated_at = now()
      where id = ? returning consecutive_failures, extract(epoch from now() - failing_since) / 3600 as failing_hours`,
    [r.attemptedAt, final ? 1 : 0, endpointId],
  );
  if (!ep || !final) return { disabled: false };
  const reason =
    r.outcome === 'gone'
      ? 'The receiver answered 410 Gone.'
      : ep.consecutive_failures >= DISABLE_AFTER_FAILED_DELIVERIES
        ? `${ep.consecutive_failures} deliveries in a row failed after every retry.`
        : Number(ep.failing_hours) >= DISABLE_AFTER_FAILING_HOURS
          ? `No attempt succeeded for ${DISABLE_AFTER_FAILING_HOURS} hours.`
          : null;
  if (!reason) return { disabled: false };
  const off = await many<{ id: number; url: string }>(
    tx,
    `update webhook_endpoints set status = 'disabled', disabled_reason = ?, disabled_at = now() where id = ? and status = 'active' returning id, url`,
    [reason, endpointId],
  );
  // The account is told through its business-event log (and any automation subscribed to it).
  if (off.length)
    await emitBusinessEvent(
      tx,
      accountId,
      'webhook.endpoint_disabled',
      { endpoint_id: endpointId, url: off[0].url, reason, last_error: r.error },
      'webhooks',
    );
  return { disabled: off.length > 0 };
}

export type WebhookActivities = ReturnType<typeof createWebhookActivities>;
