import { defineEntity, p } from '@mikro-orm/core';
import { createdAt, timestamps } from './columns.js';

// The account's business-event log (contract: business events use UUIDs). `seq` orders the log so
// it pages backward by `before=<uuid>`; `dispatched_at` makes the log the outbox of automation
// subscription callbacks as well.
export const BusinessEvent = defineEntity({
  name: 'BusinessEvent',
  tableName: 'business_events',
  properties: {
    id: p.uuid().primary(),
    seq: p.bigint('string').autoincrement().unique(),
    accountId: p.integer(),
    type: p.string().length(100),
    data: p.json<Record<string, unknown>>(),
    /** false: the source is reconciled later (payments), so receivers must still poll. */
    live: p.boolean().default(true),
    source: p.string().length(64).nullable(),
    occurredAt: p.datetime(),
    dispatchedAt: p.datetime().nullable(),
  },
  indexes: [
    { properties: ['accountId', 'seq'] },
    {
      name: 'business_events_undispatched_index',
      expression: `create index "business_events_undispatched_index" on "business_events" ("seq") where "dispatched_at" is null`,
    },
  ],
});

// Event subscriptions of automations (numeric ids, as the contract says), set up by the operator.
export const AutomationSubscription = defineEntity({
  name: 'AutomationSubscription',
  tableName: 'automation_subscriptions',
  properties: {
    id: p.integer().primary().autoincrement(),
    accountId: p.integer().index(),
    eventType: p.string().length(100),
    targetUrl: p.text(),
    secret: p.string().length(100),
    description: p.string().length(255).nullable(),
    active: p.boolean().default(true),
    createdAt: createdAt(),
  },
});

// A named operation a person defined in Settings; API keys may only run it.
export const OperationDefinition = defineEntity({
  name: 'OperationDefinition',
  tableName: 'operation_definitions',
  properties: {
    id: p.integer().primary().autoincrement(),
    accountId: p.integer(),
    name: p.string().length(64),
    kind: p.enum(['send_sms', 'emit_business_event']),
    config: p.json<Record<string, unknown>>(),
    description: p.string().length(255).nullable(),
    active: p.boolean().default(true),
    ...timestamps(),
  },
  uniques: [{ properties: ['accountId', 'name'] }],
});

export const OperationRun = defineEntity({
  name: 'OperationRun',
  tableName: 'operation_runs',
  properties: {
    id: p.uuid().primary(),
    accountId: p.integer(),
    operationId: p.integer(),
    operationName: p.string().length(64),
    input: p.json<Record<string, unknown>>(),
    status: p.enum(['queued', 'running', 'succeeded', 'failed']).default('queued'),
    source: p.string().length(64),
    result: p.json<Record<string, unknown>>().nullable(),
    error: p.text().nullable(),
    createdAt: createdAt(),
    finishedAt: p.datetime().nullable(),
  },
  indexes: [
    { properties: ['accountId', 'createdAt'] },
    // The start-gap repair looks for queued runs whose workflow may never have started.
    {
      name: 'operation_runs_queued_index',
      expression: `create index "operation_runs_queued_index" on "operation_runs" ("created_at") where "status" = 'queued'`,
    },
  ],
});

// A recurring run of an operation, kept as a Temporal Schedule with the same id.
export const AutomationSchedule = defineEntity({
  name: 'AutomationSchedule',
  tableName: 'automation_schedules',
  properties: {
    id: p.uuid().primary(),
    accountId: p.integer().index(),
    name: p.string().length(160),
    operationName: p.string().length(64),
    input: p.json<Record<string, unknown>>(),
    everySeconds: p.integer(),
    active: p.boolean().default(true),
    createdAt: createdAt(),
  },
});
