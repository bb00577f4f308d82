import type { EntityManager } from '@mikro-orm/postgresql';
import {
  automationHeaders,
  inPool,
  matchesFilter,
  startDelivery,
  type DispatchDeps,
  type SubscriptionDeliveries,
} from '../webhooks/index.js';
import { businessEnvelope, emitBusinessEvent } from './business-events.js';
import {
  activeSubscriptionsOf,
  businessEventById,
  claimUndispatchedBusinessEvents,
  markBusinessEventsDispatched,
  subscriptionTarget,
} from './store.js';

// Business events delivered to automation subscriptions, through the webhooks family's deliveries
// (the same workflow, retries and log as a communication callback; signed as an automation).

/**
 * One relay pass over the business-event outbox, as relayEvents (services/webhooks/dispatch.ts) does
 * for communication events: the events claimed, one delivery started per matching active
 * subscription (`*`, `prefix.*` or an exact type), the events marked dispatched, in one transaction.
 */
export async function relayBusinessEvents(em: EntityManager, deps: DispatchDeps, limit = 500): Promise<number> {
  return em.transactional(async (tx) => {
    const rows = await claimUndispatchedBusinessEvents(tx, limit);
    if (!rows.length) return 0;
    const accounts = [...new Set(rows.map((r) => r.account_id))];
    const subs = await activeSubscriptionsOf(tx, accounts);
    const starts = rows.flatMap((r) =>
      subs
        .filter((s) => s.account_id === r.account_id && matchesFilter([s.event_type], r.type))
        .map((s) => ({ accountId: r.account_id, eventId: r.id, target: { type: 'subscription' as const, id: s.id } })),
    );
    await inPool(starts, 32, (input) => startDelivery(deps, input));
    await markBusinessEventsDispatched(
      tx,
      rows.map((r) => r.id),
    );
    return rows.length;
  });
}

/** What a webhook delivery asks of automations (wired by the worker: activities/index.ts). */
export const subscriptionDeliveries: SubscriptionDeliveries = {
  async request(em, accountId, subscriptionId, eventId, now) {
    const sub = await subscriptionTarget(em, accountId, subscriptionId);
    if (!sub) return 'subscription deleted';
    if (!sub.active) return 'subscription inactive';
    const ev = await businessEventById(em, accountId, eventId);
    if (!ev) return 'event not found';
    const body = JSON.stringify(businessEnvelope(ev));
    return { url: sub.target_url, body, headers: automationHeaders(sub.secret, ev.id, ev.type, body, now) };
  },
  async endpointDisabled(tx, accountId, fields) {
    await emitBusinessEvent(tx, accountId, 'webhook.endpoint_disabled', fields, 'webhooks');
  },
};
