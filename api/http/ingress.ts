import type http from 'node:http';
import type { AppDeps } from './app.js';
import { HttpError, asHttpError, v3ErrorBody } from './errors.js';
import { emptyQuery, type RouteDef } from './registry.js';
import { closeAfterAnswer } from './body.js';
import type { JsonSchema } from './validation.js';
import { requestStarted, requestEnded } from '../../services/platform/load.js';
import {
  providerWebhooks,
  type ChatOrderHook,
  type InboundWebhookHook,
  type ReplyHook,
  type WebhookAnswer,
} from '../../services/messaging/ingress.js';
import { receiveGroupWebhook } from '../../services/groups/index.js';
import { receiveTemplateWebhook } from '../../services/templates/index.js';
import { receiveChatOrder } from '../../services/orders/index.js';
import { receiveFlowReply } from '../../services/flows/index.js';
import { receiveFormReply } from '../../services/forms/index.js';
import { paymentWebhooks } from '../../services/payments/index.js';
import { requestIdFor, withRequestId } from '../../observability/request-id.js';
import { httpRequestDuration, httpRequests } from '../../observability/metrics.js';

// Raw ingress: requests that third parties post to us (provider receipts, inbound messages, later
// payment and chat-platform webhooks). They are signed over their exact bytes, answered in the
// caller's own terms, and some are the API's busiest requests: SMS delivery receipts come two per
// message, thousands a second during a campaign, and Koa and the router cost more than the receipt
// itself (bench/receipts.ts, docs/benchmarks.md). So the server answers every hook with plain
// node:http before handing anything else to Koa. The same hooks are also Koa routes (tag 'Provider
// ingress'), which put them in the OpenAPI document and answer the same way wherever the Koa app is
// used on its own. A new webhook is one more entry in ingressHooks.

export type IngressAnswer = WebhookAnswer;

export interface IngressHook {
  method: 'GET' | 'POST';
  /** Exact path; the query string is the caller's (e.g. the uid our status callback URL carries). */
  path: string;
  /** Who calls it: the provider key of the adapter that reads it. */
  provider: string;
  summary: string;
  answer: { status: number; description: string; schema: JsonSchema };
  query?: JsonSchema;
  /** The raw body, the headers (lower-case names) and the path and query as received. Refusals throw domain errors. */
  handle(raw: Buffer, headers: http.IncomingHttpHeaders, url: string): Promise<IngressAnswer>;
}

const hooks = new WeakMap<AppDeps, IngressHook[]>();
const NOSNIFF = { 'x-content-type-options': 'nosniff' } as const;

/** Every raw-ingress hook of the service: the provider registry's webhooks (then payment, chat platforms…). */
export function ingressHooks(deps: AppDeps): IngressHook[] {
  let list = hooks.get(deps);
  if (!list) {
    // Chat groups read the group side of each verified webhook, and orders make a chat cart an order:
    // subscribed here, so messaging imports nothing of theirs.
    // Templates read their status updates the same way.
    const inboundHooks: InboundWebhookHook[] = [
      (provider, req) => receiveGroupWebhook(deps, provider, req),
      (provider, req) => receiveTemplateWebhook(deps, provider, req),
    ];
    const chatOrders: ChatOrderHook = (e) => receiveChatOrder(deps, e);
    // A customer's reply reaches the conversations waiting for one (forms, flows): subscribed here too.
    const replyHooks: ReplyHook[] = [(reply) => receiveFlowReply(deps, reply), (reply) => receiveFormReply(deps, reply)];
    // The payment provider's result callbacks are forwarded to each payment's workflow.
    list = [...providerWebhooks({ ...deps, inboundHooks, chatOrders, replyHooks }), ...paymentWebhooks(deps)].map((w) => ({
      method: w.method,
      path: w.path,
      provider: w.provider,
      summary: w.summary,
      answer: w.answer,
      query: w.query,
      handle: (rawBody, headers, url) => w.receive({ rawBody, headers, url }),
    }));
    hooks.set(deps, list);
  }
  return list;
}

/** The hooks as Koa routes: the OpenAPI document's 'Provider ingress' paths, answered by the same handlers. */
export function ingressRoutes(deps: AppDeps): RouteDef[] {
  return ingressHooks(deps).map((hook) => ({
    method: hook.method,
    path: hook.path,
    tag: 'Provider ingress',
    auth: 'provider',
    summary: hook.summary,
    query: hook.query ?? emptyQuery,
    rawBody: true,
    response: hook.answer,
    handler: async ({ ctx }) => {
      const a = await hook.handle((ctx.state.rawBody as Buffer | undefined) ?? Buffer.alloc(0), ctx.headers, ctx.originalUrl);
      if (a.contentType) ctx.type = a.contentType;
      return { status: a.status, body: a.body ?? null };
    },
  }));
}

/** One answered webhook, as the access log sees it. */
export interface AnsweredWebhook {
  requestId: string;
  route: string;
  method: string;
  status: number;
  ms: number;
}

