import type { FromSchema, JSONSchema } from 'json-schema-to-ts';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { Client } from '@temporalio/client';
import type { Config } from '../config.js';
import type { Logger } from '../logger.js';
import type { OperatorContext, RequestContext } from '../services/platform/context.js';
import { withQueryBooleans, withStorageBounds } from '../services/platform/validation.js';
import type { DomainError } from '../services/platform/errors.js';

/**
 * One operation of the contract, defined once. The REST route, the OpenAPI operation, the MCP tool
 * and (for operator operations) the admin CLI command are all generated from this definition, so
 * the doors can never drift apart: the schemas ajv validates with are the ones OpenAPI and MCP
 * clients see, and the handler is the same function behind every door.
 */

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
export type JsonSchema = Record<string, unknown>;

/** What every door hands to a handler besides the request context. */
export interface OperationDeps {
  config: Config;
  orm: MikroORM;
  temporal: Client;
  log: Logger;
}

/** The MCP servers of the contract: each is served at /mcp/v1/<key>; /mcp serves every tool. */
export const MCP_SERVERS = [
  'ivr',
  'flows',
  'forms',
  'data',
  'approvals',
  'payments',
  'automations',
  'alerts',
  'operations',
  'studio',
  'numbers',
  'groups',
  'agents',
  'orders',
  'shop',
  'tickets',
  'kb',
  'content',
  'calls',
  'routing',
  'meetings',
  'messaging',
  'inbox',
  'comments',
  'posts',
  'contacts',
  'leads',
  'overview',
  'accounts',
  'navigate',
  'account',
] as const;
export type McpServerKey = (typeof MCP_SERVERS)[number];

export interface ToolAnnotations {
  readOnlyHint?: boolean;
  destructiveHint?: boolean;
  idempotentHint?: boolean;
  openWorldHint?: boolean;
}

/**
 * The tool hints of each kind of operation, so the same risk reads the same in every tool
 * (docs/decisions.md, "MCP transport"): reads; sends that reach a provider or a customer; writes
 * to the account's own records; idempotent updates; deletes.
 */
export const HINTS = {
  read: { readOnlyHint: true, openWorldHint: false },
  send: { readOnlyHint: false, destructiveHint: false, openWorldHint: true },
  write: { readOnlyHint: false, destructiveHint: false, openWorldHint: false },
  update: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  remove: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
} as const satisfies Record<string, ToolAnnotations>;

export interface McpExposure {
  /** Servers (under /mcp/v1/<key>) that list this tool; /mcp lists every tool. */
  servers: readonly McpServerKey[];
  /** Capability scope an OAuth token needs (mcp:messaging, mcp:contacts, ...). */
  scope: string;
  /** Elevation scope for effects beyond reading (mcp:send, mcp:write, mcp:delete, mcp:spend, ...). */
  elevation?: string;
  annotations?: ToolAnnotations;
}

/** Operator operations become `npm run admin -- <command>`; flags are the body and path fields. */
export interface CliExposure {
  command: string;
  help?: string;
  /** Body fields fixed by the command (accounts:suspend sends status=suspended). */
  fixed?: Record<string, unknown>;
  /** Flag name → input field, where the flag is not the field's name with - for _. */
  flags?: Record<string, string>;
  /** The body or query fields offered as flags; default every field the command does not fix. */
  fields?: readonly string[];
}

/**
 * What an answer is, declared by every operation (docs/architecture.md, "One presentation rule"):
 * - `resource`: one resource. `data` (the body, in the data envelope) is its presentation itself,
 *   never that presentation inside another object or a list; defineOperation refuses a schema that
 *   wraps it, so no operation can drift from the rule.
 * - `list`: several resources under a named key (a page with its pagination or cursor, a capped
 *   list, one record per recipient of a send).
 * - `outcome`: what an action did or a report that is no single resource (per-item results, a
 *   send's provider id, a deletion's acknowledgement, an overview).
 * - `page`: an HTML page for a browser, or a redirect to one (the page door: api/http/page-door.ts).
 */
export type OutputKind = 'resource' | 'list' | 'outcome' | 'page';

/** What a page operation answers: a page, or a 303 to one (post/redirect/get). */
export type PageAnswer = { html: string } | { redirect: string };

/**
 * The page door of an operation (a form of the shop page, a page it reads): answered in HTML. A
 * refusal's status and headers come from the one domain-error mapping every door uses; the
 * operation says only which page shows it.
 */
export interface PageDoor {
  /** Headers of every answer (the page's content security policy, no caching). */
  headers: Record<string, string>;
  refusal: (call: PublicCall, input: Record<string, string>, err: DomainError) => Promise<string>;
}

