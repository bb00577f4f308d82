import { defineEntity, p } from '@mikro-orm/core';
import { timestamps } from './columns.js';

// A customer's receiver for communication callbacks. The signing secret must stay readable (an HMAC
// needs it), so it is stored as is and shown to the operator once; the previous secret keeps signing
// until previous_secret_expires_at so receivers can rotate without a gap.
export const WebhookEndpoint = defineEntity({
  name: 'WebhookEndpoint',
  tableName: 'webhook_endpoints',
  properties: {
    id: p.integer().primary().autoincrement(),
    accountId: p.integer().index(),
    url: p.text(),
    description: p.string().length(255).nullable(),
    /** Event kinds or `prefix.*` patterns; `*` is every kind. */
    events: p.json<string[]>(),
    secret: p.string().length(100),
    previousSecret: p.string().length(100).nullable(),
    previousSecretExpiresAt: p.datetime().nullable(),
    status: p.enum(['active', 'disabled']).default('active'),
    /** Deliveries that exhausted every retry since the last successful attempt. */
    consecutiveFailures: p.integer().default(0),
    /** First failed attempt since the last successful one. */
    failingSince: p.datetime().nullable(),
    disabledReason: p.text().nullable(),
    disabledAt: p.datetime().nullable(),
    ...timestamps(),
  },
});

/** A callback payload as receivers get it: flat, the envelope fields first, then the kind's own fields. */
export type EventPayload = { event_id: string; event: string; occurred_at: string } & Record<string, unknown>;

// The transactional outbox: written in the same transaction as the change it reports; the relay in
// the worker turns undispatched rows into delivery workflows.
export const OutboxEvent = defineEntity({
  name: 'OutboxEvent',
  tableName: 'events',
  properties: {
    id: p.bigint('string').primary().autoincrement(),
    eventId: p.string().length(40).unique(),
    accountId: p.integer(),
    kind: p.string().length(64),
    payload: p.json<EventPayload>(),
    occurredAt: p.datetime(),
    dispatchedAt: p.datetime().nullable(),
  },
  indexes: [
    { properties: ['accountId', 'id'] },
    {
      name: 'events_undispatched_index',
      expression: `create index "events_undispatched_index" on "events" ("id") where "dispatched_at" is null`,
    },
  ],
});

// One delivery: an event (communication evt_… or business-event uuid) to one target (a webhook
// endpoint or an automation subscription). `workflow_id` names it, and is the id of the durable
// workflow that owns it once a first attempt failed. Endpoint deliveries are queued here by the
// relay (attempts 0) and their first attempt is made in batches by the webhook dispatcher, which
// leases a row until `claimed_until`: a claim whose worker died becomes claimable again.
export const WebhookDelivery = defineEntity({
  name: 'WebhookDelivery',
  tableName: 'webhook_deliveries',
  properties: {
    id: p.bigint('string').primary().autoincrement(),
    accountId: p.integer(),
    workflowId: p.string().length(255).unique(),
    eventId: p.string().length(64).index(),
    targetType: p.enum(['endpoint', 'subscription']),
    targetId: p.integer(),
    status: p.enum(['pending', 'succeeded', 'failed']).default('pending'),
    attempts: p.integer().default(0),
    lastStatusCode: p.integer().nullable(),
    lastError: p.text().nullable(),
    ...timestamps(),
    completedAt: p.datetime().nullable(),
    claimedUntil: p.datetime().nullable(),
  },
  indexes: [
    { properties: ['accountId', 'targetType', 'targetId', 'id'] },
    {
      name: 'webhook_deliveries_first_attempt_index',
      expression: `create index "webhook_deliveries_first_attempt_index" on "webhook_deliveries" ("id") where "status" = 'pending' and "attempts" = 0`,
    },
  ],
});

// Every HTTP attempt of a delivery, readable by the operator: what receivers ask for most.
export const DeliveryAttempt = defineEntity({
  name: 'DeliveryAttempt',
  tableName: 'delivery_attempts',
  properties: {
    id: p.bigint('string').primary().autoincrement(),
    deliveryId: p.bigint('string'),
    attempt: p.integer(),
    attemptedAt: p.datetime(),
    statusCode: p.integer().nullable(),
    latencyMs: p.integer(),
    error: p.text().nullable(),
    responseExcerpt: p.text().nullable(),
  },
  uniques: [{ properties: ['deliveryId', 'attempt'] }],
});
