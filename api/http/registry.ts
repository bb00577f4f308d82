import type Koa from 'koa';
import type { JsonSchema } from './validation.js';
import type { RequestContext } from './context.js';
import type { AdmitsInStatement, CliExposure } from '../operation.js';

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/**
 * One route: its contract (schemas, auth, permission) and its handler. The same definition feeds
 * the router, ajv validation and the OpenAPI document, so the three never drift apart.
 */
export interface RouteDef {
  method: Method;
  /** OpenAPI-style path, e.g. /api/v3/sms/{uid} */
  path: string;
  tag: string;
  summary: string;
  description?: string;
  /** rest: account key; operator: admin token; provider: signed provider callback; public: none */
  auth: 'rest' | 'operator' | 'provider' | 'public';
  /** Issuer permission: the key must have a live issuer holding it. */
  permission?: string;
  /** When set, the key must have a live issuer (endpoint families added since 7 September 2026). */
  issuerRequired?: boolean;
  /** engine: the agent engine's own error envelope and throttle (/api/engine). */
  envelope?: 'v3' | 'data' | 'engine';
  body?: JsonSchema;
  query?: JsonSchema;
  /** Request headers the route reads (documented as header parameters). */
  headers?: Record<string, { schema: JsonSchema; description?: string }>;
  /** A body limit above the default (config.bodyLimitBytes). */
  bodyLimitBytes?: number;
  /** alsoStatus: a second success status answering the same schema (OperationOutput.alsoStatus). */
  response: { status: number; description: string; schema: JsonSchema; alsoStatus?: { status: number; description: string } };
  /** A page for browsers: its answer and its own refusals are text/html (the door's own stay JSON). */
  html?: boolean;
  /** Body is read raw (signature checks); no JSON parsing or body schema. */
  rawBody?: boolean;
  /** Refusals a service decides for this route alone (status → when), beyond those the door derives (refusals.ts). */
  refusals?: Record<number, string>;
  /** The `reason` a 422 of its schemas carries (Operation.invalidReason). */
  invalidReason?: string;
  /** Stable operation id (the operation's name); derived from the path when absent. */
  operationId?: string;
  /** Admin CLI commands that call this route (operator operations). */
  cli?: readonly CliExposure[];
  /** Served with the operator API (on its own address when OPERATOR_PORT is set) though it needs no token: its OpenAPI document. */
  operatorSurface?: boolean;
  /** The handler writes nothing (a GET whose operation is a read): it may start beside its authentication (speculation.ts). */
  readsOnly?: boolean;
  /** The handler writes only through a statement that also authenticates the request (auth.ts admittedInStatement); for a read, the requests whose query says so. */
  admitsInStatement?: AdmitsInStatement;
  handler: (req: RouteRequest) => Promise<RouteResult>;
}

export interface RouteRequest {
  ctx: Koa.Context;
  /** Present on auth: 'rest' routes. */
  rc: RequestContext;
  /** The JSON body, validated against the route's body schema when it has one. */
  body: Record<string, unknown>;
  /** The query string, validated (and coerced) against the route's query schema when it has one. */
  query: Record<string, unknown>;
  params: Record<string, string>;
}

export interface RouteResult {
  status?: number;
  body: unknown;
  headers?: Record<string, string>;
}

export const koaPath = (p: string) => p.replace(/\{(\w+)\}/g, ':$1');

export const emptyQuery: JsonSchema = { type: 'object', properties: {}, additionalProperties: true };

/** The v3 success wrapper {status:'success', data}. */
export const successOf = (data: JsonSchema): JsonSchema => ({
  type: 'object',
  required: ['status', 'data'],
  properties: { status: { const: 'success' }, data },
});
