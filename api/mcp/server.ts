import {
  Server,
  WebStandardStreamableHTTPServerTransport,
  createMcpHandler,
  isJsonContentType,
  isLegacyRequest,
  PROTOCOL_VERSION_META_KEY,
  ProtocolError,
  ProtocolErrorCode,
  SUPPORTED_PROTOCOL_VERSIONS,
  type AuthInfo,
  type McpRequestContext,
} from '@modelcontextprotocol/server';
import { callTool, type ToolCallContext } from './call.js';
import { emptyServerNote, mayUse, operationNamed, operationsOf, scopesHeld, toolOf, type McpEndpoint } from './tools.js';

/**
 * The MCP protocol layer, from the official TypeScript SDK (v2, `@modelcontextprotocol/server`):
 * one stateless endpoint that serves both protocol eras. 2026-07-28 ("modern") requests go through
 * the SDK's `createMcpHandler`; 2025-era requests (`initialize`, then one POST per request, no
 * session) through a fresh SDK `Server` on a session-less Streamable HTTP transport with JSON
 * responses. Both legs build their server from the same function, so the eras cannot drift.
 *
 * The low-level `Server` is used rather than `McpServer.registerTool` because our tools are the
 * operations' JSON Schemas, validated by the same ajv path as REST, and a validation failure must
 * come back with our field problems; `McpServer` would validate (and word the refusal) itself.
 */

/**
 * The 2026-07-28-era revisions `createMcpHandler` negotiates through `server/discover`. The SDK
 * keeps that list internal (SUPPORTED_PROTOCOL_VERSIONS is the 2025-era `initialize` list only),
 * so it is restated here; test/integration/mcp.test.ts connects in each listed version, so a
 * revision the SDK drops or adds shows there.
 */
const MODERN_PROTOCOL_VERSIONS: readonly string[] = ['2026-07-28'];
/** The first revision of the modern era: an MCP-Protocol-Version header naming it or a later one is never legacy. */
const FIRST_MODERN_PROTOCOL_VERSION = MODERN_PROTOCOL_VERSIONS.at(-1)!;

/** Every protocol version this endpoint serves, newest first: what /api-docs/mcp.json lists. */
export const PROTOCOL_VERSIONS: readonly string[] = [...MODERN_PROTOCOL_VERSIONS, ...SUPPORTED_PROTOCOL_VERSIONS];

/** One authenticated MCP request: the endpoint asked for and the caller, resolved by the HTTP door. */
export interface McpSession extends ToolCallContext {
  endpoint: McpEndpoint;
}

const INSTRUCTIONS =
  'Tools of a business messaging account: send SMS and chat-channel messages, read them back, manage contact groups and contacts, ' +
  'run campaigns and chat groups, keep shops, products, orders and data tables, read payments and automations, run operations. Every tool acts on ' +
  'the account of the credential, takes the same input as the REST operation of the same name and returns its data object as ' +
  "structuredContent (its shape is the tool's outputSchema). A refused call returns isError with a JSON body " +
  '{status:"error", message, errors?, reason?}: errors names each invalid field and its problem; fix those and call again.';

