import type { RouteDef } from './registry.js';
import { refusalsOf } from './refusals.js';
import { exampleOf } from './examples.js';

const v3Error = {
  type: 'object',
  required: ['status', 'message'],
  properties: {
    status: { const: 'error' },
    message: { type: 'string' },
    errors: { type: 'object', additionalProperties: { type: 'array', items: { type: 'string' } } },
    reason: { type: 'string' },
  },
};

/** Data endpoints refuse in their native envelope (api/http/errors.ts dataErrorBody). */
const dataError = {
  type: 'object',
  required: ['error', 'message', 'code'],
  properties: {
    error: {
      type: 'object',
      required: ['code', 'message', 'retryable'],
      properties: {
        code: { type: 'string' },
        message: { type: 'string' },
        retryable: { type: 'boolean' },
        field: { type: 'string' },
        details: {},
      },
    },
    message: { type: 'string' },
    code: { type: 'string' },
    errors: { type: 'object', additionalProperties: { type: 'array', items: { type: 'string' } } },
  },
};

/** The agent engine refuses in problem details (api/http/errors.ts engineErrorBody). */
const engineError = {
  type: 'object',
  required: ['type', 'title', 'status', 'detail', 'code'],
  properties: {
    type: { type: 'string' },
    title: { type: 'string' },
    status: { type: 'integer' },
    detail: { type: 'string' },
    code: { type: 'string' },
    errors: { type: 'object', additionalProperties: { type: 'array', items: { type: 'string' } } },
    retry_after_seconds: { type: 'integer' },
  },
};

/**
 * OpenAPI 3.1 from the route definitions: the request schemas are the very objects ajv validates with.
 * Two documents: the customer one (account keys) and the operator one (/admin/v1, operator token),
 * so the customer document never describes the operator surface.
 */
export function buildOpenApi(routes: RouteDef[], audience: 'customer' | 'operator' = 'customer', introduction?: string) {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const r of routes) {
    const params = [...r.path.matchAll(/\{(\w+)\}/g)].map((m) => ({ name: m[1], in: 'path', required: true, schema: { type: 'string' } }));
    const queryProps = (r.query?.properties ?? {}) as Record<string, unknown>;
    const queryParams = Object.entries(queryProps).map(([name, schema]) => ({ name, in: 'query', required: false, schema }));
    const headerParams = Object.entries(r.headers ?? {}).map(([name, h]) => ({
      name,
      in: 'header',
      required: false,
      schema: h.schema,
      ...(h.description ? { description: h.description } : {}),
    }));
    const op: Record<string, unknown> = {
      tags: [r.tag],
      summary: r.summary,
      ...(r.description ? { description: r.description } : {}),
      operationId:
        r.operationId ??
        `${r.method.toLowerCase()}${r.path.replace(/[^a-zA-Z0-9]+(.)?/g, (_m, c: string | undefined) => (c ? c.toUpperCase() : ''))}`,
      parameters: [...params, ...queryParams, ...headerParams],
      responses: {
        // A second success status with the same body (an engine run that settled within its wait: 200).
        ...(r.response.alsoStatus
          ? {
              [String(r.response.alsoStatus.status)]: {
                description: r.response.alsoStatus.description,
                content: { 'application/json': { schema: r.response.schema } },
              },
            }
          : {}),
        [String(r.response.status)]: {
          description: r.response.description,
          ...(r.response.status === 204 ? {} : { content: { [r.html ? 'text/html' : 'application/json']: { schema: r.response.schema } } }),
        },
        // Every refusal this operation can answer, derived per route (refusals.ts), in its envelope.
        ...Object.fromEntries(
          Object.entries(refusalsOf(r)).map(([status, description]) => [
            status,
            {
              description,
              content:
                r.html && r.refusals?.[Number(status)]
                  ? { 'text/html': { schema: { type: 'string' } } }
                  : r.envelope === 'engine'
                    ? { 'application/problem+json': { schema: engineError } }
                    : { 'application/json': { schema: r.envelope === 'data' ? dataError : v3Error } },
            },
          ]),
        ),
      },
      ...(r.auth === 'rest' ? { security: [{ bearer: [] }] } : r.auth === 'operator' ? { security: [{ operator: [] }] } : { security: [] }),
      ...(r.permission ? { 'x-permission': r.permission } : {}),
      ...(r.cli?.length ? { 'x-cli': r.cli.map((c) => c.command) } : {}),
    };
    // The example is what the reference page's request samples send: one the body schema accepts (examples.ts).
    if (r.body) op.requestBody = { required: true, content: { 'application/json': { schema: r.body, example: exampleOf(r.body) } } };
    (paths[r.path] ??= {})[r.method.toLowerCase()] = op;
  }
  return {
    openapi: '3.1.0',
    jsonSchemaDialect: 'https://json-schema.org/draft/2020-12/schema',
    info: {
      title: audience === 'operator' ? 'Operator API (Settings)' : 'Business Messaging, Commerce and Data API',
      version: '3.6.0',
      'x-reference-version': '3.1.0',
      ...(introduction ? { description: introduction } : {}),
    },
    servers: [{ url: '/' }],
    components: {
      securitySchemes:
        audience === 'operator'
          ? { operator: { type: 'http', scheme: 'bearer', description: 'Operator token (Settings)' } }
          : { bearer: { type: 'http', scheme: 'bearer', description: 'Account REST key (64 characters)' } },
    },
    paths,
  };
}
