import { many, one } from '../../entities/db.js';
import { conflict, notFound, validationFailed } from '../platform/errors.js';
import type { OperatorContext } from '../platform/context.js';
import { assertDestinationAllowed, type DestinationPolicy } from '../platform/destinations.js';
import { requireAccount } from '../account/index.js';
import { newWebhookSecret } from './signing.js';
import { isEventFilter, matchesFilter, orderedPayload } from './events.js';
import { startDelivery, type DispatchDeps } from './dispatch.js';
import { webhookDeliveryWorkflowId } from '../../temporal/ids.js';
import { iso } from '../platform/time.js';

// Webhook endpoints of an account, kept by the operator ("Settings"). Secrets leave the service
// only in the answer of create and rotate; every other view shows a hint.
export interface EndpointRow {
  id: number;
  account_id: number;
  url: string;
  description: string | null;
  events: string[];
  secret: string;
  status: 'active' | 'disabled';
  previous_secret_expires_at: Date | null;
  consecutive_failures: number;
  failing_since: Date | null;
  disabled_reason: string | null;
  disabled_at: Date | null;
  created_at: Date;
  updated_at: Date;
}
interface DeliveryRow {
  id: string | number;
  event_id: string;
  target_id: number;
  workflow_id: string;
  status: string;
  attempts: number;
  last_status_code: number | null;
  last_error: string | null;
  created_at: Date;
  completed_at: Date | null;
  attempt_log: unknown[];
}

export const endpointView = (r: EndpointRow) => ({
  id: r.id,
  account_id: r.account_id,
  url: r.url,
  description: r.description,
  events: r.events,
  status: r.status,
  secret_hint: `${String(r.secret).slice(0, 10)}…`,
  previous_secret_expires_at: iso(r.previous_secret_expires_at),
  consecutive_failures: r.consecutive_failures,
  failing_since: iso(r.failing_since),
  disabled_reason: r.disabled_reason,
  disabled_at: iso(r.disabled_at),
  created_at: iso(r.created_at),
  updated_at: iso(r.updated_at),
});

function checkFilters(events: readonly string[] | undefined) {
  const bad = (events ?? []).filter((e) => !isEventFilter(e));
  if (bad.length)
    throw validationFailed({ events: [`Unknown event kinds: ${bad.join(', ')}. Use a kind, a prefix such as message.*, or *.`] });
}

export async function createEndpoint(
  oc: OperatorContext,
  accountId: number,
  b: { url: string; events?: readonly string[]; description?: string },
  policy: DestinationPolicy,
) {
  await requireAccount(oc, accountId);
  checkFilters(b.events);
  await assertDestinationAllowed(b.url, policy, 'url');
  const secret = newWebhookSecret();
  const row = await one<EndpointRow>(
    oc.em,
    `insert into webhook_endpoints (account_id, url, description, events, secret, status, consecutive_failures, created_at, updated_at)
     values (?, ?, ?, ?, ?, 'active', 0, now(), now()) returning *`,
    [accountId, b.url, b.description ?? null, JSON.stringify(b.events ?? ['*']), secret],
  );
  oc.log.info({ actor: 'operator', account: accountId, endpoint: row!.id }, 'webhook endpoint created');
  return { ...endpointView(row!), secret };
}

export async function listEndpoints(oc: OperatorContext, accountId: number) {
  await requireAccount(oc, accountId);
  return (await many<EndpointRow>(oc.em, 'select * from webhook_endpoints where account_id = ? order by id', [accountId])).map(
    endpointView,
  );
}

async function endpointRow(oc: OperatorContext, accountId: number, id: number): Promise<EndpointRow> {
  const row = await one<EndpointRow>(oc.em, 'select * from webhook_endpoints where id = ? and account_id = ?', [id, accountId]);
  if (!row) throw notFound('Webhook endpoint');
  return row;
}

export const getEndpoint = async (oc: OperatorContext, accountId: number, id: number) => endpointView(await endpointRow(oc, accountId, id));

/** The delivery log stays readable after the endpoint is gone. */
export async function deleteEndpoint(oc: OperatorContext, accountId: number, id: number): Promise<{ deleted: true }> {
  const row = await one(oc.em, 'delete from webhook_endpoints where id = ? and account_id = ? returning id', [id, accountId]);
  if (!row) throw notFound('Webhook endpoint');
  oc.log.info({ actor: 'operator', account: accountId, endpoint: id }, 'webhook endpoint deleted');
  return { deleted: true };
}

/** Re-enabling clears the failure history, so the endpoint starts with a clean slate. */
export async function updateEndpoint(
  oc: OperatorContext,
  accountId: number,
  id: number,
  b: { url?: string; events?: readonly string[]; description?: string | null; status?: 'active' | 'disabled' },
  policy: DestinationPolicy,
) {
  checkFilters(b.events);
  if (b.url !== undefined) await assertDestinationAllowed(b.url, policy, 'url');
  await endpointRow(oc, accountId, id);
  const sets: string[] = [];
  const params: unknown[] = [];
  if (b.url !== undefined) {
    sets.push('url = ?');
    params.push(b.url);
  }
  if (b.events !== undefined) {
    sets.push('events = ?');
    params.push(JSON.stringify(b.events));
  }
  if (b.description !== undefined) {
    sets.push('description = ?');
    params.push(b.description);
  }
  if (b.status === 'active')
    sets.push(`status = 'active', consecutive_failures = 0, failing_since = null, disabled_reason = null, disabled_at = null`);
  if (b.status === 'disabled')
    sets.push(
      `status = 'disabled', disabled_reason = coalesce(disabled_reason, 'Disabled by the operator.'), disabled_at = coalesce(disabled_at, now())`,
    );
  const row = await one<EndpointRow>(
    oc.em,
    `update webhook_endpoints set ${[...sets, 'updated_at = now()'].join(', ')} where id = ? and account_id = ? returning *`,
    [...params, id, accountId],
  );
  return endpointView(row!);
}

