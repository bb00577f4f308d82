import { MCP_SERVERS, toolInputSchema, type JsonSchema, type McpServerKey, type Operation, type ToolAnnotations } from '../operation.js';
import { customerOperations } from '../operations.js';
import { hasPermission } from '../../domain/account/permissions.js';
import type { McpPrincipal } from '../http/auth.js';
import {
  BASE_SCOPE,
  CAPABILITY_SCOPES,
  ELEVATION_SCOPES,
  PRE_TICKED_SCOPES,
  PROTECTED_RESOURCE_WELL_KNOWN,
  SVC_MCP_SCOPES,
  missingScopes,
} from '../../domain/oauth/index.js';
import { portableOutputSchema, portableSchema, shortDescription } from './portable.js';

/**
 * The MCP view of the operation registry: which operations are tools, on which server, what each
 * tool looks like to a client, and which of them a credential may use. Nothing here is written by
 * hand per tool: name, input schema, permission and annotations all come from the operation's one
 * definition, so the REST route and the MCP tool can never drift apart.
 */

/** A served MCP endpoint: /mcp (every server's tools) or /mcp/v1/<key>. */
export type McpEndpoint = McpServerKey | 'all';

/** A JSON Schema whose root is an object, as MCP requires of tool input and output schemas. */
export type ObjectSchema = JsonSchema & { type: 'object' };

export interface McpTool {
  name: string;
  title: string;
  description: string;
  inputSchema: ObjectSchema;
  outputSchema: ObjectSchema;
  annotations: ToolAnnotations & { title: string };
}

/** Names a conforming client accepts everywhere: 1–64 characters of [A-Za-z0-9_.-] (MCP spec and conformance suite). */
export const TOOL_NAME = /^[A-Za-z0-9_.-]{1,64}$/;

export const isServerKey = (key: string): key is McpServerKey => (MCP_SERVERS as readonly string[]).includes(key);

/** Every operation that is a tool, in registry order (the order tools/list answers). */
export const toolOperations: readonly Operation[] = customerOperations.filter((op) => op.auth === 'rest' && op.mcp);

{
  const seen = new Set<string>();
  for (const op of toolOperations) {
    if (!TOOL_NAME.test(op.name)) throw new Error(`MCP tool name ${op.name} is not 1-64 characters of [A-Za-z0-9_.-]`);
    if (seen.has(op.name)) throw new Error(`MCP tool name ${op.name} is defined twice`);
    seen.add(op.name);
  }
}

/** The operations an endpoint serves: those whose `mcp.servers` names it, or all of them on /mcp. */
export function operationsOf(endpoint: McpEndpoint): readonly Operation[] {
  return servedBy(endpoint).list;
}

/** The operation an endpoint serves under a tool name, or undefined. */
export function operationNamed(endpoint: McpEndpoint, name: string): Operation | undefined {
  return servedBy(endpoint).byName.get(name);
}

/** What each endpoint serves, worked out once: every MCP request asks. */
const served = new Map<McpEndpoint, { list: readonly Operation[]; byName: ReadonlyMap<string, Operation> }>();
function servedBy(endpoint: McpEndpoint) {
  let s = served.get(endpoint);
  if (!s) {
    const list = toolOperations.filter((op) => endpoint === 'all' || op.mcp!.servers.includes(endpoint));
    s = { list, byName: new Map(list.map((op) => [op.name, op])) };
    served.set(endpoint, s);
  }
  return s;
}

/**
 * Servers whose family the contract names but serves elsewhere: agent tasks are the engine's REST
 * surface (`/api/engine`, a REST key), and the contract shows no MCP operation of theirs. Every
 * other server without tools belongs to a family the contract does not describe at all (calls,
 * ivr, meetings, …).
 */
const NAMED_NOT_SHOWN: Partial<Record<McpServerKey, string>> = {
  agents: 'Agent tasks family, served under /api/engine with a REST key,',
};

/**
 * Why a server serves no tools, or undefined when it serves some: said in /api-docs/mcp.json and
 * in the server's `initialize` instructions, so an empty tools/list is explained where it is met.
 */
export function emptyServerNote(key: McpServerKey): string | undefined {
  if (operationsOf(key).length) return undefined;
  const family = NAMED_NOT_SHOWN[key];
  return family
    ? `No tools: the contract names the ${family} but shows no MCP operations of it.`
    : 'No tools: the contract maps no REST family to this server and does not describe its family.';
}

/** The permission an MCP tool that sends has no stricter permission of its own for. */
export const SEND_PERMISSION = 'communications.send';

