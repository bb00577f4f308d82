import { HINTS, defineOperation } from '../operation.js';
import { operationRunSchema, runOperation } from '../../services/automations/operations.js';
import { LIST_CAP, listBusinessEvents, listSubscriptions, listSchedules, getOperationRun } from '../../services/automations/reads.js';
import { noInput, storableObject } from '../../services/platform/storable.js';

// Automation reads (automations.view) and the one operations write. Paths are ours: the contract
// names these reads and the write but leaves their paths and fields open.
export { LIST_CAP };

const envelope = {
  type: 'object',
  required: ['id', 'type', 'occurred_at', 'account_id', 'live', 'data'],
  properties: {
    id: { type: 'string', format: 'uuid' },
    type: { type: 'string' },
    occurred_at: { type: 'string' },
    account_id: { type: 'integer' },
    live: { type: 'boolean' },
    source: { type: ['string', 'null'] },
    data: { type: 'object' },
  },
} as const;

const base = { tag: 'Automations', auth: 'rest', permission: 'automations.view' } as const;
const mcpAutomations = { servers: ['automations'], scope: 'mcp:automations', annotations: HINTS.read } as const;

export const automationOperations = [
  defineOperation({
    ...base,
    name: 'list_automation_events',
    method: 'GET',
    path: '/api/v3/automations/events',
    summary: 'The business-event log, newest first, paged backward',
    description: 'Pass next_before back as before for the next (older) page. An unknown before restarts at the newest page.',
    query: {
      type: 'object',
      additionalProperties: false,
      properties: {
        before: { type: 'string', format: 'uuid' },
        limit: { type: 'integer', minimum: 1, maximum: 100, default: 25 },
        type: { type: 'string', maxLength: 100 },
      },
    },
    output: {
      kind: 'list',
      status: 200,
      description: 'A page of events',
      schema: {
        type: 'object',
        required: ['events', 'next_before', 'has_more'],
        properties: {
          events: { type: 'array', items: envelope },
          next_before: { type: ['string', 'null'] },
          has_more: { type: 'boolean' },
        },
      },
    },
    mcp: mcpAutomations,
    // The query schema's default fills limit in.
    handler: async ({ rc }, q) => listBusinessEvents(rc, { ...q, limit: q.limit ?? 25 }),
  }),
  defineOperation({
    ...base,
    name: 'list_automation_subscriptions',
    method: 'GET',
    path: '/api/v3/automations/subscriptions',
    summary: `Event subscriptions (at most ${LIST_CAP}, oldest first, no pagination)`,
    query: noInput,
    output: {
      kind: 'list',
      status: 200,
      description: 'Subscriptions',
      schema: {
        type: 'object',
        required: ['subscriptions'],
        properties: { subscriptions: { type: 'array', maxItems: LIST_CAP, items: { type: 'object' } } },
      },
    },
    mcp: mcpAutomations,
    handler: async ({ rc }) => ({ subscriptions: await listSubscriptions(rc) }),
  }),
  defineOperation({
    ...base,
    name: 'list_automation_schedules',
    method: 'GET',
    path: '/api/v3/automations/schedules',
    summary: `Schedules (at most ${LIST_CAP}, oldest first, no pagination)`,
    query: noInput,
    output: {
      kind: 'list',
      status: 200,
      description: 'Schedules',
      schema: {
        type: 'object',
        required: ['schedules'],
        properties: { schedules: { type: 'array', maxItems: LIST_CAP, items: { type: 'object' } } },
      },
    },
    mcp: mcpAutomations,
    handler: async ({ rc }) => ({ schedules: await listSchedules(rc) }),
  }),
  defineOperation({
    name: 'run_operation',
    method: 'POST',
    path: '/api/v3/operations/{name}/run',
    tag: 'Operations',
    auth: 'rest',
    issuerRequired: true,
    summary: 'Run a named operation defined in Settings',
    description:
      'Answers 202 with the run; the run itself is a workflow. Poll GET /api/v3/operations/runs/{run}. Unknown or inactive names answer 404; input is checked against the operation kind (422).',
    body: { type: 'object', additionalProperties: false, properties: { input: storableObject } },
    output: { kind: 'resource', status: 202, description: 'Accepted', schema: operationRunSchema },
    mcp: {
      servers: ['operations', 'automations'],
      scope: 'mcp:operations',
      elevation: 'mcp:automate',
      annotations: HINTS.send,
    },
    handler: async ({ rc, deps }, { name, input }) => runOperation(rc, deps, name, input ?? {}),
  }),
  defineOperation({
    ...base,
    tag: 'Operations',
    name: 'get_operation_run',
    method: 'GET',
    path: '/api/v3/operations/runs/{run}',
    summary: 'Read an operation run',
    query: noInput,
    output: { kind: 'resource', status: 200, description: 'The run', schema: operationRunSchema },
    mcp: { servers: ['operations', 'automations'], scope: 'mcp:operations', annotations: HINTS.read },
    handler: async ({ rc }, { run: ref }) => getOperationRun(rc, ref),
  }),
];
