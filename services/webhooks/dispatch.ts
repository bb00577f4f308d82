import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import type { EntityManager } from '@mikro-orm/postgresql';
import { exec, many } from '../../entities/db.js';
import { startWorkflow } from '../../temporal/starters.js';
import type { WebhookDeliveryInput } from '../../workflows/webhooks/webhook-delivery.js';
import { webhookDeliveryStarter, webhookDeliveryWorkflowId } from '../../workflows/webhooks/webhook-delivery.starter.js';
import type { WebhookDispatcherInput } from '../../workflows/webhooks/webhook-dispatcher.js';
import { webhookDispatcherStarter, WEBHOOK_DISPATCHERS } from '../../workflows/webhooks/webhook-dispatcher.starter.js';
import { matchesFilter } from './events.js';

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

const marks = (n: number) => Array.from({ length: n }, () => '?').join(',');

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
    const rows = await many<{ id: string; event_id: string; account_id: number; kind: string }>(
      tx,
      'select id, event_id, account_id, kind from events where dispatched_at is null order by id limit ? for update skip locked',
      [limit],
    );
    if (!rows.length) return 0;
    const accounts = [...new Set(rows.map((r) => r.account_id))];
    const endpoints = await many<{ id: number; account_id: number; events: string[] }>(
      tx,
      `select id, account_id, events from webhook_endpoints where status = 'active' and account_id in (${marks(accounts.length)})`,
      accounts,
    );
    const queued = rows.flatMap((r) =>
      endpoints
        .filter((e) => e.account_id === r.account_id && matchesFilter(e.events, r.kind))
        .map((e) => ({ accountId: r.account_id, eventId: r.event_id, endpointId: e.id })),
    );
    if (queued.length)
      await exec(
        tx,
        `insert into webhook_deliveries (account_id, workflow_id, event_id, target_type, target_id, status, attempts, created_at, updated_at)
         select q.account_id, q.workflow_id, q.event_id, 'endpoint', q.endpoint_id, 'pending', 0, now(), now()
           from unnest(?::int[], ?::text[], ?::text[], ?::int[]) as q(account_id, workflow_id, event_id, endpoint_id)
         on conflict (workflow_id) do nothing`,
        [
          queued.map((q) => q.accountId),
          queued.map((q) => webhookDeliveryWorkflowId(q.accountId, q.eventId, q.endpointId)),
          queued.map((q) => q.eventId),
          queued.map((q) => q.endpointId),
        ],
      );
    await exec(tx, 'update events set dispatched_at = now() where id = any(?::bigint[])', [rows.map((r) => r.id)]);
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

/** The same for business events and automation subscriptions (`*`, `prefix.*` or an exact type). */
export async function relayBusinessEvents(em: EntityManager, deps: DispatchDeps, limit = 500): Promise<number> {
  return em.transactional(async (tx) => {
    const rows = await many<{ id: string; account_id: number; type: string }>(
      tx,
      'select id, account_id, type from business_events where dispatched_at is null order by seq limit ? for update skip locked',
      [limit],
    );
    if (!rows.length) return 0;
    const accounts = [...new Set(rows.map((r) => r.account_id))];
    const subs = await many<{ id: number; account_id: number; event_type: string }>(
      tx,
      `select id, account_id, event_type from automation_subscriptions where active and account_id in (${marks(accounts.length)})`,
      accounts,
    );
    const starts = rows.flatMap((r) =>
      subs
        .filter((s) => s.account_id === r.account_id && matchesFilter([s.event_type], r.type))
        .map((s) => ({ accountId: r.account_id, eventId: r.id, target: { type: 'subscription' as const, id: s.id } })),
    );
    await inPool(starts, 32, (input) => startDelivery(deps, input));
    await exec(
      tx,
      `update business_events set dispatched_at = now() where id in (${marks(rows.length)})`,
      rows.map((r) => r.id),
    );
    return rows.length;
  });
}
