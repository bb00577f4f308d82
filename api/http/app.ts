import Koa from 'koa';
import Router from '@koa/router';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { Client } from '@temporalio/client';
import type { Config } from '../../config.js';
import type { Logger } from '../../logger.js';
import { HttpError, TEMPORARY_FAILURE, asHttpError, v3ErrorBody, dataErrorBody, engineErrorBody } from './errors.js';
import { koaPath, type RouteDef, type RouteResult } from './registry.js';
import { readRawBody, parseBody } from './body.js';
import { validateBody, validateQuery, unstorableTextAt } from './validation.js';
import { admittedInStatement, authenticateOperator, authorizeIssuer, callerOf, readAsCaller } from './auth.js';
import type { RequestContext } from './context.js';
import { allRoutes } from '../operations.js';
import { shadows } from './precedence.js';
import { requestStarted, requestEnded } from '../../services/platform/load.js';
import { mountMcp } from '../mcp/routes.js';
import { createProvider } from '../oauth/provider.js';
import { mountOAuth } from '../oauth/routes.js';
import { accessTokenReader } from '../oauth/bearer.js';
import { metricsHandler, observeRequests } from './observability.js';

export interface AppDeps {
  config: Config;
  orm: MikroORM;
  temporal: Client;
  log: Logger;
}

const METHODS_WITH_BODY = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
const ROUTE_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];

/**
 * Which routes an app serves: all of them (the default), or, when the operator API listens on its
 * own address (OPERATOR_PORT), the public surface without /admin/v1 and the operator surface alone.
 */
export type Surface = 'all' | 'public' | 'operator';

export function createApp(deps: AppDeps, surface: Surface = 'all'): Koa {
  // The client address (ctx.ip: failure throttles, the shop page's limit) is read from
  // X-Forwarded-For only behind the proxies the deployment declares, and then only the address the
  // nearest of them recorded for the one before it; X-Forwarded-Host and -Proto come with Koa's proxy mode.
  const hops = deps.config.trustedProxyHops;
  const app = new Koa({ proxy: hops > 0, maxIpsCount: hops });
  const router = new Router();
  const routes = allRoutes(deps).filter(
    (r) => surface === 'all' || (r.auth === 'operator' || r.operatorSurface === true) === (surface === 'operator'),
  );

  app.use(observeRequests());
  app.use(async (ctx, next) => {
    const started = process.hrtime.bigint();
    requestStarted();
    // Every answer, errors and the MCP transport's own writes included: browsers never guess a type.
    ctx.set('X-Content-Type-Options', 'nosniff');
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined) {
        const match = router.match(ctx.path, ctx.method);
        if (match.path.length > 0 && !match.route) {
          const allowed = [...new Set(match.path.flatMap((l) => l.methods))].join(', ');
          throw new HttpError(405, `The ${ctx.method} method is not supported for this route. Supported methods: ${allowed}.`, {
            headers: { Allow: allowed },
          });
        }
        throw new HttpError(404, 'The requested resource was not found.');
      }
    } catch (err) {
      const e = asHttpError(err) ?? unexpected(err, deps.log, ctx);
      if (e.extra.reason === TEMPORARY_FAILURE && !(err instanceof HttpError))
        deps.log.warn({ err, requestId: ctx.state.requestId, route: ctx.state.route, method: ctx.method }, 'dependency unavailable');
      ctx.status = e.status;
      for (const [k, v] of Object.entries(e.extra.headers ?? {})) ctx.set(k, v);
      // RFC 6750: every 401 names the scheme it expects, whichever door refused.
      if (e.status === 401 && !ctx.response.get('WWW-Authenticate')) ctx.set('WWW-Authenticate', 'Bearer');
      if (ctx.state.envelope === 'engine') {
        // The engine's own renderer (RFC 9457 problem details), not the v3 one.
        ctx.body = engineErrorBody(e);
        ctx.type = 'application/problem+json';
      } else ctx.body = ctx.state.envelope === 'data' ? dataErrorBody(e) : v3ErrorBody(e);
    } finally {
      requestEnded();
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      deps.log.info(
        {
          requestId: ctx.state.requestId,
          account: ctx.state.accountId,
          route: ctx.state.route ?? ctx.path,
          method: ctx.method,
          status: ctx.status,
          ms: Math.round(ms * 10) / 10,
        },
        'request',
      );
    }
  });

  // A fixed path is never read as another route's parameter: GET /api/v3/sms/send answers 405 (Allow:
  // POST) instead of GET /api/v3/sms/{uid} looking up a message called "send", and OPTIONS
  // …/products/batch names the batch's methods, not those of …/products/{product}. Every path that is
  // fixed, or more specific than another route's (a literal segment where the other has a parameter),
  // gets its refusals registered first, so they run before any parameter route that also matches.
  const methodsByPath = new Map<string, string[]>();
  for (const def of routes) (methodsByPath.get(def.path) ?? methodsByPath.set(def.path, []).get(def.path)!).push(def.method);
  const paths = [...methodsByPath.keys()];
  for (const [path, methods] of methodsByPath) {
    if (path.includes('{') && !paths.some((other) => shadows(path, other))) continue;
    // HEAD is the router's own answer wherever GET is served.
    const others = ROUTE_METHODS.filter((m) => !methods.includes(m) && !(m === 'HEAD' && methods.includes('GET')));
    const allowed = methods.join(', ');
    router.register(koaPath(path), others, (ctx) => {
      throw new HttpError(405, `The ${ctx.method} method is not supported for this route. Supported methods: ${allowed}.`, {
        headers: { Allow: allowed },
      });
    });
  }
  for (const def of routes) {
    router.register(koaPath(def.path), [def.method], (ctx) => runRoute(deps, def, ctx));
  }
  if (surface !== 'operator') {
    // The MCP door and the authorization server that issues its OAuth tokens (api/oauth).
    const provider = createProvider(deps);
    mountOAuth(router, deps, provider);
    mountMcp(router, deps, accessTokenReader(deps.orm));
  }
  if (surface !== 'public') router.get('/metrics', metricsHandler(deps.config, surface));
  app.use(router.routes());
  return app;
}