export interface OperationOutput {
  status: number;
  description: string;
  schema: JsonSchema;
  kind: OutputKind;
  /**
   * The contract's own words where it spells out this answer's shape (a wrapper the rule would not
   * give, as `201 {record}` for a data record): the contract wins. Each such operation is named in
   * docs/architecture.md as a stated exception.
   */
  contract?: string;
  /**
   * The answer's own top-level fields sit beside `status` in the REST success envelope instead of
   * under `data`: for a contract that spells a `data` and a sibling of it (the payments list's
   * `{data:[summary], meta}`), so the body is `{status:'success', data, meta}`. The answer must be an
   * object; the MCP tool's structuredContent is the answer itself, as for every operation.
   */
  besideStatus?: boolean;
  /** A second success status with the same answer, chosen by the operation's answerStatus (an engine run settled in its wait: 200). */
  alsoStatus?: { status: number; description: string };
}

/** The fields that name a resource: a presentation carries one of them at its top. */
const IDENTITY = ['id', 'uid', 'run_id', 'run_uuid'];
type SchemaNode = { type?: unknown; properties?: Record<string, SchemaNode>; items?: SchemaNode };
const holdsIdentity = (s: SchemaNode | undefined) => IDENTITY.some((k) => k in (s?.properties ?? {}));
const typesOf = (s: SchemaNode | undefined) => ([] as unknown[]).concat(s?.type ?? []);
const isObjectSchema = (s: SchemaNode | undefined) => typesOf(s).includes('object') || s?.properties !== undefined;

/**
 * Where a schema wraps a resource instead of being it: `[]` for a list at the top, else the key of
 * the top-level field holding a resource (an object carrying an identity, or a list of objects)
 * while the top carries no identity of its own (`{order: {id…}}`, `{messages: [{…}]}`,
 * `{invite_link, group: {id…}}`). Undefined when the schema is a presentation itself.
 */
export function wrappedResourceAt(schema: JsonSchema): string | undefined {
  const s = schema as SchemaNode;
  if (typesOf(s).includes('array')) return '[]';
  if (holdsIdentity(s)) return undefined;
  for (const [key, field] of Object.entries(s.properties ?? {})) {
    if (holdsIdentity(field)) return key;
    if (typesOf(field).includes('array') && isObjectSchema(field.items)) return `${key}[]`;
  }
  return undefined;
}

/** The presentation rule, held when an operation is defined: a resource answer is the resource itself. */
function checkPresentation(name: string, output: OperationOutput): void {
  if (output.kind !== 'resource' || output.contract) return;
  const at = wrappedResourceAt(output.schema);
  if (at !== undefined)
    throw new Error(
      `${name}: a single-resource answer must be the resource itself, not wrapped at ${at} ` +
        '(docs/architecture.md, "One presentation rule"; a wrapper the contract spells out is declared with output.contract)',
    );
}

/** Account operations receive the caller's request context, operator ones the operator's; public ones neither. */
export type Auth = 'rest' | 'operator' | 'public';
export interface AccountCall {
  rc: RequestContext;
  deps: OperationDeps;
}
export interface OperatorCall {
  oc: OperatorContext;
  deps: OperationDeps;
}
export interface PublicCall {
  deps: OperationDeps;
  /** The client's address as the door reads it (behind declared proxies only): page limits per address. */
  client?: { address: string };
}
export type CallOf<A extends Auth> = A extends 'rest' ? AccountCall : A extends 'operator' ? OperatorCall : PublicCall;

type PathParams<P extends string> = P extends `${string}{${infer K}}${infer Rest}` ? K | PathParams<Rest> : never;
type ObjectOf<S> = S extends undefined ? Record<never, never> : S extends JSONSchema ? FromSchema<S> : Record<never, never>;
export type InputOf<P extends string, B, Q> = { [K in PathParams<P>]: string } & ObjectOf<B> & ObjectOf<Q>;

/**
 * The answer a handler must return: the type its output schema describes. A page operation's schema
 * describes the HTML the page door sends, not what the handler hands it, so its answer is a
 * PageAnswer. Keyed on the kind as declared, not distributed: an output whose kind is only known as
 * the whole OutputKind union is held to its schema.
 */
export type AnswerOf<K extends OutputKind, S> = [K] extends ['page'] ? PageAnswer : S extends JSONSchema ? FromSchema<S> : unknown;