/** A new current secret; the old one keeps signing (second signature) until the overlap ends. */
export async function rotateSecret(oc: OperatorContext, accountId: number, id: number, overlapHours = 24) {
  await endpointRow(oc, accountId, id);
  const secret = newWebhookSecret();
  // Typed casts: compared with the literal 0, an untyped parameter was read as an integer, and any
  // fractional overlap (0.5 hours) was a 500.
  const keepsOld = overlapHours > 0;
  const row = await one<EndpointRow>(
    oc.em,
    `update webhook_endpoints set previous_secret = case when ?::boolean then secret else null end, previous_secret_expires_at = case when ?::boolean then now() + make_interval(secs => ?::float8) else null end,
            secret = ?, updated_at = now() where id = ? and account_id = ? returning *`,
    [keepsOld, keepsOld, overlapHours * 3600, secret, id, accountId],
  );
  oc.log.info({ actor: 'operator', account: accountId, endpoint: id, overlap_hours: overlapHours }, 'webhook secret rotated');
  return { ...endpointView(row!), secret };
}

export async function listDeliveries(
  oc: OperatorContext,
  accountId: number,
  q: { event_id?: string; endpoint_id?: number; status?: string; limit?: number },
) {
  await requireAccount(oc, accountId);
  const where = [`d.account_id = ?`, `d.target_type = 'endpoint'`];
  const params: unknown[] = [accountId];
  if (q.event_id) {
    where.push('d.event_id = ?');
    params.push(q.event_id);
  }
  if (q.endpoint_id) {
    where.push('d.target_id = ?');
    params.push(q.endpoint_id);
  }
  if (q.status) {
    where.push('d.status = ?');
    params.push(q.status);
  }
  const rows = await many<DeliveryRow>(
    oc.em,
    `select d.*, coalesce((select json_agg(json_build_object('attempt', a.attempt, 'attempted_at', a.attempted_at, 'status_code', a.status_code, 'latency_ms', a.latency_ms,
                                                             'error', a.error, 'response_excerpt', a.response_excerpt) order by a.attempt)
                            from delivery_attempts a where a.delivery_id = d.id), '[]') as attempt_log
       from webhook_deliveries d where ${where.join(' and ')} order by d.id desc limit ?`,
    [...params, q.limit ?? 20],
  );
  return rows.map((d) => ({
    id: Number(d.id),
    event_id: d.event_id,
    endpoint_id: d.target_id,
    workflow_id: d.workflow_id,
    status: d.status,
    attempts: d.attempts,
    last_status_code: d.last_status_code,
    last_error: d.last_error,
    created_at: iso(d.created_at),
    completed_at: iso(d.completed_at),
    attempt_log: d.attempt_log,
  }));
}

/** Recorded callback events, newest first, each as its receivers got it plus when it was dispatched. */
export async function listEvents(oc: OperatorContext, accountId: number, q: { kind?: string; limit?: number }) {
  await requireAccount(oc, accountId);
  const rows = await many<{ payload: Record<string, unknown>; dispatched_at: Date | null }>(
    oc.em,
    `select payload, dispatched_at from events where account_id = ? ${q.kind ? 'and kind = ?' : ''} order by id desc limit ?`,
    [accountId, ...(q.kind ? [q.kind] : []), q.limit ?? 20],
  );
  return rows.map((r) => ({ ...orderedPayload(r.payload), dispatched_at: iso(r.dispatched_at) }));
}

/**
 * Sends a stored event again (same event_id, signed with the current secret) to one endpoint or to
 * every active endpoint whose filter matches. Each redelivery is a new workflow `…/redeliver-<n>`.
 */
export async function redeliver(oc: OperatorContext, deps: DispatchDeps, accountId: number, eventId: string, endpointId?: number) {
  const em = oc.em;
  const ev = await one<{ kind: string }>(em, 'select kind from events where event_id = ? and account_id = ?', [eventId, accountId]);
  if (!ev) throw notFound('Event');
  const targets =
    endpointId !== undefined
      ? [await endpointRow(oc, accountId, endpointId)]
      : (await many<EndpointRow>(em, `select * from webhook_endpoints where account_id = ? and status = 'active'`, [accountId])).filter(
          (t) => matchesFilter(t.events, ev.kind),
        );
  if (endpointId !== undefined && targets[0].status !== 'active')
    throw conflict('The endpoint is disabled; enable it before redelivering.');
  const out = [];
  for (const t of targets) {
    const done = await one<{ n: string }>(
      em,
      `select count(*) as n from webhook_deliveries where account_id = ? and event_id = ? and target_type = 'endpoint' and target_id = ?`,
      [accountId, eventId, t.id],
    );
    // A redelivery not yet logged holds its number already: step past ids Temporal has seen.
    for (let n = Math.max(1, Number(done!.n)); n < Number(done!.n) + 50; n++) {
      const workflowId = webhookDeliveryWorkflowId(accountId, eventId, t.id, n);
      if (await startDelivery(deps, { accountId, eventId, target: { type: 'endpoint', id: t.id } }, n)) {
        out.push({ endpoint_id: t.id, workflow_id: workflowId });
        break;
      }
    }
  }
  return { event_id: eventId, deliveries: out };
}
