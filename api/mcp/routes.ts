import { Readable } from 'node:stream';
import type Koa from 'koa';
import type Router from '@koa/router';
import type { OperationDeps } from '../operation.js';
import { HttpError, forbidden } from '../http/errors.js';
import { MCP_PREFIX, bearerToken, callerOf, oauthCallerOf, type AccessTokenReader, type McpPrincipal } from '../http/auth.js';
import { BASE_SCOPE, resourceMetadataUrl, resourceUrl } from '../../domain/oauth/index.js';
import { MAX_JSON_DEPTH, bodyText, nestsDeeperThan, readRawBody } from '../http/body.js';
import { createMcpDoor, plainToolCall, PROTOCOL_VERSIONS, type McpSession } from './server.js';
import { buildManifest, isServerKey, type McpEndpoint } from './tools.js';

/**
 * The HTTP side of the MCP door, inside the Koa app: POST /mcp (every tool the credential may use)
 * and POST /mcp/v1/<server> for each server key of the contract, plus the generated manifest at
 * GET /api-docs/mcp.json. Everything decided before JSON-RPC (unknown server, Origin, credential,
 * suspended account, rate limit, body size, other HTTP methods) answers an HTTP status in the v3
 * error envelope, like every other path of the API; from there on the SDK answers in JSON-RPC.
 *
 * Two bearers open it: an MCP connection credential (`svc_mcp_…`, looked up as keys are) and an
 * OAuth access token from the authorization server on this API (api/oauth), which `readToken`
 * reads with its person in one statement; a token is bound to the one endpoint it was issued for.
 */
export function mountMcp(router: Router, deps: OperationDeps, readToken: AccessTokenReader): void {
  const door = createMcpDoor({
    maxRequestBodySize: deps.config.bodyLimitBytes,
    onerror: (err) => deps.log.debug({ err: err.message }, 'mcp request refused'),
  });
  const manifest = buildManifest(PROTOCOL_VERSIONS);

  router.post('/mcp', (ctx) => serve(ctx, 'all'));
  router.post('/mcp/v1/:server', (ctx) => {
    const key = ctx.params.server;
    if (!isServerKey(key)) {
      ctx.state.route = 'POST /mcp/v1/{server}';
      throw new HttpError(404, `There is no MCP server named ${key}.`);
    }
    return serve(ctx, key);
  });
  router.get('/api-docs/mcp.json', (ctx) => {
    ctx.state.route = 'GET /api-docs/mcp.json';
    ctx.body = manifest;
  });

  async function serve(ctx: Koa.Context, endpoint: McpEndpoint): Promise<void> {
    ctx.state.route = endpoint === 'all' ? 'POST /mcp' : 'POST /mcp/v1/{server}';
    ctx.state.envelope = 'v3';
    checkOrigin(ctx);

    const server = endpoint === 'all' ? null : endpoint;
    const base = deps.config.publicBaseUrl;
    const bearer = bearerToken(ctx.get('authorization'));
    // An svc_mcp_ credential: the same check and rate window as REST, on the other surface. Any
    // other bearer is an OAuth access token, or nothing this door knows (a REST key is refused).
    const caller =
      bearer !== null && !bearer.startsWith(MCP_PREFIX)
        ? oauthCallerOf(ctx, deps, readToken, resourceUrl(base, server), { mcp: endpoint })
        : callerOf(ctx, deps, 'mcp', { mcp: endpoint });
    const metadataUrl = resourceMetadataUrl(base, server);
    const challenged = (err: unknown) =>
      err instanceof HttpError && err.status === 401
        ? new HttpError(401, err.message, { headers: { 'WWW-Authenticate': bearerChallenge(ctx, err.message, metadataUrl) } })
        : err;
    const { principal, rc } = await caller.catch((err: unknown) => {
      throw challenged(err);
    });
    try {
      requireLiveIssuer(principal);
    } catch (err) {
      throw challenged(err);
    }
    // Every token carries mcp:use (domain/oauth/scopes.ts grantFromTicks); one without it opens nothing.
    if ('grant' in principal && !principal.grant.scopes.includes(BASE_SCOPE))
      throw new HttpError(403, `This connection was not granted ${BASE_SCOPE}; connect again.`, {
        reason: 'insufficient_scope',
        headers: { 'WWW-Authenticate': scopeChallenge([BASE_SCOPE], metadataUrl) },
      });
    const session: McpSession = { endpoint, principal, rc, deps };

    const raw = await readRawBody(ctx, deps.config.bodyLimitBytes);
    const text = bodyText(raw);
    if (nestsDeeperThan(text, MAX_JSON_DEPTH))
      throw new HttpError(400, `The request body may not nest deeper than ${MAX_JSON_DEPTH} levels.`);
    let parsedBody: unknown = undefined;
    try {
      parsedBody = raw.length ? JSON.parse(text) : undefined;
    } catch {
      // Left to the SDK, which answers the JSON-RPC parse error (-32700).
    }
    const plain = plainToolCall((name) => ctx.get(name) || undefined, parsedBody);
    const answered = plain && (await door.callPlainly(plain, session));
    if (answered) {
      ctx.status = 200;
      ctx.type = 'application/json';
      ctx.body = JSON.stringify(answered);
    } else await serveThroughSdk(ctx, session, raw, parsedBody);
    // A tool the token's scopes do not cover: its tool error stays the body (a client that reads
    // it sees the missing scope named), and the answer becomes the MCP authorization spec's
    // step-up (403 insufficient_scope), which a client answers by authorizing again for them.
    if (session.stepUp) {
      ctx.status = 403;
      ctx.set('WWW-Authenticate', scopeChallenge(session.stepUp, metadataUrl));
    }
  }

  /** Hands the request to the SDK's door as a web Request, and its web Response back to Koa. */
  async function serveThroughSdk(ctx: Koa.Context, session: McpSession, raw: Buffer, parsedBody: unknown): Promise<void> {
    const headers = new Headers();
    for (const [k, v] of Object.entries(ctx.req.headers)) {
      if (v !== undefined && k !== 'authorization' && k !== 'content-length') headers.set(k, Array.isArray(v) ? v.join(', ') : v);
    }
    const request = new Request(new URL(ctx.originalUrl, `http://${ctx.host || 'localhost'}`), {
      method: 'POST',
      headers,
      body: new Uint8Array(raw),
    });
    await respond(ctx, await door.serve(request, session, parsedBody));
  }
}

