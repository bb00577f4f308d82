import type { AppDeps } from '../http/app.js';
import { successOf, emptyQuery, type RouteDef } from '../http/registry.js';
import { many, one } from '../../entities/db.js';
import { notFound } from '../http/errors.js';
import {
  createSubscription,
  createOperation,
  createSchedule,
  deleteSchedule,
  subscriptionView,
  operationView,
  scheduleView,
} from '../../services/automations/settings.js';
import { runView, type RunRow } from '../../services/automations/operations.js';

// Operator interface for automations: event subscriptions, operation definitions, schedules, runs.
const A = '/admin/v1/accounts/{account}';
const anyObject = { type: 'object' };
const ok = (data: unknown, status = 200) => ({ status, body: { status: 'success', data } });
const url = { type: 'string', format: 'uri', pattern: '^https?://', maxLength: 2048 };
const eventType = { type: 'string', maxLength: 100, pattern: `^(\\*|[a-z][a-z0-9_]*(\\.[a-z][a-z0-9_]*)*(\\.\\*)?)$` };

export function adminAutomationRoutes(deps: AppDeps): RouteDef[] {
  const em = () => deps.orm.em.fork();
  const acc = async (p: Record<string, string>) => {
    const id = Number(p.account);
    if (!Number.isInteger(id) || !(await one(em(), 'select id from accounts where id = ?', [id]))) throw notFound('Account');
    return id;
  };
  const base = {
    tag: 'Settings (operator)',
    auth: 'operator' as const,
    query: emptyQuery,
    response: { status: 200, description: 'OK', schema: successOf(anyObject) },
  };
  const created = { status: 201, description: 'Created', schema: successOf(anyObject) };
  const list =
    (table: string, view: (r: Record<string, unknown>) => unknown, order = 'id'): RouteDef['handler'] =>
    async ({ params }) =>
      ok(
        (
          await many<Record<string, unknown>>(em(), `select * from ${table} where account_id = ? order by ${order}`, [await acc(params)])
        ).map(view),
      );
  const remove =
    (table: string, what: string): RouteDef['handler'] =>
    async ({ params }) => {
      const row = await one(em(), `delete from ${table} where id = ? and account_id = ? returning id`, [
        Number(params.id),
        await acc(params),
      ]);
      if (!row) throw notFound(what);
      return ok({ deleted: true });
    };
  return [
    {
      ...base,
      method: 'POST',
      path: `${A}/automation-subscriptions`,
      summary: 'Subscribe a URL to business events (X-Svc-Signature secret shown once)',
      response: created,
      body: {
        type: 'object',
        required: ['event_type', 'target_url'],
        additionalProperties: false,
        properties: { event_type: eventType, target_url: url, description: { type: 'string', maxLength: 255 } },
      },
      handler: async ({ params, body }) => ok(await createSubscription(em(), await acc(params), body), 201),
    },
    {
      ...base,
      method: 'GET',
      path: `${A}/automation-subscriptions`,
      summary: 'List automation subscriptions',
      handler: list('automation_subscriptions', subscriptionView),
    },
    {
      ...base,
      method: 'PATCH',
      path: `${A}/automation-subscriptions/{id}`,
      summary: 'Pause or resume a subscription',
      body: { type: 'object', required: ['active'], additionalProperties: false, properties: { active: { type: 'boolean' } } },
      handler: async ({ params, body }) => {
        const row = await one<Record<string, unknown>>(
          em(),
          'update automation_subscriptions set active = ? where id = ? and account_id = ? returning *',
          [body.active, Number(params.id), await acc(params)],
        );
        if (!row) throw notFound('Subscription');
        return ok(subscriptionView(row));
      },
    },
    {
      ...base,
      method: 'DELETE',
      path: `${A}/automation-subscriptions/{id}`,
      summary: 'Delete a subscription',
      handler: remove('automation_subscriptions', 'Subscription'),
    },
    {
      ...base,
      method: 'POST',
      path: `${A}/operations`,
      summary: 'Define a named operation (kinds: send_sms, emit_business_event)',
      response: created,
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
      },
      handler: async ({ params, body }) => ok(await createOperation(em(), await acc(params), body), 201),
    },
    {
      ...base,
      method: 'GET',
      path: `${A}/operations`,
      summary: 'List operation definitions',
      handler: list('operation_definitions', operationView),
    },
    {
      ...base,
      method: 'DELETE',
      path: `${A}/operations/{id}`,
      summary: 'Delete an operation definition',
      handler: remove('operation_definitions', 'Operation'),
    },
    {
      ...base,
      method: 'GET',
      path: `${A}/operation-runs`,
      summary: 'Operation runs newest first (100)',
      handler: async ({ params }) =>
        ok(
          (
            await many<RunRow>(em(), 'select * from operation_runs where account_id = ? order by created_at desc limit 100', [
              await acc(params),
            ])
          ).map(runView),
        ),
    },
    {
      ...base,
      method: 'POST',
      path: `${A}/schedules`,
      summary: 'Run an operation every N seconds (a Temporal Schedule)',
      response: created,
      body: {
        type: 'object',
        required: ['name', 'operation', 'every_seconds'],
        additionalProperties: false,
        properties: {
          name: { type: 'string', minLength: 1, maxLength: 160 },
          operation: { type: 'string', maxLength: 64 },
          input: { type: 'object' },
          every_seconds: { type: 'integer', minimum: 1, maximum: 31_536_000 },
        },
      },
      handler: async ({ params, body }) =>
        ok(await createSchedule(em(), deps.temporal, deps.config.taskQueue, await acc(params), body), 201),
    },
    {
      ...base,
      method: 'GET',
      path: `${A}/schedules`,
      summary: 'List schedules',
      handler: list('automation_schedules', scheduleView, 'created_at'),
    },
    {
      ...base,
      method: 'DELETE',
      path: `${A}/schedules/{id}`,
      summary: 'Delete a schedule (and its Temporal Schedule)',
      handler: async ({ params }) => {
        await deleteSchedule(em(), deps.temporal, await acc(params), params.id);
        return ok({ deleted: true });
      },
    },
  ];
}
