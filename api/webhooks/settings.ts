import { defineOperation, type Operation } from '../operation.js';
import { deletedSchema } from '../answers.js';
import { numericId } from '../../services/platform/ids.js';
import {
  createEndpoint,
  listEndpoints,
  getEndpoint,
  updateEndpoint,
  deleteEndpoint,
  rotateSecret,
  listDeliveries,
  listEvents,
  redeliver,
} from '../../services/webhooks/endpoints.js';
import { accountRef } from '../../services/account/index.js';
import { EVENT_FILTERS } from '../../services/webhooks/events.js';
import { destinationUrlSchema } from '../../services/platform/destinations.js';

// Operator interface for webhook endpoints (Settings), their delivery log and redelivery.
const A = '/admin/v1/accounts/{account}';
const E = `${A}/webhook-endpoints` as const;
const base = { tag: 'Settings (operator)', auth: 'operator' } as const;
const endpointId = (ref: string) => numericId(ref, 'Webhook endpoint');

const url = destinationUrlSchema;
const events = {
  type: 'array',
  items: { enum: EVENT_FILTERS },
  minItems: 1,
  maxItems: 50,
  uniqueItems: true,
  description: 'Event kinds, prefixes such as message.*, or *',
} as const;
const limit = { type: 'integer', minimum: 1, maximum: 100, default: 20 } as const;
const nullableDateTime = { type: ['string', 'null'], format: 'date-time' } as const;

const endpointSchema = {
  type: 'object',
  required: ['id', 'account_id', 'url', 'events', 'status', 'secret_hint'],
  properties: {
    id: { type: 'integer' },
    account_id: { type: 'integer' },
    url: { type: 'string' },
    description: { type: ['string', 'null'] },
    events: { type: 'array', items: { type: 'string' } },
    status: { enum: ['active', 'disabled'] },
    secret_hint: { type: 'string' },
    previous_secret_expires_at: nullableDateTime,
    consecutive_failures: { type: 'integer' },
    failing_since: nullableDateTime,
    disabled_reason: { type: ['string', 'null'] },
    disabled_at: nullableDateTime,
    created_at: nullableDateTime,
    updated_at: nullableDateTime,
  },
} as const;
const withSecret = {
  ...endpointSchema,
  required: [...endpointSchema.required, 'secret'],
  properties: {
    ...endpointSchema.properties,
    secret: { type: 'string', description: 'The signing secret (whsec_…): shown in this answer only' },
  },
} as const;
const deliverySchema = {
  type: 'object',
  required: ['id', 'event_id', 'endpoint_id', 'status', 'attempts', 'attempt_log'],
  properties: {
    id: { type: 'integer' },
    event_id: { type: 'string' },
    endpoint_id: { type: 'integer' },
    workflow_id: { type: 'string' },
    status: { enum: ['pending', 'succeeded', 'failed'] },
    attempts: { type: 'integer' },
    last_status_code: { type: ['integer', 'null'] },
    last_error: { type: ['string', 'null'] },
    created_at: nullableDateTime,
    completed_at: nullableDateTime,
    attempt_log: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          attempt: { type: 'integer' },
          attempted_at: { type: 'string' },
          status_code: { type: ['integer', 'null'] },
          latency_ms: { type: 'integer' },
          error: { type: ['string', 'null'] },
          response_excerpt: { type: ['string', 'null'] },
        },
      },
    },
  },
} as const;
const eventSchema = {
  type: 'object',
  required: ['event_id', 'event', 'occurred_at'],
  description: 'The callback payload as receivers got it, plus when it was dispatched',
  properties: { event_id: { type: 'string' }, event: { type: 'string' }, occurred_at: { type: 'string' }, dispatched_at: nullableDateTime },
} as const;

