import { defineOperation, type Operation } from '../operation.js';
import { deletedSchema, listSchema } from '../answers.js';
import { numericId } from '../../services/platform/ids.js';
import { operationRunSchema } from '../../services/automations/operations.js';
import {
  createSubscription,
  listSubscriptionsOf,
  setSubscriptionActive,
  deleteSubscription,
  createOperation,
  listOperations,
  deleteOperation,
  listRuns,
  addSchedule,
  listSchedulesOf,
  removeSchedule,
} from '../../services/automations/settings.js';
import { accountRef } from '../../services/account/index.js';
import { OPERATION_KINDS } from '../../services/automations/operations.js';
import { storableObject } from '../../services/platform/storable.js';
import { destinationUrlSchema } from '../../services/platform/destinations.js';

// Operator interface for automations: event subscriptions, operation definitions, schedules, runs.
const A = '/admin/v1/accounts/{account}';
const base = { tag: 'Settings (operator)', auth: 'operator' } as const;

const url = destinationUrlSchema;
const eventType = {
  type: 'string',
  maxLength: 100,
  pattern: `^(\\*|[a-z][a-z0-9_]*(\\.[a-z][a-z0-9_]*)*(\\.\\*)?)$`,
  description: 'A business event type, a prefix such as order.*, or *',
} as const;
const dateTime = { type: ['string', 'null'], format: 'date-time' } as const;

const subscriptionSchema = {
  type: 'object',
  required: ['id', 'event_type', 'target_url', 'active'],
  properties: {
    id: { type: 'integer' },
    event_type: { type: 'string' },
    target_url: { type: 'string' },
    description: { type: ['string', 'null'] },
    active: { type: 'boolean' },
    created_at: dateTime,
  },
} as const;
const operationSchema = {
  type: 'object',
  required: ['id', 'name', 'kind', 'config', 'active'],
  properties: {
    id: { type: 'integer' },
    name: { type: 'string' },
    kind: { enum: ['send_sms', 'emit_business_event'] },
    config: { type: 'object' },
    description: { type: ['string', 'null'] },
    active: { type: 'boolean' },
    created_at: dateTime,
    updated_at: dateTime,
  },
} as const;
const scheduleSchema = {
  type: 'object',
  required: ['id', 'name', 'operation', 'every_seconds', 'active'],
  properties: {
    id: { type: 'string', format: 'uuid' },
    name: { type: 'string' },
    operation: { type: 'string' },
    input: { type: 'object' },
    every_seconds: { type: 'integer' },
    active: { type: 'boolean' },
    created_at: dateTime,
  },
} as const;

