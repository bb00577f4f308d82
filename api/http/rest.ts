import type { Operation, OperationDeps } from '../operation.js';
import type { OperatorContext } from '../../services/platform/context.js';
import { successOf, type RouteDef } from './registry.js';
import { answerCheck } from './answer-check.js';

/**
 * The REST door of an operation: the route reads the path, the query or the body (validated by the
 * door against the operation's schemas), calls the one handler with the caller's context, and wraps
 * the result in the contract's success envelope. Account operations get the key's request context;
 * operator operations (the operator token was checked by the door) act as the operator.
 */
/** What every door's route takes from its operation: where it is and how the documents name it. */
export const routeOf = (op: Operation) => ({
  method: op.method,
  path: op.path,
  tag: op.tag,
  summary: op.summary,
  description: op.description,
  operationId: op.name,
});

export function restRoute(op: Operation, deps: OperationDeps): RouteDef {
  const checkAnswer = deps.config?.checkAnswers ? answerCheck(op.name, op.output.schema) : undefined;
  return {
    ...routeOf(op),
    auth: op.auth,
    permission: op.permission,
    issuerRequired: op.issuerRequired,
    envelope: op.envelope,
    body: op.body,
    query: op.query ?? (op.body ? undefined : { type: 'object', properties: {}, additionalProperties: true }),
    ...(op.headers ? { headers: headerParams(op) } : {}),
    ...(op.bodyLimitBytes ? { bodyLimitBytes: op.bodyLimitBytes } : {}),
    // Data endpoints answer in their native envelope (no status wrapper).
    response: {
      status: op.output.status,
      description: op.output.description,
      ...(op.output.alsoStatus ? { alsoStatus: op.output.alsoStatus } : {}),
      schema:
        op.envelope === 'data' || op.envelope === 'engine'
          ? op.output.schema
          : op.output.besideStatus
            ? besideStatusOf(op.output.schema)
            : successOf(op.output.schema),
    },
    cli: op.cli,
    refusals: op.refusals,
    ...(op.invalidReason ? { invalidReason: op.invalidReason } : {}),
    // A GET the operation declares a read (its tool's readOnlyHint): nothing it does needs undoing if its answer is dropped.
    ...(op.method === 'GET' && op.mcp?.annotations?.readOnlyHint === true ? { readsOnly: true } : {}),
    ...(op.admitsInStatement ? { admitsInStatement: op.admitsInStatement } : {}),
    handler: async ({ ctx, rc, params, body, query }) => {
      const input: Record<string, unknown> = { ...(op.body ? body : query), ...params };
      for (const [header, field] of Object.entries(op.headers ?? {})) if (ctx.get(header) !== '') input[field] = ctx.get(header);
      const call = op.auth === 'operator' ? { oc: operatorContext(deps, op), deps } : op.auth === 'rest' ? { rc, deps } : { deps };
      const data = await op.handler(call, input);
      checkAnswer?.(data);
      const headers = { ...(op.secretInAnswer ? { 'Cache-Control': 'no-store' } : {}), ...op.answerHeaders?.(data) };
      return {
        status: op.answerStatus?.(data) ?? op.output.status,
        body:
          op.envelope === 'data' || op.envelope === 'engine'
            ? data
            : op.output.besideStatus
              ? { status: 'success', ...(data as object) }
              : { status: 'success', data },
        ...(Object.keys(headers).length ? { headers } : {}),
      };
    },
  };
}

/** The success envelope of an answer whose fields sit beside `status` (OperationOutput.besideStatus). */
function besideStatusOf(schema: Record<string, unknown>): Record<string, unknown> {
  const s = schema as { required?: string[]; properties?: Record<string, unknown> };
  return {
    type: 'object',
    required: ['status', ...(s.required ?? [])],
    properties: { status: { const: 'success' }, ...s.properties },
  };
}

/** The headers an operation reads, each documented with its field's schema. */
function headerParams(op: Operation): Record<string, { schema: Record<string, unknown>; description?: string }> {
  const props = ((op.body ?? op.query)?.properties ?? {}) as Record<string, { description?: string }>;
  return Object.fromEntries(
    Object.entries(op.headers ?? {}).map(([header, field]) => {
      const { description, ...schema } = props[field] ?? { type: 'string' };
      return [header, { schema, description: `Also accepted as the ${field} field. ${description ?? ''}`.trim() }];
    }),
  );
}

/** The operator as the actor: one EntityManager for the request, logs naming the operation. */
function operatorContext(deps: OperationDeps, op: Operation): OperatorContext {
  return { actor: { kind: 'operator' }, em: deps.orm.em.fork(), log: deps.log.child({ actor: 'operator', operation: op.name }) };
}
