import type { Operation, OperationDeps, PageAnswer, PublicCall } from '../operation.js';
import type { RouteDef, RouteRequest, RouteResult } from './registry.js';
import { FailureThrottle } from './ratelimit.js';
import { routeOf } from './rest.js';
import { toHttpError } from './errors.js';
import { DomainError, rateLimited } from '../../services/platform/errors.js';
import { validateQuery } from '../../services/platform/validation.js';

// The page door: operations a browser uses (the shop page's reads and forms), defined once like any
// other (path, schemas, handler, refusals) and answered in HTML. A form posts
// application/x-www-form-urlencoded fields, read against the operation's body schema with the same
// coercion as a query string (text to numbers, a repeated field to a list); each POST answers 303 back
// to a page (post/redirect/get). A refusal is the domain error's own status and headers, from the one
// mapping every door uses (toHttpError), rendered as the page the operation names.

/** Page requests per client address per minute, per API process (the links are public: bots find them). */
export const PAGE_REQUESTS_PER_MINUTE = 300;
const FORM_LIMIT_BYTES = 16 * 1024;
/** The reason of the door's own per-address refusal (a page shows it without reading anything). */
export const PAGE_THROTTLED = 'too_many_page_requests';

/** The refusals a page shows as a page; anything else is the door's own error (a 500 stays a 500). */
const PAGE_REFUSALS = new Set<DomainError['kind']>(['not_found', 'invalid', 'conflict', 'bad_request', 'forbidden', 'rate_limited']);

/** A form's declared fields as one object: a list field takes every value sent, any other the last. */
export function formFields(raw: string, schema: { properties?: Record<string, { type?: unknown }> } | undefined): Record<string, unknown> {
  const form = new URLSearchParams(raw);
  const out: Record<string, unknown> = {};
  for (const key of new Set(form.keys())) {
    if (!Object.hasOwn(schema?.properties ?? {}, key)) continue; // only the fields the form declares are read at all
    const values = form.getAll(key);
    const types = ([] as unknown[]).concat(schema?.properties?.[key]?.type ?? []);
    if (types.includes('array')) out[key] = values;
    // An empty field that is not text (a size left unchosen) is not sent; empty text is a value (a cleared note).
    else if (values.at(-1) !== '' || types.includes('string')) out[key] = values.at(-1);
  }
  return out;
}

/** The page routes of these operations, sharing one per-address throttle. */
export function pageRoutes(ops: readonly Operation[], deps: OperationDeps): RouteDef[] {
  const throttle = new FailureThrottle(PAGE_REQUESTS_PER_MINUTE);
  return ops.map((op) => pageRoute(op, deps, throttle));
}

function pageRoute(op: Operation, deps: OperationDeps, throttle: FailureThrottle): RouteDef {
  if (!op.page || op.auth !== 'public') throw new Error(`${op.name}: the page door serves public page operations only`);
  const door = op.page;
  const isForm = op.method !== 'GET';
  const html = (req: RouteRequest, status: number, body: string): RouteResult => {
    req.ctx.type = 'html';
    return { status, body, headers: door.headers };
  };
  /** A refusal as the page the operation names; a refusal met while drawing it (an unknown basket) is shown instead. */
  const refusal = async (req: RouteRequest, call: PublicCall, err: unknown, again = true): Promise<RouteResult> => {
    if (!(err instanceof DomainError) || !PAGE_REFUSALS.has(err.kind)) throw err;
    try {
      const page = await door.refusal(call, req.params, err);
      const { status, extra } = toHttpError(err);
      for (const [name, value] of Object.entries(extra.headers ?? {})) req.ctx.set(name, value);
      return html(req, status, page);
    } catch (other) {
      if (again && other instanceof DomainError && other.kind !== err.kind) return refusal(req, call, other, false);
      throw other;
    }
  };
  return {
    ...routeOf(op),
    auth: 'public',
    html: true,
    ...(isForm ? { rawBody: true, bodyLimitBytes: op.bodyLimitBytes ?? FORM_LIMIT_BYTES } : { query: op.query }),
    response: { status: op.output.status, description: op.output.description, schema: { type: 'string' } },
    refusals: op.refusals,
    handler: async (req) => {
      const { ctx } = req;
      const call: PublicCall = { deps, client: { address: ctx.ip } };
      try {
        // Every page request of the address counts (the throttle's "failures" are simply requests here).
        if (throttle.blocked(ctx.ip)) throw rateLimited('Too many requests from your network. Try again in a minute.', 60, PAGE_THROTTLED);
        throttle.fail(ctx.ip);
        const fields = isForm
          ? validateQuery<Record<string, unknown>>(
              op.body ?? { type: 'object' },
              formFields((ctx.state.rawBody as Buffer | undefined)?.toString('utf8') ?? '', op.body),
            )
          : req.query;
        const answer = (await op.handler(call, { ...fields, ...req.params })) as PageAnswer;
        if ('redirect' in answer) return { status: 303, body: '', headers: { ...door.headers, Location: answer.redirect } };
        return html(req, op.output.status, answer.html);
      } catch (err) {
        return refusal(req, call, err);
      }
    },
  };
}
