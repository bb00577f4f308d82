import { conflict, notFound, validationFailed } from '../platform/errors.js';
import type { OperatorContext } from '../platform/context.js';
import { assertDestinationAllowed, type DestinationPolicy } from '../platform/destinations.js';
import { requireAccount } from '../account/index.js';
import { newWebhookSecret } from './signing.js';
import { isEventFilter, matchesFilter, orderedPayload } from './events.js';
import { startDelivery, type DispatchDeps } from './dispatch.js';
import { webhookDeliveryWorkflowId } from '../../temporal/ids.js';
import { iso } from '../platform/time.js';
import {
  activeEndpointsOf,
  deleteEndpointRow,
  endpointById,
  endpointsOf,
  insertEndpoint,
  rotateEndpointSecret,
  updateEndpointRow,
  type EndpointView,
} from './store/endpoints.js';
import { deliveriesLogged, deliveriesOf } from './store/deliveries.js';
import { eventKind, latestEvents } from './store/outbox.js';

// Webhook endpoints of an account, kept by the operator ("Settings"). Secrets leave the service
// only in the answer of create and rotate; every other view shows a hint.
export const endpointView = (r: EndpointView) => ({
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
  const row = await insertEndpoint(oc.em, {
    account_id: accountId,
    url: b.url,
    description: b.description ?? null,
    events: [...(b.events ?? ['*'])],
    secret,
  });
  oc.log.info({ actor: 'operator', account: accountId, endpoint: row.id }, 'webhook endpoint created');
  return { ...endpointView(row), secret };
}

export async function listEndpoints(oc: OperatorContext, accountId: number) {
  await requireAccount(oc, accountId);
  return (await endpointsOf(oc.em, accountId)).map(endpointView);
}

async function endpointRow(oc: OperatorContext, accountId: number, id: number): Promise<EndpointView> {
  const row = await endpointById(oc.em, accountId, id);
  if (!row) throw notFound('Webhook endpoint');
  return row;
}

export const getEndpoint = async (oc: OperatorContext, accountId: number, id: number) => endpointView(await endpointRow(oc, accountId, id));

/** The delivery log stays readable after the endpoint is gone. */
export async function deleteEndpoint(oc: OperatorContext, accountId: number, id: number): Promise<{ deleted: true }> {
  if (!(await deleteEndpointRow(oc.em, accountId, id))) throw notFound('Webhook endpoint');
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
  const row = await updateEndpointRow(oc.em, accountId, id, b);
  return endpointView(row!);
}

/** A new current secret; the old one keeps signing (second signature) until the overlap ends. */
export async function rotateSecret(oc: OperatorContext, accountId: number, id: number, overlapHours = 24) {
  await endpointRow(oc, accountId, id);
  const secret = newWebhookSecret();
  const row = await rotateEndpointSecret(oc.em, accountId, id, secret, overlapHours);
  oc.log.info({ actor: 'operator', account: accountId, endpoint: id, overlap_hours: overlapHours }, 'webhook secret rotated');
  return { ...endpointView(row!), secret };
}

export async function listDeliveries(
  oc: OperatorContext,
  accountId: number,
  q: { event_id?: string; endpoint_id?: number; status?: string; limit?: number },
) {
  await requireAccount(oc, accountId);
  const rows = await deliveriesOf(oc.em, accountId, { ...q, limit: q.limit ?? 20 });
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
  const rows = await latestEvents(oc.em, accountId, { kind: q.kind, limit: q.limit ?? 20 });
  return rows.map((r) => ({ ...orderedPayload(r.payload), dispatched_at: iso(r.dispatched_at) }));
}

/**
 * Sends a stored event again (same event_id, signed with the current secret) to one endpoint or to
 * every active endpoint whose filter matches. Each redelivery is a new workflow `…/redeliver-<n>`.
 */
export async function redeliver(oc: OperatorContext, deps: DispatchDeps, accountId: number, eventId: string, endpointId?: number) {
  const em = oc.em;
  const kind = await eventKind(em, accountId, eventId);
  if (kind === null) throw notFound('Event');
  const targets =
    endpointId !== undefined
      ? [await endpointRow(oc, accountId, endpointId)]
      : (await activeEndpointsOf(em, accountId)).filter((t) => matchesFilter(t.events, kind));
  if (endpointId !== undefined && targets[0].status !== 'active')
    throw conflict('The endpoint is disabled; enable it before redelivering.');
  const out = [];
  for (const t of targets) {
    const done = await deliveriesLogged(em, accountId, eventId, t.id);
    // A redelivery not yet logged holds its number already: step past ids Temporal has seen.
    for (let n = Math.max(1, done); n < done + 50; n++) {
      const workflowId = webhookDeliveryWorkflowId(accountId, eventId, t.id, n);
      if (await startDelivery(deps, { accountId, eventId, target: { type: 'endpoint', id: t.id } }, n)) {
        out.push({ endpoint_id: t.id, workflow_id: workflowId });
        break;
      }
    }
  }
  return { event_id: eventId, deliveries: out };
}