export const automationSettingsOperations: readonly Operation[] = [
  defineOperation({
    ...base,
    name: 'admin_create_automation_subscription',
    method: 'POST',
    path: `${A}/automation-subscriptions`,
    summary: 'Subscribe a URL to business events (X-Svc-Signature secret shown once)',
    body: {
      type: 'object',
      required: ['event_type', 'target_url'],
      additionalProperties: false,
      properties: { event_type: eventType, target_url: url, description: { type: 'string', maxLength: 255 } },
    } as const,
    output: {
      kind: 'resource',
      status: 201,
      description: 'The subscription with its signing secret',
      schema: {
        ...subscriptionSchema,
        required: [...subscriptionSchema.required, 'secret'],
        properties: { ...subscriptionSchema.properties, secret: { type: 'string', description: 'svcsec_…: shown in this answer only' } },
      },
    },
    cli: [{ command: 'subscriptions:create', flags: { url: 'target_url' } }],
    secretInAnswer: true,
    handler: async ({ oc, deps }, { account, ...subscription }) =>
      createSubscription(oc, await accountRef(oc, account), subscription, deps.config),
  }),
  defineOperation({
    ...base,
    name: 'admin_list_automation_subscriptions',
    method: 'GET',
    path: `${A}/automation-subscriptions`,
    summary: 'List automation subscriptions',
    output: { kind: 'list', status: 200, description: 'The subscriptions, secrets hidden', schema: listSchema(subscriptionSchema) },
    cli: [{ command: 'subscriptions:list' }],
    handler: async ({ oc }, { account }) => listSubscriptionsOf(oc, await accountRef(oc, account)),
  }),
  defineOperation({
    ...base,
    name: 'admin_update_automation_subscription',
    method: 'PATCH',
    path: `${A}/automation-subscriptions/{id}`,
    summary: 'Pause or resume a subscription',
    body: { type: 'object', required: ['active'], additionalProperties: false, properties: { active: { type: 'boolean' } } } as const,
    output: { kind: 'resource', status: 200, description: 'The subscription', schema: subscriptionSchema },
    cli: [
      { command: 'subscriptions:pause', help: 'Pause a subscription', fixed: { active: false } },
      { command: 'subscriptions:resume', help: 'Resume a paused subscription', fixed: { active: true } },
    ],
    handler: async ({ oc }, { account, id, active }) =>
      setSubscriptionActive(oc, await accountRef(oc, account), numericId(id, 'Subscription'), active),
  }),
  defineOperation({
    ...base,
    name: 'admin_delete_automation_subscription',
    method: 'DELETE',
    path: `${A}/automation-subscriptions/{id}`,
    summary: 'Delete a subscription',
    output: { kind: 'outcome', status: 200, description: 'Deleted', schema: deletedSchema() },
    cli: [{ command: 'subscriptions:delete' }],
    handler: async ({ oc }, { account, id }) => deleteSubscription(oc, await accountRef(oc, account), numericId(id, 'Subscription')),
  }),
  defineOperation({
    ...base,
    name: 'admin_create_operation',
    method: 'POST',
    path: `${A}/operations`,
    summary: 'Define a named operation (kinds: send_sms, emit_business_event)',
    refusals: { 409: 'An operation with this name already exists in the account' },
    description: "The config is checked against the kind's own schema.",
    body: {
      type: 'object',
      required: ['name', 'kind', 'config'],
      additionalProperties: false,
      properties: {
        name: { type: 'string', pattern: '^[a-z0-9][a-z0-9_-]{0,63}$' },
        kind: { enum: ['send_sms', 'emit_business_event'] },
        config: { type: 'object' },
        description: { type: 'string', maxLength: 255 },
      },
      // The config each kind takes, stated here too so the document admits exactly what is stored.
      allOf: Object.entries(OPERATION_KINDS).map(([kind, s]) => ({
        if: { required: ['kind'], properties: { kind: { const: kind } } },
        then: { properties: { config: s.config } },
      })),
      examples: [{ name: 'order-ready', kind: 'send_sms', config: { message: 'Your order {{order}} is ready.' } }],
    } as const,
    output: { kind: 'resource', status: 201, description: 'The operation definition', schema: operationSchema },
    cli: [{ command: 'operations:create', help: `e.g. --kind send_sms --config '{"message":"Code {{code}}"}'` }],
    handler: async ({ oc }, { account, ...definition }) => createOperation(oc, await accountRef(oc, account), definition),
  }),
  defineOperation({
    ...base,
    name: 'admin_list_operations',
    method: 'GET',
    path: `${A}/operations`,
    summary: 'List operation definitions',
    output: { kind: 'list', status: 200, description: 'The operation definitions', schema: listSchema(operationSchema) },
    cli: [{ command: 'operations:list' }],
    handler: async ({ oc }, { account }) => listOperations(oc, await accountRef(oc, account)),
  }),
  defineOperation({
    ...base,
    name: 'admin_delete_operation',
    method: 'DELETE',
    path: `${A}/operations/{id}`,
    summary: 'Delete an operation definition',
    output: { kind: 'outcome', status: 200, description: 'Deleted', schema: deletedSchema() },
    cli: [{ command: 'operations:delete' }],
    handler: async ({ oc }, { account, id }) => deleteOperation(oc, await accountRef(oc, account), numericId(id, 'Operation')),
  }),
  defineOperation({
    ...base,
    name: 'admin_list_operation_runs',
    method: 'GET',
    path: `${A}/operation-runs`,
    summary: 'Operation runs newest first (100)',
    output: { kind: 'list', status: 200, description: 'The latest runs', schema: listSchema(operationRunSchema) },
    cli: [{ command: 'operations:runs' }],
    handler: async ({ oc }, { account }) => listRuns(oc, await accountRef(oc, account)),
  }),
  defineOperation({
    ...base,
    name: 'admin_create_schedule',
    method: 'POST',
    path: `${A}/schedules`,
    summary: 'Run an operation every N seconds (a Temporal Schedule)',
    body: {
      type: 'object',
      required: ['name', 'operation', 'every_seconds'],
      additionalProperties: false,
      properties: {
        name: { type: 'string', minLength: 1, maxLength: 160 },
        operation: { type: 'string', maxLength: 64, description: 'The name of an operation defined in the account' },
        input: { ...storableObject, description: "The run's input, checked against the operation kind's input schema" },
        every_seconds: { type: 'integer', minimum: 1, maximum: 31_536_000 },
      },
    } as const,
    output: { kind: 'resource', status: 201, description: 'The schedule', schema: scheduleSchema },
    cli: [{ command: 'schedules:create' }],
    handler: async ({ oc, deps }, { account, ...schedule }) => addSchedule(oc, deps, await accountRef(oc, account), schedule),
  }),
  defineOperation({
    ...base,
    name: 'admin_list_schedules',
    method: 'GET',
    path: `${A}/schedules`,
    summary: 'List schedules',
    output: { kind: 'list', status: 200, description: 'The schedules', schema: listSchema(scheduleSchema) },
    cli: [{ command: 'schedules:list' }],
    handler: async ({ oc }, { account }) => listSchedulesOf(oc, await accountRef(oc, account)),
  }),
  defineOperation({
    ...base,
    name: 'admin_delete_schedule',
    method: 'DELETE',
    path: `${A}/schedules/{id}`,
    summary: 'Delete a schedule (and its Temporal Schedule)',
    output: { kind: 'outcome', status: 200, description: 'Deleted', schema: deletedSchema() },
    cli: [{ command: 'schedules:delete', help: 'The id is the schedule UUID' }],
    handler: async ({ oc, deps }, { account, id }) => removeSchedule(oc, deps, await accountRef(oc, account), id),
  }),
];