export const webhookSettingsOperations: readonly Operation[] = [
  defineOperation({
    ...base,
    name: 'admin_create_webhook_endpoint',
    method: 'POST',
    path: E,
    summary: 'Create a webhook endpoint (the signing secret is shown once)',
    body: {
      type: 'object',
      required: ['url'],
      additionalProperties: false,
      properties: { url, events, description: { type: 'string', maxLength: 255 } },
    } as const,
    output: { kind: 'resource', status: 201, description: 'The endpoint with its signing secret', schema: withSecret },
    secretInAnswer: true,
    cli: [{ command: 'webhooks:create' }],
    handler: async ({ oc, deps }, { account, ...endpoint }) => createEndpoint(oc, await accountRef(oc, account), endpoint, deps.config),
  }),
  defineOperation({
    ...base,
    name: 'admin_list_webhook_endpoints',
    method: 'GET',
    path: E,
    summary: 'List webhook endpoints',
    output: { kind: 'list', status: 200, description: 'The endpoints, secrets hidden', schema: { type: 'array', items: endpointSchema } },
    cli: [{ command: 'webhooks:list' }],
    handler: async ({ oc }, { account }) => listEndpoints(oc, await accountRef(oc, account)),
  }),
  defineOperation({
    ...base,
    name: 'admin_get_webhook_endpoint',
    method: 'GET',
    path: `${E}/{id}`,
    summary: 'Read a webhook endpoint',
    output: { kind: 'resource', status: 200, description: 'The endpoint', schema: endpointSchema },
    cli: [{ command: 'webhooks:show', flags: { endpoint: 'id' } }],
    handler: async ({ oc }, { account, id }) => getEndpoint(oc, await accountRef(oc, account), endpointId(id)),
  }),
  defineOperation({
    ...base,
    name: 'admin_update_webhook_endpoint',
    method: 'PATCH',
    path: `${E}/{id}`,
    summary: 'Change url, event filter or description; disable or re-enable (clears the failure count)',
    body: {
      type: 'object',
      additionalProperties: false,
      minProperties: 1,
      properties: { url, events, description: { type: ['string', 'null'], maxLength: 255 }, status: { enum: ['active', 'disabled'] } },
    } as const,
    output: { kind: 'resource', status: 200, description: 'The endpoint', schema: endpointSchema },
    cli: [
      {
        command: 'webhooks:update',
        help: 'Change the url, event filter or description',
        fields: ['url', 'events', 'description'],
        flags: { endpoint: 'id' },
      },
      {
        command: 'webhooks:disable',
        help: 'Disable an endpoint: nothing is delivered to it',
        fixed: { status: 'disabled' },
        fields: [],
        flags: { endpoint: 'id' },
      },
      {
        command: 'webhooks:enable',
        help: 'Re-enable an endpoint (clears the failure count)',
        fixed: { status: 'active' },
        fields: [],
        flags: { endpoint: 'id' },
      },
    ],
    handler: async ({ oc, deps }, { account, id, ...changes }) =>
      updateEndpoint(oc, await accountRef(oc, account), endpointId(id), changes, deps.config),
  }),
  defineOperation({
    ...base,
    name: 'admin_delete_webhook_endpoint',
    method: 'DELETE',
    path: `${E}/{id}`,
    summary: 'Delete a webhook endpoint (its delivery log stays readable)',
    output: { kind: 'outcome', status: 200, description: 'Deleted', schema: deletedSchema() },
    cli: [{ command: 'webhooks:delete', flags: { endpoint: 'id' } }],
    handler: async ({ oc }, { account, id }) => deleteEndpoint(oc, await accountRef(oc, account), endpointId(id)),
  }),
  defineOperation({
    ...base,
    name: 'admin_rotate_webhook_secret',
    method: 'POST',
    path: `${E}/{id}/rotate-secret`,
    summary: 'Rotate the signing secret; the old one also signs until the overlap ends (new secret shown once)',
    body: {
      type: 'object',
      additionalProperties: false,
      properties: { overlap_hours: { type: 'number', minimum: 0, maximum: 168, description: 'Default 24; 0 drops the old secret now' } },
    } as const,
    output: { kind: 'resource', status: 200, description: 'The endpoint with its new signing secret', schema: withSecret },
    secretInAnswer: true,
    cli: [{ command: 'webhooks:rotate', flags: { endpoint: 'id' } }],
    handler: async ({ oc }, { account, id, overlap_hours }) =>
      rotateSecret(oc, await accountRef(oc, account), endpointId(id), overlap_hours),
  }),
  defineOperation({
    ...base,
    name: 'admin_list_webhook_deliveries',
    method: 'GET',
    path: `${A}/webhook-deliveries`,
    summary: 'Deliveries newest first, each with its attempt log (time, status code, latency, error)',
    query: {
      type: 'object',
      additionalProperties: false,
      properties: {
        event_id: { type: 'string', maxLength: 64 },
        endpoint_id: { type: 'integer' },
        status: { enum: ['pending', 'succeeded', 'failed'] },
        limit,
      },
    } as const,
    output: { kind: 'list', status: 200, description: 'Deliveries with their attempts', schema: { type: 'array', items: deliverySchema } },
    cli: [{ command: 'webhooks:deliveries', flags: { event: 'event_id', endpoint: 'endpoint_id' } }],
    handler: async ({ oc }, { account, ...filter }) => listDeliveries(oc, await accountRef(oc, account), filter),
  }),
  defineOperation({
    ...base,
    name: 'admin_list_callback_events',
    method: 'GET',
    path: `${A}/events`,
    summary: 'Recorded callback events newest first',
    description:
      "A message's delivery progress (message.sent, message.delivered, message.read) is recorded only when an active endpoint subscribed to it as it happened; otherwise the message itself holds it (status, sent_at, delivered_at, read_at). Every other event is recorded, heard or not.",
    query: { type: 'object', additionalProperties: false, properties: { kind: { type: 'string', maxLength: 64 }, limit } } as const,
    output: { kind: 'list', status: 200, description: 'Events', schema: { type: 'array', items: eventSchema } },
    cli: [{ command: 'events:list' }],
    handler: async ({ oc }, { account, ...filter }) => listEvents(oc, await accountRef(oc, account), filter),
  }),
  defineOperation({
    ...base,
    name: 'admin_redeliver_event',
    method: 'POST',
    path: `${A}/events/{event}/redeliver`,
    summary: 'Redeliver an event (same event_id, current secret) to one endpoint or every matching one',
    body: {
      type: 'object',
      additionalProperties: false,
      properties: { endpoint_id: { type: 'integer', description: 'One endpoint; default every active endpoint whose filter matches' } },
    } as const,
    output: {
      kind: 'outcome',
      status: 202,
      description: 'Redelivery started',
      schema: {
        type: 'object',
        required: ['event_id', 'deliveries'],
        properties: {
          event_id: { type: 'string' },
          deliveries: {
            type: 'array',
            items: { type: 'object', properties: { endpoint_id: { type: 'integer' }, workflow_id: { type: 'string' } } },
          },
        },
      },
    },
    cli: [{ command: 'webhooks:redeliver', flags: { endpoint: 'endpoint_id' } }],
    handler: async ({ oc, deps }, { account, event, endpoint_id }) =>
      redeliver(oc, deps, await accountRef(oc, account), event, endpoint_id),
  }),
];