/**
 * The issuer permission a tool needs on the MCP surface. An MCP credential is a connection its
 * person made, and it can do no more than that person can now (the contract: what is granted is
 * intersected with what the consenting person can do): so every tool needs a live issuer (the MCP
 * door refuses a credential without one, api/mcp/routes.ts), also those whose REST twin checks
 * only the account credential (profile, balance, SMS), and a tool that sends (elevation
 * `mcp:send`) without a permission of its own needs the issuer's communications.send.
 */
export function toolPermissionOf(op: Operation): string | undefined {
  if (op.permission) return op.permission;
  return op.mcp?.elevation === 'mcp:send' ? SEND_PERMISSION : undefined;
}

/**
 * The scopes a caller holds: an OAuth token's, as the person ticked them on the consent page (with
 * mcp:use); every MCP scope for an svc_mcp_ credential (SVC_MCP_SCOPES). Either way what they open
 * is bounded by the person's permissions now (toolPermissionOf), so the effective grant is the
 * scopes held intersected with what the person may do at this request.
 */
export function scopesHeld(principal: McpPrincipal): readonly string[] {
  return 'grant' in principal ? principal.grant.scopes : SVC_MCP_SCOPES;
}

/** The scopes the tool needs that the caller does not hold (empty: the scopes allow it). */
export function scopeShortfall(principal: McpPrincipal, op: Operation): string[] {
  return missingScopes(scopesHeld(principal), op.mcp!);
}

/**
 * Whether tools/list shows the tool: its person may use it now (authorizeIssuer with
 * toolPermissionOf, the rule tools/call applies per request, asked without throwing) and its
 * capability scope was granted. A tool whose elevation scope was not granted is still listed
 * (docs/security.md, "Scopes that hold"): calling it is answered with the step-up challenge that
 * names the elevation, which is how a client learns to ask for it, and elevations are never
 * pre-ticked, so hiding them would leave a fresh connection no way to learn a write exists.
 */
export function mayUse(principal: McpPrincipal, op: Operation): boolean {
  const issuer = principal.user;
  if (!issuer || !issuer.active) return false;
  if (!scopesHeld(principal).includes(op.mcp!.scope)) return false;
  const permission = toolPermissionOf(op);
  return !permission || hasPermission(issuer.permissions, permission);
}

/** The longest tool description: one line a client can show in a list (docs/decisions.md, "MCP transport"). */
export const MAX_TOOL_DESCRIPTION = 200;

/**
 * The description a model reads: what the tool does, in one line. The operation's longer text
 * stays in the OpenAPI document and the manifest; the permission it needs is not repeated,
 * since tools/list shows a credential only the tools its person may use.
 */
function describe(op: Operation): string {
  const line = op.summary.replace(/\s+/g, ' ').trim();
  return shortDescription(/[.!?]$/.test(line) ? line : `${line}.`, MAX_TOOL_DESCRIPTION);
}

/**
 * Whether a tool's structuredContent is `{result: answer}` rather than the answer itself: MCP
 * wants an object at the root of structured output (2025 era), so an answer whose schema is not an
 * object is wrapped. Decided by the schema, not the value, so the advertised schema and the
 * result always agree (api/mcp/call.ts wraps by this same test).
 */
export const wrapsResult = (op: Operation): boolean => op.output.schema.type !== 'object';

/** The schema of a tool's structuredContent: the operation's output schema, or `{result}` around it. */
export function structuredSchemaOf(op: Operation): JsonSchema {
  return wrapsResult(op)
    ? { type: 'object', properties: { result: op.output.schema }, required: ['result'], additionalProperties: false }
    : op.output.schema;
}

const toolCache = new Map<string, McpTool>();

/**
 * The MCP tool of an operation (the same object for every request), as tools/list answers it: a
 * one-line description, the portable projection of the input schema (api/mcp/portable.ts; calls
 * are still validated with the full one) and the shape of its structuredContent as `outputSchema`
 * (the output projection: names, types, nullability, enums, required fields). The SDK client
 * checks every structured result against it; the projection only loosens the operation's output
 * schema, which every answer is held to in the suite (CHECK_ANSWERS), so the two cannot disagree.
 * The manifest and the OpenAPI document carry the full output schemas.
 */
export function toolOf(op: Operation): McpTool {
  let tool = toolCache.get(op.name);
  if (!tool) {
    tool = {
      name: op.name,
      title: op.summary,
      description: describe(op),
      inputSchema: portableSchema(toolInputSchema(op)),
      outputSchema: portableOutputSchema(structuredSchemaOf(op)),
      annotations: { title: op.summary, ...op.mcp!.annotations },
    };
    toolCache.set(op.name, tool);
  }
  return tool;
}