/**
 * The access log of the raw ingress. Receipts come two per message (36,008 info lines for an
 * 18,000-message campaign when each had its own), so an accepted webhook (2xx) is a debug line, and
 * at info one line per window counts what was answered, by route and status, written only when
 * something was. A refusal (signature, body, 5xx) keeps its own info line: those are the ones to look
 * at. `flush` writes the pending count now (at stop, and for tests).
 */
export function webhookAccessLog(log: AppDeps['log'], windowMs = 60_000) {
  const answered = new Map<string, number>();
  let since = 0;
  let timer: NodeJS.Timeout | null = null;
  const flush = () => {
    if (timer) clearTimeout(timer);
    timer = null;
    if (answered.size === 0) return;
    log.info({ answered: Object.fromEntries(answered), seconds: Math.round((Date.now() - since) / 1000) }, 'provider webhooks answered');
    answered.clear();
  };
  const record = (a: AnsweredWebhook) => {
    if (a.status >= 300) log.info(a, 'request');
    else if (log.isLevelEnabled('debug')) log.debug(a, 'request');
    const key = `${a.route} ${a.status}`;
    answered.set(key, (answered.get(key) ?? 0) + 1);
    if (!timer) {
      since = Date.now();
      timer = setTimeout(flush, windowMs).unref();
    }
  };
  return { record, flush };
}

/**
 * A request listener for the hooks, to run ahead of Koa: returns false (request untouched) for every
 * other method and path. Bodies are capped like Koa's; refusals answer in the v3 envelope.
 */
export function rawIngress(deps: AppDeps) {
  const limit = deps.config.bodyLimitBytes;
  const table = new Map(ingressHooks(deps).map((h) => [`${h.method} ${h.path}`, h]));
  const accessLog = webhookAccessLog(deps.log);
  // The last window's count is written when the API exits (its stop ends with process.exit).
  process.once('exit', accessLog.flush);
  return (req: http.IncomingMessage, res: http.ServerResponse): boolean => {
    const url = req.url ?? '';
    const q = url.indexOf('?');
    const hook = table.get(`${req.method} ${q < 0 ? url : url.slice(0, q)}`);
    if (!hook) return false;
    const route = `${hook.method} ${hook.path}`;
    const started = process.hrtime.bigint();
    // The same request id and metrics as the Koa app's requests (api/http/observability.ts).
    const requestId = requestIdFor(req.headers['x-request-id']);
    requestStarted();
    const answer = (status: number, body?: string, contentType?: string, extra: Record<string, string> = {}) => {
      requestEnded();
      if (res.headersSent || res.destroyed) return;
      // nosniff and the request id like every answer of the Koa app (api/http/app.ts), which these never pass through.
      const headers = { ...NOSNIFF, 'x-request-id': requestId, ...extra };
      if (body === undefined || status === 204) res.writeHead(status, headers).end();
      else
        res
          .writeHead(status, {
            ...headers,
            'content-type': `${contentType ?? 'text/plain'}; charset=utf-8`,
            'content-length': Buffer.byteLength(body),
          })
          .end(body);
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      httpRequests.inc({ method: hook.method, route: hook.path, status: String(status) });
      httpRequestDuration.observe({ method: hook.method, route: hook.path }, seconds);
      accessLog.record({ requestId, route, method: hook.method, status, ms: Math.round(seconds * 1e4) / 10 });
    };
    const fail = (err: unknown) => {
      const refusal = asHttpError(err);
      if (refusal) {
        // A provider retries a receipt it got no 2xx for; a 503 of a database outage tells it when.
        if (refusal.status === 503) deps.log.warn({ err, requestId, route }, 'dependency unavailable');
        return answer(refusal.status, JSON.stringify(v3ErrorBody(refusal)), 'application/json', refusal.extra.headers);
      }
      deps.log.error({ err, requestId, route }, 'unhandled error');
      answer(
        500,
        JSON.stringify(v3ErrorBody(new HttpError(500, 'Something went wrong on our side. The request may be retried.'))),
        'application/json',
      );
    };
    const tooLarge = () => new HttpError(413, `The request body may not be larger than ${limit} bytes.`);
    if (Number(req.headers['content-length'] ?? 0) > limit) {
      closeAfterAnswer(req, res);
      fail(tooLarge());
      return true;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit && !done) {
        done = true;
        closeAfterAnswer(req, res);
        fail(tooLarge());
        return;
      }
      if (!done) chunks.push(chunk);
    });
    req.on('error', (err) => {
      if (!done) {
        done = true;
        fail(new HttpError(400, 'The request could not be processed.'));
        deps.log.debug({ err, route }, 'ingress body aborted');
      }
    });
    req.on('end', () => {
      if (done) return;
      done = true;
      withRequestId(requestId, () => hook.handle(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks), req.headers, url)).then(
        (a) => answer(a.status, a.body, a.contentType),
        fail,
      );
    });
    return true;
  };
}
