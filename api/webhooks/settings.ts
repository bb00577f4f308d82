import type { AppDeps } from '../http/app.js';
import { successOf, emptyQuery, type RouteDef } from '../http/registry.js';
import { many, one } from '../../entities/db.js';
import { notFound } from '../http/errors.js';
import { orderedPayload } from '../../services/webhooks/events.js';
import {
  createEndpoint,
  getEndpoint,
  updateEndpoint,
  rotateSecret,
  listDeliveries,
  redeliver,
  endpointView,
} from '../../services/webhooks/endpoints.js';

// Operator interface for webhook endpoints (Settings), their delivery log and redelivery.
const E = '/admin/v1/accounts/{account}/webhook-endpoints';
const anyObject = { type: 'object' };
const ok = (data: unknown, status = 200) => ({ status, body: { status: 'success', data } });
const ids = (p: Record<string, string>) => ({ account: Number(p.account), id: Number(p.id) });
const url = { type: 'string', format: 'uri', pattern: '^https?://', maxLength: 2048 };
const events = { type: 'array', items: { type: 'string', maxLength: 64 }, minItems: 1, maxItems: 50, uniqueItems: true };
const limit = { type: 'integer', minimum: 1, maximum: 100, default: 20 };

export function adminWebhookRoutes(deps: AppDeps): RouteDef[] {
  const em = () => deps.orm.em.fork();
  const dispatch = { temporal: deps.temporal, config: deps.config };
  const accountExists = async (id: number) => {
    if (!Number.isInteger(id) || !(await one(em(), 'select id from accounts where id = ?', [id]))) throw notFound('Account');
  };
  const base = {
    tag: 'Settings (operator)',
    auth: 'operator' as const,
    query: emptyQuery,
    response: { status: 200, description: 'OK', schema: successOf(anyObject) },
  };
  return [
    {
      ...base,
      method: 'POST',
      path: E,
      summary: 'Create a webhook endpoint (the signing secret is shown once)',
      response: { status: 201, description: 'Created', schema: successOf(anyObject) },
      body: {
        type: 'object',
        required: ['url'],
        additionalProperties: false,
        properties: { url, events, description: { type: 'string', maxLength: 255 } },
      },
      handler: async ({ params, body }) => {
        await accountExists(Number(params.account));
        return ok(await createEndpoint(em(), Number(params.account), body), 201);
      },
    },
    {
      ...base,
      method: 'GET',
      path: E,
      summary: 'List webhook endpoints',
      handler: async ({ params }) => {
        await accountExists(Number(params.account));
        return ok(
          (
            await many<Record<string, unknown>>(em(), 'select * from webhook_endpoints where account_id = ? order by id', [
              Number(params.account),
            ])
          ).map(endpointView),
        );
      },
    },
    {
      ...base,
      method: 'GET',
      path: `${E}/{id}`,
      summary: 'Read a webhook endpoint',
      handler: async ({ params }) => ok(endpointView(await getEndpoint(em(), ids(params).account, ids(params).id))),
    },
    {
      ...base,
      method: 'PATCH',
      path: `${E}/{id}`,
      summary: 'Change url, event filter or description; disable or re-enable (clears the failure count)',
      body: {
        type: 'object',
        additionalProperties: false,
        minProperties: 1,
        properties: { url, events, description: { type: ['string', 'null'], maxLength: 255 }, status: { enum: ['active', 'disabled'] } },
      },
      handler: async ({ params, body }) => ok(await updateEndpoint(em(), ids(params).account, ids(params).id, body)),
    },
    {
      ...base,
      method: 'DELETE',
      path: `${E}/{id}`,
      summary: 'Delete a webhook endpoint (its delivery log stays readable)',
      handler: async ({ params }) => {
        const row = await one(em(), 'delete from webhook_endpoints where id = ? and account_id = ? returning id', [
          ids(params).id,
          ids(params).account,
        ]);
        if (!row) throw notFound('Webhook endpoint');
        return ok({ deleted: true });
      },
    },
    {
      ...base,
      method: 'POST',
      path: `${E}/{id}/rotate-secret`,
      summary: 'Rotate the signing secret; the old one also signs until the overlap ends (new secret shown once)',
      body: { type: 'object', additionalProperties: false, properties: { overlap_hours: { type: 'number', minimum: 0, maximum: 168 } } },
      handler: async ({ params, body }) => ok(await rotateSecret(em(), ids(params).account, ids(params).id, body.overlap_hours ?? 24)),
    },
    {
      ...base,
      method: 'GET',
      path: '/admin/v1/accounts/{account}/webhook-deliveries',
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
      },
      handler: async ({ params, query }) => {
        await accountExists(Number(params.account));
        return ok(await listDeliveries(em(), Number(params.account), query));
      },
    },
    {
      ...base,
      method: 'GET',
      path: '/admin/v1/accounts/{account}/events',
      summary: 'Recorded callback events newest first',
      query: { type: 'object', additionalProperties: false, properties: { kind: { type: 'string', maxLength: 64 }, limit } },
      handler: async ({ params, query }) => {
        await accountExists(Number(params.account));
        const rows = await many<{ payload: unknown; dispatched_at: Date | null }>(
          em(),
          `select payload, dispatched_at from events where account_id = ? ${query.kind ? 'and kind = ?' : ''} order by id desc limit ?`,
          [Number(params.account), ...(query.kind ? [query.kind] : []), query.limit],
        );
        return ok(
          rows.map((r) => ({
            ...orderedPayload(r.payload as Record<string, unknown>),
            dispatched_at: r.dispatched_at ? new Date(r.dispatched_at).toISOString() : null,
          })),
        );
      },
    },
    {
      ...base,
      method: 'POST',
      path: '/admin/v1/accounts/{account}/events/{event}/redeliver',
      summary: 'Redeliver an event (same event_id, current secret) to one endpoint or every matching one',
      response: { status: 202, description: 'Redelivery started', schema: successOf(anyObject) },
      body: { type: 'object', additionalProperties: false, properties: { endpoint_id: { type: 'integer' } } },
      handler: async ({ params, body }) => ok(await redeliver(em(), dispatch, Number(params.account), params.event, body.endpoint_id), 202),
    },
  ];
}
