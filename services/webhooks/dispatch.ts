import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import type { EntityManager } from '@mikro-orm/postgresql';
import { startWorkflow } from '../../temporal/starters.js';
import type { WebhookDeliveryInput } from '../../workflows/webhooks/webhook-delivery.js';
import { webhookDeliveryStarter, webhookDeliveryWorkflowId } from '../../workflows/webhooks/webhook-delivery.starter.js';
import type { WebhookDispatcherInput } from '../../workflows/webhooks/webhook-dispatcher.js';
import { webhookDispatcherStarter, WEBHOOK_DISPATCHERS } from '../../workflows/webhooks/webhook-dispatcher.starter.js';
import { matchesFilter } from './events.js';
import { activeEndpointFilters, claimUndispatchedEvents, markEventsDispatched, queueDeliveries } from './store/outbox.js';

export interface DispatchDeps {
  temporal: Client;
  config: { webhookTaskQueue: string };
}

/**
 * Starts one delivery workflow (`redelivery`: an operator's n-th redelivery to an endpoint); a
 * repeated start of the same id is a no-op (REJECT_DUPLICATE).
 */
export async function startDelivery(deps: DispatchDeps, input: WebhookDeliveryInput, redelivery = 0): Promise<boolean> {
  try {
    await startWorkflow(
      deps,
      webhookDeliveryStarter,
      { accountId: input.accountId, eventId: input.eventId, target: input.target, redelivery },
      [input],
    );
    return true;
  } catch (err) {
    if (err instanceof WorkflowExecutionAlreadyStartedError) return false;
    throw err;
  }
}

/** Runs `fn` over `items` with at most `width` in flight; the first failure rejects the whole pass. */
export async function inPool<T>(items: T[], width: number, fn: (item: T) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(width, items.length) }, async () => {
      while (next < items.length) await fn(items[next++]);
    }),
  );
}

/**
 * One relay pass over the communication outbox: claims up to `limit` undispatched events (SKIP
 * LOCKED, so several workers share the backlog), queues one delivery row per matching active
 * endpoint (`webhook_deliveries`, attempts 0, named by the delivery's workflow id, so a second
 * insert of the same (event, endpoint) is a no-op) and marks the events dispatched, in one
 * transaction. The webhook dispatcher makes the first attempts; a crash anywhere rolls it all back.
 * Passes of 2,000: a pass costs four statements and a commit whatever its size, and at 500 the relay
 * was what held a 20,000-event burst back (bench/webhook-delivery.ts).
 */
export async function relayEvents(em: EntityManager, _deps: DispatchDeps, limit = 2000): Promise<number> {
  return em.transactional(async (tx) => {
    const rows = await claimUndispatchedEvents(tx, limit);
    if (!rows.length) return 0;
    const accounts = [...new Set(rows.map((r) => r.account_id))];
    const endpoints = await activeEndpointFilters(tx, accounts);
    const queued = rows.flatMap((r) =>
      endpoints
        .filter((e) => e.account_id === r.account_id && matchesFilter(e.events, r.kind))
        .map((e) => ({ accountId: r.account_id, eventId: r.event_id, endpointId: e.id })),
    );
    if (queued.length)
      await queueDeliveries(tx, {
        accountIds: queued.map((q) => q.accountId),
        workflowIds: queued.map((q) => webhookDeliveryWorkflowId(q.accountId, q.eventId, q.endpointId)),
        eventIds: queued.map((q) => q.eventId),
        endpointIds: queued.map((q) => q.endpointId),
      });
    await markEventsDispatched(
      tx,
      rows.map((r) => r.id),
    );
    return rows.length;
  });
}

/**
 * Makes sure the webhook dispatchers run (a running one is kept). Leases outlast a POST's 10 s limit
 * with room for the pool's queue; a dead worker's claims are sent again after at most a minute.
 */
export async function startWebhookDispatchers(deps: DispatchDeps): Promise<void> {
  const input: WebhookDispatcherInput = { sliceSize: 200, concurrency: 64, leaseSeconds: 60, idleWaitMs: 5_000 };
  for (let n = 1; n <= WEBHOOK_DISPATCHERS; n++)
    await startWorkflow(deps, webhookDispatcherStarter, { taskQueue: deps.config.webhookTaskQueue, n }, [input]);
}
