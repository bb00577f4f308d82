import type { AppDeps } from '../app.js';
import { successOf, emptyQuery, type RouteDef } from '../registry.js';
import { many, one } from '../../entities/db.js';
import { notFound } from '../errors.js';
import { businessEnvelope, type BusinessEventRow } from '../../services/business-events.js';
import { subscriptionView, scheduleView } from '../../services/admin/automations.js';
import { runOperation, runView, type RunRow } from '../../services/operations.js';

// Automation reads (automations.view) and the one operations write. Paths are ours: the contract
// names these reads and the write but leaves their paths and fields open.
export const LIST_CAP = 100;

const envelope = {
  type: 'object', required: ['id', 'type', 'occurred_at', 'account_id', 'live', 'data'],
  properties: { id: { type: 'string', format: 'uuid' }, type: { type: 'string' }, occurred_at: { type: 'string' }, account_id: { type: 'integer' }, live: { type: 'boolean' }, source: { type: ['string', 'null'] }, data: { type: 'object' } },
};
const run = {
  type: 'object', required: ['run_id', 'operation', 'status'],
  properties: { run_id: { type: 'string', format: 'uuid' }, operation: { type: 'string' }, status: { enum: ['queued', 'running', 'succeeded', 'failed'] }, source: { type: 'string' }, input: { type: 'object' }, result: {}, error: { type: ['string', 'null'] }, created_at: { type: 'string' }, finished_at: { type: ['string', 'null'] } },
};

export function automationRoutes(deps: AppDeps): RouteDef[] {
  const base = { tag: 'Automations', auth: 'rest' as const, permission: 'automations.view', query: emptyQuery };
  return [
    {
      ...base, method: 'GET', path: '/api/v3/automations/events', summary: 'The business-event log, newest first, paged backward',
      description: 'Pass next_before back as before for the next (older) page. An unknown before restarts at the newest page.',
      query: { type: 'object', additionalProperties: false, properties: { before: { type: 'string', format: 'uuid' }, limit: { type: 'integer', minimum: 1, maximum: 100, default: 25 }, type: { type: 'string', maxLength: 100 } } },
      response: { status: 200, description: 'A page of events', schema: successOf({ type: 'object', required: ['events', 'next_before', 'has_more'], properties: { events: { type: 'array', items: envelope }, next_before: { type: ['string', 'null'] }, has_more: { type: 'boolean' } } }) },
      handler: async ({ rc, query }) => {
        const cursor = query.before ? await one<{ seq: string }>(rc.em, 'select seq from business_events where id = ? and account_id = ?', [query.before, rc.account.id]) : null;
        const rows = await many<BusinessEventRow & { seq: string }>(rc.em,
          `select * from business_events where account_id = ? ${cursor ? 'and seq < ?' : ''} ${query.type ? 'and type = ?' : ''} order by seq desc limit ?`,
          [rc.account.id, ...(cursor ? [cursor.seq] : []), ...(query.type ? [query.type] : []), query.limit + 1]);
        const page = rows.slice(0, query.limit);
        const hasMore = rows.length > query.limit;
        return { body: { status: 'success', data: { events: page.map(businessEnvelope), next_before: hasMore ? page[page.length - 1].id : null, has_more: hasMore } } };
      },
    },
    {
      ...base, method: 'GET', path: '/api/v3/automations/subscriptions', summary: `Event subscriptions (at most ${LIST_CAP}, oldest first, no pagination)`,
      response: { status: 200, description: 'Subscriptions', schema: successOf({ type: 'object', required: ['subscriptions'], properties: { subscriptions: { type: 'array', maxItems: LIST_CAP, items: { type: 'object' } } } }) },
      handler: async ({ rc }) => ({
        body: { status: 'success', data: { subscriptions: (await many<Record<string, unknown>>(rc.em, 'select * from automation_subscriptions where account_id = ? order by id limit ?', [rc.account.id, LIST_CAP])).map(subscriptionView) } },
      }),
    },
    {
      ...base, method: 'GET', path: '/api/v3/automations/schedules', summary: `Schedules (at most ${LIST_CAP}, oldest first, no pagination)`,
      response: { status: 200, description: 'Schedules', schema: successOf({ type: 'object', required: ['schedules'], properties: { schedules: { type: 'array', maxItems: LIST_CAP, items: { type: 'object' } } } }) },
      handler: async ({ rc }) => ({
        body: { status: 'success', data: { schedules: (await many<Record<string, unknown>>(rc.em, 'select * from automation_schedules where account_id = ? order by created_at, id limit ?', [rc.account.id, LIST_CAP])).map(scheduleView) } },
      }),
    },
    {
      method: 'POST', path: '/api/v3/operations/{name}/run', tag: 'Operations', auth: 'rest', issuerRequired: true, query: emptyQuery,
      summary: 'Run a named operation defined in Settings',
      description: 'Answers 202 with the run; the run itself is a workflow. Poll GET /api/v3/operations/runs/{run}. Unknown or inactive names answer 404; input is checked against the operation kind (422).',
      body: { type: 'object', additionalProperties: false, properties: { input: { type: 'object' } } },
      response: { status: 202, description: 'Accepted', schema: successOf(run) },
      handler: async ({ rc, params, body }) => ({ status: 202, body: { status: 'success', data: await runOperation(rc.em, deps, rc.account.id, params.name, body.input ?? {}, 'api') } }),
    },
    {
      ...base, tag: 'Operations', method: 'GET', path: '/api/v3/operations/runs/{run}', summary: 'Read an operation run',
      response: { status: 200, description: 'The run', schema: successOf(run) },
      handler: async ({ rc, params }) => {
        const row = /^[0-9a-f-]{36}$/i.test(params.run) ? await one<RunRow>(rc.em, 'select * from operation_runs where id = ? and account_id = ?', [params.run, rc.account.id]) : null;
        if (!row) throw notFound('Run');
        return { body: { status: 'success', data: runView(row) } };
      },
    },
  ];
}