function unexpected(err: unknown, log: Logger, ctx: Koa.Context): HttpError {
  const status = (err as { status?: number; expose?: boolean }).status;
  if (status && status >= 400 && status < 500) return new HttpError(status, 'The request could not be processed.');
  log.error({ err, requestId: ctx.state.requestId, route: ctx.state.route, method: ctx.method }, 'unhandled error');
  return new HttpError(500, 'Something went wrong on our side. The request may be retried.');
}

async function runRoute(deps: AppDeps, def: RouteDef, ctx: Koa.Context): Promise<void> {
  ctx.state.route = `${def.method} ${def.path}`;
  ctx.state.envelope = def.envelope ?? 'v3';
  let result: RouteResult;
  const admits = def.admitsInStatement === true || (def.admitsInStatement !== undefined && def.admitsInStatement(ctx.query));
  if (def.auth === 'rest' && admits) {
    // A handler whose one statement can authenticate the request too: one round trip for both.
    result = await admittedInStatement(ctx, deps, def, (rc) => answer(deps, def, ctx, rc));
  } else if (def.auth === 'rest' && def.readsOnly) {
    // A read may start beside its authentication (api/http/speculation.ts); its refusals of the
    // path and the query still come after the authentication's own.
    result = await readAsCaller(ctx, deps, def, (rc) => answer(deps, def, ctx, rc));
  } else if (def.auth === 'rest') {
    // Only account routes get a request-scoped EntityManager; provider receipts (thousands a second)
    // and operator routes open their own where they need one.
    const caller = await callerOf(ctx, deps, 'rest', {}, def.envelope === 'engine' ? 'engine' : 'v3');
    if (def.issuerRequired || def.permission) authorizeIssuer(caller.principal, def.permission);
    result = await answer(deps, def, ctx, caller.rc);
  } else {
    if (def.auth === 'operator') authenticateOperator(ctx, deps.config);
    result = await answer(deps, def, ctx, undefined as unknown as RequestContext);
  }
  ctx.status = result.status ?? 200;
  for (const [k, v] of Object.entries(result.headers ?? {})) ctx.set(k, v);
  ctx.body = result.body;
}

/** The request read and checked (path, body, query) and the route's handler called: everything after the door. */
/** A schema's 422 on a route whose refusals all carry a reason (RouteDef.invalidReason) carries it too. */
function withInvalidReason(err: unknown, reason: string | undefined): unknown {
  const e = reason ? asHttpError(err) : undefined;
  return e && e.status === 422 && !e.extra.reason ? new HttpError(422, e.message, { ...e.extra, reason }) : err;
}

async function answer(deps: AppDeps, def: RouteDef, ctx: Koa.Context, rc: RequestContext): Promise<RouteResult> {
  // A path segment with a NUL or an unpaired surrogate names nothing PostgreSQL could even compare.
  if (unstorableTextAt(ctx.params) !== undefined)
    throw new HttpError(400, 'The request path contains a NUL character or an unpaired surrogate.');
  let body: unknown = {};
  // Only a route that reads a body refuses one (400/413/415); a body sent to a DELETE is ignored.
  if (METHODS_WITH_BODY.has(def.method) && (def.body || def.rawBody)) {
    // Read once: a write that runs again as a fresh principal (admittedInStatement) gets the same body.
    const raw = (ctx.state.rawBody as Buffer | undefined) ?? (await readRawBody(ctx, def.bodyLimitBytes ?? deps.config.bodyLimitBytes));
    ctx.state.rawBody = raw;
    if (!def.rawBody) body = parseBody(ctx, raw);
  }
  let query: unknown = ctx.query;
  try {
    if (def.body) {
      if (body === null || typeof body !== 'object' || Array.isArray(body))
        throw new HttpError(400, 'The request body must be a JSON object.');
      body = validateBody(def.body, body);
    }
    if (def.query) query = validateQuery(def.query, ctx.query as Record<string, unknown>);
  } catch (err) {
    throw withInvalidReason(err, def.invalidReason);
  }
  // Objects by now: a body schema is always an object schema, and Koa parses the query into one.
  return def.handler({
    ctx,
    rc,
    body: body as Record<string, unknown>,
    query: query as Record<string, unknown>,
    params: ctx.params as Record<string, string>,
  });
}