/** The SDK server for one request: tools/list and tools/call over the operations the endpoint serves. */
function buildServer(session: McpSession): Server {
  const name = session.endpoint === 'all' ? 'svc-messaging' : `svc-messaging-${session.endpoint}`;
  // A server without tools says why where a client meets it (and in /api-docs/mcp.json).
  const instructions = (session.endpoint !== 'all' && emptyServerNote(session.endpoint)) || INSTRUCTIONS;
  const server = new Server({ name, version: '3.6.0' }, { capabilities: { tools: { listChanged: false } }, instructions });
  const operations = operationsOf(session.endpoint);

  server.setRequestHandler('tools/list', () => ({
    tools: operations.filter((op) => mayUse(session.principal, op)).map(toolOf),
  }));

  server.setRequestHandler('tools/call', async (request) => {
    const op = operationNamed(session.endpoint, request.params.name);
    // A tool this endpoint does not serve is a protocol error; one it serves but the caller may not
    // use is a tool error with the reason (callTool applies the permission), so a model learns why.
    if (!op) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Unknown tool: ${request.params.name}`);
    return callTool(op, (request.params.arguments ?? {}) as Record<string, unknown>, session);
  });
  return server;
}

const SESSION = 'svcMcpSession';
const sessionOf = (ctx: McpRequestContext): McpSession => {
  const session = ctx.authInfo?.extra?.[SESSION] as McpSession | undefined;
  if (!session) throw new Error('MCP request reached the SDK without an authenticated session');
  return session;
};

/**
 * The SDK's era rule for the one case every 2025-era client sends, decided without its classifier
 * (which validates the message's shape again, on each request): a single JSON-RPC request whose
 * params carry no per-request envelope claim (`_meta` without the protocol-version key), with no
 * MCP-Protocol-Version header or one naming a revision before the first modern one, is legacy (the
 * SDK's "initialize" and "no-claim" outcomes). Anything else (a claim, a modern header, a
 * notification, a batch, a response) is left to `isLegacyRequest`; test/unit/mcp-era.test.ts holds
 * the two to the same answer.
 */
export function plainlyLegacy(headers: Headers, body: unknown): boolean {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return false;
  const m = body as Record<string, unknown>;
  if (m.jsonrpc !== '2.0' || typeof m.method !== 'string' || !(typeof m.id === 'string' || typeof m.id === 'number')) return false;
  const header = headers.get('mcp-protocol-version')?.trim();
  if (header !== undefined && !(header < FIRST_MODERN_PROTOCOL_VERSION)) return false;
  const params = m.params;
  if (params === undefined) return true;
  if (typeof params !== 'object' || params === null || Array.isArray(params)) return false;
  const meta = (params as Record<string, unknown>)._meta;
  if (meta === undefined) return true;
  return typeof meta === 'object' && meta !== null && !Array.isArray(meta) && !(PROTOCOL_VERSION_META_KEY in meta);
}

/** A plain 2025-era `tools/call` as plainToolCall reads it. */
export interface PlainToolCall {
  id: string | number;
  name: string;
  args: Record<string, unknown>;
}

const plainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const onlyKeys = (o: Record<string, unknown>, allowed: readonly string[]) => Object.keys(o).every((k) => allowed.includes(k));

/**
 * The request nearly every call of a 2025-era client is: one `tools/call`, nothing else in it (no
 * `_meta`, no extra member), with the headers the SDK's stateless transport would accept (Accept
 * naming JSON and event streams, a JSON Content-Type, no session id, a supported 2025-era
 * MCP-Protocol-Version or none). Such a request is answered without building the SDK's server and
 * transport for it (docs/decisions.md, "MCP tool calls without a server per request"): the answer
 * is the same JSON-RPC result callTool gives the SDK's handler, and test/integration/mcp.test.ts
 * holds the two paths to the same answers. Anything else (null here) goes through the SDK.
 */
export function plainToolCall(header: (name: string) => string | undefined, body: unknown): PlainToolCall | null {
  if (!plainObject(body) || !onlyKeys(body, ['jsonrpc', 'id', 'method', 'params'])) return null;
  if (body.jsonrpc !== '2.0' || body.method !== 'tools/call') return null;
  const id = body.id;
  if (!(typeof id === 'string' || (typeof id === 'number' && Number.isSafeInteger(id)))) return null;
  const params = body.params;
  if (!plainObject(params) || !onlyKeys(params, ['name', 'arguments']) || typeof params.name !== 'string') return null;
  if (params.arguments !== undefined && !plainObject(params.arguments)) return null;
  const accept = header('accept') ?? '';
  if (!accept.includes('application/json') || !accept.includes('text/event-stream')) return null;
  if (!isJsonContentType(header('content-type') ?? null)) return null;
  if (header('mcp-session-id') !== undefined) return null;
  const version = header('mcp-protocol-version');
  if (version !== undefined && !(SUPPORTED_PROTOCOL_VERSIONS.includes(version) && version < FIRST_MODERN_PROTOCOL_VERSION)) return null;
  return { id, name: params.name, args: (params.arguments as Record<string, unknown> | undefined) ?? {} };
}

export interface McpDoor {
  /** Serves one authenticated POST; `parsedBody` is the JSON body when it parsed (else the SDK answers -32700). */
  serve(request: Request, session: McpSession, parsedBody: unknown): Promise<Response>;
  /**
   * The JSON-RPC response to a plain tools/call (plainToolCall) of a tool the endpoint serves, or
   * null when the request is not one: then `serve` answers it.
   */
  callPlainly(call: PlainToolCall, session: McpSession): Promise<Record<string, unknown> | null>;
  close(): Promise<void>;
}

export function createMcpDoor(opts: { maxRequestBodySize: number; onerror: (err: Error) => void }): McpDoor {
  // Modern leg: legacy traffic never reaches it (routed below), so 'reject' only guards that invariant.
  const modern = createMcpHandler((ctx) => buildServer(sessionOf(ctx)), {
    legacy: 'reject',
    responseMode: 'json',
    maxRequestBodySize: opts.maxRequestBodySize,
    onerror: opts.onerror,
  });

  // Legacy leg: the SDK's stateless idiom (a server and a transport per request, no session id),
  // with JSON responses instead of a one-event SSE stream.
  async function legacy(request: Request, session: McpSession, parsedBody: unknown): Promise<Response> {
    const server = buildServer(session);
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
      maxRequestBodySize: opts.maxRequestBodySize,
    });
    transport.onerror = opts.onerror;
    await server.connect(transport);
    try {
      return await transport.handleRequest(request, parsedBody === undefined ? {} : { parsedBody });
    } finally {
      await transport.close().catch(() => {});
      await server.close().catch(() => {});
    }
  }

  return {
    async callPlainly(call, session) {
      const op = operationNamed(session.endpoint, call.name);
      if (!op) return null; // the SDK's protocol error for a tool the endpoint does not serve
      return { result: await callTool(op, call.args, session), jsonrpc: '2.0', id: call.id };
    },
    async serve(request, session, parsedBody) {
      const p = session.principal;
      const authInfo: AuthInfo =
        'grant' in p
          ? {
              token: 'oauth',
              clientId: p.grant.clientId,
              scopes: [...p.grant.scopes],
              expiresAt: p.grant.expiresAt,
              resource: new URL(p.grant.resource),
              extra: { [SESSION]: session },
            }
          : { token: 'svc_mcp', clientId: `mcp_credential:${p.key.id}`, scopes: [...scopesHeld(p)], extra: { [SESSION]: session } };
      const routeLegacy =
        plainlyLegacy(request.headers, parsedBody) ||
        (parsedBody === undefined ? await isLegacyRequest(request.clone()) : await isLegacyRequest(request, parsedBody));
      if (routeLegacy) return legacy(request, session, parsedBody);
      return modern.fetch(request, { authInfo, ...(parsedBody === undefined ? {} : { parsedBody }) });
    },
    close: () => modern.close(),
  };
}