/**
 * The challenge of a refused credential (RFC 6750 section 3, which the MCP authorization spec
 * builds on): `error="invalid_token"` with the reason when one was sent and is wrong, revoked or
 * expired, so a client reports "not authenticated" rather than a transport failure; and always
 * `resource_metadata` (RFC 9728 section 5.1), the endpoint's protected-resource metadata, where an
 * OAuth client discovers the authorization server that issues tokens for it.
 */
function bearerChallenge(ctx: Koa.Context, reason: string, metadataUrl: string): string {
  const params = ['realm="mcp"'];
  if (ctx.get('authorization')) params.push('error="invalid_token"', `error_description="${reason.replace(/["\\]/g, '')}"`);
  params.push(`resource_metadata="${metadataUrl}"`);
  return `Bearer ${params.join(', ')}`;
}

/**
 * The step-up challenge (RFC 6750 section 3.1, MCP authorization "Runtime Insufficient Scope
 * Errors"): `scope` is every scope the refused operation needs, mcp:use and the capability with the
 * missing one, so a 2025-era client that re-authorizes with exactly these keeps the capability,
 * and a 2026-era client (which adds what it held before) asks for nothing the operation does not need.
 */
function scopeChallenge(scopes: readonly string[], metadataUrl: string): string {
  return [
    'Bearer realm="mcp"',
    'error="insufficient_scope"',
    `scope="${scopes.join(' ')}"`,
    `resource_metadata="${metadataUrl}"`,
    'error_description="This connection was not granted a scope this request needs."',
  ].join(', ');
}

/**
 * An MCP credential acts as the person who issued it, an OAuth token as the person who allowed the
 * connection (api/mcp/tools.ts toolPermissionOf), so without a live person it opens nothing, not
 * even the tools whose REST twin checks only the account: read from the request's own
 * authentication statement, so a deactivation is seen by the very next request.
 */
function requireLiveIssuer(p: McpPrincipal): void {
  if (!p.user) throw forbidden('This MCP credential has no issuing user; create a new one.', 'issuer_required');
  if (p.user.active) return;
  // An OAuth token is the person's own sign-in: theirs ended, it is no longer a token (401, with the
  // metadata to sign in again); an svc_mcp_ credential is refused where its issuer is needed, as keys are (403).
  if ('grant' in p) throw new HttpError(401, 'The person who allowed this connection is deactivated.');
  throw forbidden('The user who issued this MCP credential is deactivated.', 'issuer_inactive');
}

/**
 * DNS-rebinding guard the MCP transport spec asks for: a browser page may only reach the endpoint
 * from the API's own origin. Clients that are not browsers send no Origin and are not affected.
 */
function checkOrigin(ctx: Koa.Context): void {
  const origin = ctx.get('origin');
  if (!origin) return;
  let host: string;
  try {
    host = new URL(origin).host;
  } catch {
    host = '';
  }
  if (host !== ctx.host) throw new HttpError(403, 'This origin may not call the MCP endpoint.', { reason: 'origin_not_allowed' });
}

/** Hands the SDK's web Response back to Koa (status, headers, body), so logging and error handling stay Koa's. */
async function respond(ctx: Koa.Context, response: Response): Promise<void> {
  ctx.status = response.status;
  response.headers.forEach((v, k) => {
    if (k !== 'content-length') ctx.set(k, v);
  });
  const type = response.headers.get('content-type') ?? '';
  if (response.body && type.startsWith('text/event-stream')) {
    ctx.body = Readable.fromWeb(response.body as import('node:stream/web').ReadableStream);
    return;
  }
  const text = await response.text();
  ctx.body = text.length ? text : null;
  ctx.status = response.status; // an empty body (202 for a notification) must not turn into Koa's 204
}