/**
 * How a client authenticates, in the manifest: OAuth (the authorization server on this API, its
 * paths as api/oauth/provider.ts routes them; test/integration/oauth-scopes.test.ts holds them to
 * its RFC 8414 metadata) and svc_mcp_ credentials, and what the scopes open (docs/security.md,
 * "Scopes that hold").
 */
const AUTHENTICATION = {
  scheme: 'bearer',
  header: 'Authorization: Bearer <token>',
  credentials: [
    {
      kind: 'oauth',
      description:
        'An OAuth 2.1 access token from the authorization server on this API: authorization code with PKCE (S256), public clients, ' +
        'dynamic client registration (RFC 7591) or a client ID metadata document; refresh tokens rotate. The token is bound to the one ' +
        'endpoint named as its resource (RFC 8707, the endpoint URL) and acts as the person who consented, in their account.',
      authorization_server_metadata: '/.well-known/oauth-authorization-server',
      protected_resource_metadata: `${PROTECTED_RESOURCE_WELL_KNOWN}<endpoint path>`,
      authorization_endpoint: '/oauth/authorize',
      token_endpoint: '/oauth/token',
      registration_endpoint: '/oauth/register',
      revocation_endpoint: '/oauth/revoke',
      scopes: `What the person ticked on the consent page, and ${BASE_SCOPE}.`,
    },
    {
      kind: 'svc_mcp',
      description:
        'svc_mcp_<credential>: an MCP connection credential an operator issues for a person (Settings, API credentials). ' +
        'It opens every endpoint and implies every scope; it acts with its person’s current permissions.',
      scopes: 'Every MCP scope (implied).',
    },
  ],
  scopes: { base: BASE_SCOPE, capability: CAPABILITY_SCOPES, elevation: ELEVATION_SCOPES, pre_ticked: PRE_TICKED_SCOPES },
  rules: [
    `The effective grant is the scopes held intersected with what the person may do at each request (their current permissions), plus ${BASE_SCOPE}.`,
    'tools/list shows a tool when its capability scope (tools[].scope) is held and its person holds its permission (tools[].permission); ' +
      'a tool that needs an elevation scope (tools[].elevation) is listed whether or not the elevation is held.',
    'tools/call of a tool whose capability or elevation scope is not held answers HTTP 403 with WWW-Authenticate: Bearer ' +
      'error="insufficient_scope", scope="<the scopes the tool needs>", resource_metadata="<the endpoint’s metadata>" (step-up: ' +
      'authorize again for them); the body is the tool error (isError, reason insufficient_scope) naming the missing scope.',
    'A missing, unknown, expired or revoked token, one issued for another endpoint, or one whose person is deactivated: 401 with ' +
      'WWW-Authenticate resource_metadata. An svc_mcp_ credential whose person is deactivated: 403 issuer_inactive.',
  ],
} as const;

/** The generated manifest served at GET /api-docs/mcp.json: every server, its path and tools, and each tool's contract. */
export function buildManifest(protocolVersions: readonly string[]) {
  return {
    name: 'svc-messaging',
    description:
      'MCP servers of the Business Messaging API. Stateless Streamable HTTP (POST only, JSON responses, no sessions); ' +
      'send Authorization: Bearer <OAuth access token or svc_mcp_ credential>. /mcp serves every tool the credential may use; ' +
      '/mcp/v1/<key> serves one server.',
    protocolVersions,
    transport: { type: 'streamable-http', stateless: true, methods: ['POST'] },
    authentication: AUTHENTICATION,
    endpoints: [
      { key: null, path: '/mcp', tools: operationsOf('all').map((op) => op.name) },
      ...MCP_SERVERS.map((key) => {
        const ops = operationsOf(key);
        const note = emptyServerNote(key);
        return {
          key,
          path: `/mcp/v1/${key}`,
          // The REST tags whose operations this server serves (the contract's tag-to-server map).
          tags: [...new Set(ops.map((op) => op.tag))],
          tools: ops.map((op) => op.name),
          ...(note ? { note } : {}),
        };
      }),
    ],
    tools: toolOperations.map((op) => ({
      ...toolOf(op),
      // The structuredContent's full schema (the REST data, or {result} around a non-object one);
      // tools/list advertises its shape (outputSchema above).
      fullOutputSchema: structuredSchemaOf(op),
      tag: op.tag,
      servers: op.mcp!.servers,
      permission: toolPermissionOf(op) ?? null,
      issuerRequired: true,
      scope: op.mcp!.scope,
      elevation: op.mcp!.elevation ?? null,
      rest: { method: op.method, path: op.path },
    })),
  };
}
