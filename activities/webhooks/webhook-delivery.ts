import type { MikroORM, EntityManager } from '@mikro-orm/postgresql';
import { request, type Agent } from 'undici';
import type { Logger } from '../../logger.js';
import { countWebhookAttempt } from '../../observability/metrics.js';
import { communicationHeaders } from '../../services/webhooks/signing.js';
import { orderedPayload, type EventPayload } from '../../services/webhooks/events.js';
import type { SubscriptionDeliveries } from '../../services/webhooks/subscriptions.js';
import { clearEndpointFailure, countEndpointFailure, disableEndpoint, endpointSigning } from '../../services/webhooks/store/endpoints.js';
import { eventPayload } from '../../services/webhooks/store/outbox.js';
import { logAttempt, upsertDelivery } from '../../services/webhooks/store/deliveries.js';
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
  /** The automation subscriptions these deliveries also carry (services/automations, wired by activities/index.ts). */
  subscriptions: SubscriptionDeliveries;
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
  payload: EventPayload,
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
async function prepare(em: EntityManager, subscriptions: SubscriptionDeliveries, ref: DeliveryRef, now: Date): Promise<Prepared | string> {
  if (ref.target.type === 'endpoint') {
    const ep = await endpointSigning(em, ref.accountId, ref.target.id);
    if (!ep) return 'endpoint deleted';
    if (ep.status !== 'active') return 'endpoint disabled';
    const payload = await eventPayload(em, ref.accountId, ref.eventId);
    if (!payload) return 'event not found';
    return endpointRequest(ep, ref.eventId, payload, now);
  }
  return subscriptions.request(em, ref.accountId, ref.target.id, ref.eventId, now);
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
      const req = await prepare(deps.orm.em.fork(), deps.subscriptions, ref, now);
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
      return recordAttempt(deps, input);
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
  deps: Pick<WebhookDeps, 'orm' | 'subscriptions'>,
  input: DeliveryRef & { workflowId: string; attempt: number; result: AttemptResult; final: boolean },
): Promise<{ disabled: boolean }> {
  const { result: r, target } = input;
  const final = input.final || r.outcome !== 'failed';
  const status = r.outcome === 'succeeded' ? 'succeeded' : final ? 'failed' : 'pending';
  return deps.orm.em.fork().transactional(async (tx) => {
    const delivery = await upsertDelivery(tx, {
      account_id: input.accountId,
      workflow_id: input.workflowId,
      event_id: input.eventId,
      target_type: target.type,
      target_id: target.id,
      status,
      attempts: input.attempt,
      last_status_code: r.statusCode,
      last_error: r.error,
      final,
    });
    const logged = await logAttempt(tx, {
      delivery_id: delivery!.id,
      attempt: input.attempt,
      attempted_at: r.attemptedAt,
      status_code: r.statusCode,
      latency_ms: r.latencyMs,
      error: r.error,
      response_excerpt: r.responseExcerpt,
    });
    if (logged) countWebhookAttempt(r.outcome, final);
    if (!logged || target.type !== 'endpoint' || r.outcome === 'skipped') return { disabled: false };
    if (r.outcome === 'succeeded') {
      await clearEndpointFailure(tx, target.id);
      return { disabled: false };
    }
    return countFailure(tx, deps.subscriptions, input.accountId, target.id, r, final);
  });
}

async function countFailure(
  tx: EntityManager,
  subscriptions: SubscriptionDeliveries,
  accountId: number,
  endpointId: number,
  r: AttemptResult,
  final: boolean,
): Promise<{ disabled: boolean }> {
  const ep = await countEndpointFailure(tx, endpointId, r.attemptedAt, final);
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
  const off = await disableEndpoint(tx, endpointId, reason);
  // The account is told through its business-event log (and any automation subscribed to it).
  if (off) await subscriptions.endpointDisabled(tx, accountId, { endpoint_id: endpointId, url: off.url, reason, last_error: r.error });
  return { disabled: off !== null };
}

export type WebhookActivities = ReturnType<typeof createWebhookActivities>;