export interface OperationDef<A extends Auth, P extends string, B, Q, K extends OutputKind, S> {
  /** Stable snake_case verb: the MCP tool name and the OpenAPI operationId. */
  name: string;
  method: Method;
  /** OpenAPI-style path, e.g. /api/v3/sms/{uid} */
  path: P;
  tag: string;
  summary: string;
  description?: string;
  auth: A;
  /** Issuer permission: the key's issuer (or the MCP credential's) must hold it now. */
  permission?: string;
  /** The key must have a live issuer (endpoint families added since 7 September 2026). */
  issuerRequired?: boolean;
  /** Error envelope of the REST door; `engine` also gives the route the engine's own throttle (/api/engine). */
  envelope?: 'v3' | 'data' | 'engine';
  /** The answer's status when it depends on the answer (an engine run settled within its wait: 200, not 202). */
  answerStatus?: (answer: NoInfer<AnswerOf<K, S>>) => number;
  /** Headers that depend on the answer (Idempotent-Replayed on a replayed engine run). */
  answerHeaders?: (answer: NoInfer<AnswerOf<K, S>>) => Record<string, string>;
  body?: B;
  query?: Q;
  /**
   * Request headers the REST door reads into input fields (header name → a field of the body schema,
   * e.g. Idempotency-Key → idempotency_key); MCP callers send the field itself. A header sent wins.
   */
  headers?: Record<string, string>;
  /** A body limit above the service's default (BODY_LIMIT_BYTES), for operations whose contract allows larger requests. */
  bodyLimitBytes?: number;
  output: OperationOutput & { kind: K; schema: S };
  /** Refusals its service decides (409 conflict, 402 balance…), status → when; the door's own are derived. */
  refusals?: Record<number, string>;
  /** The `reason` of a 422 its schemas refuse, for a family whose refusals all carry one (leads: `invalid`). */
  invalidReason?: string;
  mcp?: McpExposure;
  /** Operator operations: the admin CLI commands that call this operation. */
  cli?: readonly CliExposure[];
  /** The answer carries a secret shown once (a key, a signing secret): never stored by a cache (Cache-Control: no-store). */
  secretInAnswer?: boolean;
  /**
   * The handler writes only through one statement that can make the request's authentication too
   * (RequestContext.admission): the REST door then lets it (api/http/auth.ts admittedInStatement).
   * For a read, a test of the request's raw query instead: the requests whose one statement makes
   * the admission (list_payments by subject_id); the others start beside their authentication as
   * reads do (api/http/speculation.ts).
   */
  admitsInStatement?: AdmitsInStatement;
  /** Served by the page door (HTML) instead of the REST door; public operations only. */
  page?: PageDoor;
  // NoInfer: the input type is computed from the schemas and the answer type from the output, never
  // inferred back from the handler; so the answer is checked against the output schema at compile time.
  handler: (call: CallOf<A>, input: NoInfer<InputOf<P, B, Q>>) => Promise<NoInfer<AnswerOf<K, S>>>;
}

/** An operation as the doors see it, its input type erased. */
export interface Operation {
  name: string;
  method: Method;
  path: string;
  tag: string;
  summary: string;
  description?: string;
  auth: Auth;
  permission?: string;
  issuerRequired?: boolean;
  envelope?: 'v3' | 'data' | 'engine';
  answerStatus?: (answer: unknown) => number;
  answerHeaders?: (answer: unknown) => Record<string, string>;
  body?: JsonSchema;
  query?: JsonSchema;
  headers?: Record<string, string>;
  bodyLimitBytes?: number;
  output: OperationOutput;
  refusals?: Record<number, string>;
  invalidReason?: string;
  mcp?: McpExposure;
  cli?: readonly CliExposure[];
  secretInAnswer?: boolean;
  admitsInStatement?: AdmitsInStatement;
  page?: PageDoor;
  /** Names of the path parameters, in order. */
  params: string[];
  handler: (call: AccountCall | OperatorCall | PublicCall, input: Record<string, unknown>) => Promise<unknown>;
}

/** Whether a request's one statement makes its admission: always, or as its raw query says (a read). */
export type AdmitsInStatement = true | ((query: Readonly<Record<string, unknown>>) => boolean);

export function defineOperation<
  A extends Auth,
  const P extends string,
  B extends JSONSchema | undefined = undefined,
  Q extends JSONSchema | undefined = undefined,
  const K extends OutputKind = OutputKind,
  const S extends JSONSchema = JSONSchema,
>(def: OperationDef<A, P, B, Q, K, S>): Operation {
  const params = [...def.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]);
  checkPresentation(def.name, def.output);
  const bounded = (s: unknown) => (s === undefined ? undefined : withStorageBounds(s as JsonSchema));
  // Query booleans take their one spelling here (true, false, 1, 0), for every door and the documents.
  const query = def.query === undefined ? undefined : withQueryBooleans(bounded(def.query)!);
  return { ...def, params, body: bounded(def.body), query } as unknown as Operation;
}

/** The input schema an MCP client sees: path parameters and the body (or query) fields in one object. */
export function toolInputSchema(op: Operation): JsonSchema {
  const source = (op.body ?? op.query ?? {}) as {
    properties?: Record<string, unknown>;
    required?: string[];
    additionalProperties?: unknown;
    description?: string;
  };
  const properties: Record<string, unknown> = {};
  for (const p of op.params)
    properties[p] = { type: 'string', minLength: 1, description: `Path parameter {${p}} of ${op.method} ${op.path}` };
  Object.assign(properties, source.properties ?? {});
  const required = [...op.params, ...(source.required ?? [])];
  return {
    type: 'object',
    properties,
    ...(required.length ? { required } : {}),
    ...(source.additionalProperties !== undefined ? { additionalProperties: source.additionalProperties } : {}),
    ...(source.description ? { description: source.description } : {}),
  };
}

/** Splits a tool's arguments back into what the REST door would have read from the path and the body. */
export function splitToolArguments(
  op: Operation,
  args: Record<string, unknown>,
): { params: Record<string, string>; rest: Record<string, unknown> } {
  const params: Record<string, string> = {};
  const rest: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(args)) {
    if (op.params.includes(k)) params[k] = typeof v === 'string' ? v : String(v);
    else rest[k] = v;
  }
  return { params, rest };
}
