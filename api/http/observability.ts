import type Koa from 'koa';
import type { Config } from '../../config.js';
import { requestIdFor, withRequestId } from '../../observability/request-id.js';
import { collectProcessMetrics, httpRequestDuration, httpRequests, registry, routeLabel } from '../../observability/metrics.js';
import { authenticateOperator } from './auth.js';

const KNOWN_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

/**
 * The outermost middleware: gives the request its id (the caller's X-Request-Id when sane, else a
 * new one), echoes it, runs the rest of the request inside it (log lines, workflow memos), and counts
 * the answer by route template and status once every other middleware has set the final status.
 */
export function observeRequests(): Koa.Middleware {
  return async (ctx, next) => {
    const started = process.hrtime.bigint();
    const id = requestIdFor(ctx.get('x-request-id') || undefined);
    ctx.state.requestId = id;
    ctx.set('X-Request-Id', id);
    try {
      await withRequestId(id, next);
    } finally {
      // A made-up method or an unknown path must not mint a new series per request.
      const method = KNOWN_METHODS.has(ctx.method) ? ctx.method : 'other';
      const route = routeLabel(ctx.state.route, (ctx as { _matchedRoute?: unknown })._matchedRoute);
      httpRequests.inc({ method, route, status: String(ctx.status) });
      httpRequestDuration.observe({ method, route }, Number(process.hrtime.bigint() - started) / 1e9);
    }
  };
}

/**
 * GET /metrics in Prometheus text. On the operator listener (OPERATOR_PORT, kept off the public
 * network) it needs no credential, as scrapers expect; on a single listener that also serves
 * customers it takes the operator token, like /admin/v1. The public listener of a split deployment
 * does not serve it at all.
 */
export function metricsHandler(config: Config, surface: 'all' | 'operator'): Koa.Middleware {
  collectProcessMetrics();
  return async (ctx) => {
    ctx.state.route = 'GET /metrics';
    if (surface === 'all') authenticateOperator(ctx, config);
    ctx.set('Content-Type', registry.contentType);
    ctx.body = await registry.metrics();
  };
}
