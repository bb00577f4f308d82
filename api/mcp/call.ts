import type { Operation, OperationDeps } from '../operation.js';
import { splitToolArguments } from '../operation.js';
import type { RequestContext } from '../../services/platform/context.js';
import { refuseUnstorableText, validateBody, validateQuery } from '../../services/platform/validation.js';
import { DomainError, type FieldErrors } from '../../services/platform/errors.js';
import { asHttpError, dataErrorBody, forbidden, v3ErrorBody } from '../http/errors.js';
import { authorizeIssuer, type McpPrincipal } from '../http/auth.js';
import { answerCheck } from '../http/answer-check.js';
import { scopeShortfall, toolOf, toolPermissionOf, wrapsResult } from './tools.js';
import { scopesNeeded } from '../../domain/oauth/index.js';

/**
 * CHECK_ANSWERS (the test suite) holds a tool's answer to its operation's full output schema, as
 * the REST door does, and its structuredContent to the outputSchema tools/list advertises (the
 * projection a client checks it with): so every tool call of the suite shows that the advertised
 * schema and the answer agree, not only the calls made through the SDK client.
 */
const checks = new Map<string, { full: (data: unknown) => void; advertised: (structured: unknown) => void }>();
function checkAnswer(op: Operation, data: unknown, structured: unknown): void {
  let check = checks.get(op.name);
  if (!check) {
    check = {
      full: answerCheck(op.name, op.output.schema),
      advertised: answerCheck(`${op.name} (structuredContent against its advertised outputSchema)`, toolOf(op).outputSchema),
    };
    checks.set(op.name, check);
  }
  check.full(data);
  check.advertised(structured);
}

/** A tools/call result as MCP defines it (content blocks, structured output, error flag). */
export interface ToolResult {
  [key: string]: unknown;
  content: { type: 'text'; text: string }[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
}

export interface ToolCallContext {
  /** An MCP credential's key and issuer, or an OAuth token's person and grant (its scopes, client and endpoint). */
  principal: McpPrincipal;
  rc: RequestContext;
  deps: OperationDeps;
  /**
   * Set by a call the token's scopes do not cover: the scopes the tool needs, which the MCP door
   * answers as the step-up challenge (HTTP 403, `WWW-Authenticate: Bearer error="insufficient_scope"`).
   */
  stepUp?: string[];
}

/**
 * The MCP door of an operation, the twin of api/http/rest.ts: the issuer's live permission is
 * applied as REST applies it, for every tool (toolPermissionOf: an MCP credential is always its person's), the arguments are split back into path parameters and body (or
 * query) and validated by the same ajv functions, and the one handler runs with the caller's
 * context. Refusals become a tool result with isError (the model sees the message, the reason and
 * each field's problem in the v3 error body); nothing internal (stack, SQL) ever reaches it.
 */
export async function callTool(op: Operation, args: Record<string, unknown>, call: ToolCallContext): Promise<ToolResult> {
  try {
    authorizeIssuer(call.principal, toolPermissionOf(op));
    requireScopes(op, call);
    const input = toInput(op, args);
    const data = await op.handler({ rc: call.rc, deps: call.deps }, input);
    // The same test as the advertised outputSchema (tools.ts structuredSchemaOf), so they agree.
    const structuredContent = wrapsResult(op) ? { result: data ?? null } : (data as Record<string, unknown>);
    if (call.deps.config?.checkAnswers) checkAnswer(op, data, structuredContent);
    return { content: [{ type: 'text', text: JSON.stringify(data ?? null) }], structuredContent };
  } catch (err) {
    const refusal = asHttpError(err);
    if (refusal?.status === 503) call.rc.log.warn({ err, tool: op.name }, 'dependency unavailable');
    if (!refusal) {
      call.rc.log.error({ err, tool: op.name }, 'unhandled error in MCP tool');
      return errorResult({ status: 'error', message: 'Something went wrong on our side. The request may be retried.' });
    }
    return errorResult(op.envelope === 'data' ? dataErrorBody(refusal) : v3ErrorBody(refusal));
  }
}

/**
 * The token's scopes, checked after the person's permission: a person who may not do it gets the
 * permission refusal (no scope would help, so no step-up is asked), a person who may gets the
 * scopes the tool lacks named, and the door adds the challenge a client re-authorizes from.
 */
function requireScopes(op: Operation, call: ToolCallContext): void {
  const missing = scopeShortfall(call.principal, op);
  if (!missing.length) return;
  call.stepUp = scopesNeeded(op.mcp!);
  const names = missing.join(' and ');
  throw forbidden(
    `This tool needs the ${names} scope${missing.length > 1 ? 's' : ''}, which this connection was not granted. ` +
      `Connect again and allow ${names} on the consent page.`,
    'insufficient_scope',
  );
}

function errorResult(body: { message: string; status?: string; errors?: FieldErrors }): ToolResult {
  return { content: [{ type: 'text', text: JSON.stringify(body) }], isError: true };
}

/** A 422 of the tool's arguments, with the operation's reason for it when it has one (Operation.invalidReason), as on REST. */
const invalidInput = (errors: FieldErrors, reason: string | undefined, message?: string) =>
  new DomainError('invalid', message ?? Object.values(errors)[0]?.[0] ?? 'The given data was invalid.', {
    errors,
    ...(reason ? { reason } : {}),
  });

/** What the REST door would hand the handler: `{ ...(body or query), ...path params }`, validated the same way. */
function toInput(op: Operation, args: Record<string, unknown>): Record<string, unknown> {
  const { params, rest } = splitToolArguments(op, args);
  const missing: FieldErrors = {};
  for (const p of op.params) if (!params[p]) missing[p] = [`The ${p.replace(/_/g, ' ')} field is required.`];
  // The REST door refuses these in the path (400); here the path parameters are fields.
  refuseUnstorableText(params);
  let fields: Record<string, unknown> = rest;
  try {
    if (op.body) fields = validateBody(op.body, rest);
    else if (op.query) fields = validateQuery(op.query, rest);
  } catch (err) {
    const refusal = asHttpError(err);
    if (refusal?.extra.errors) throw invalidInput({ ...missing, ...refusal.extra.errors }, op.invalidReason, refusal.message);
    throw err;
  }
  if (Object.keys(missing).length) throw invalidInput(missing, op.invalidReason);
  return { ...fields, ...params };
}
