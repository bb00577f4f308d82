import crypto from 'node:crypto';
import type { Client } from '@temporalio/client';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import { notFound } from '../platform/errors.js';
import type { RequestContext } from '../platform/context.js';
import { validateBody, type JsonSchema } from '../platform/validation.js';
import type { Config } from '../../config.js';
import { startWorkflow } from '../../temporal/starters.js';
import { operationRunStarter } from '../../workflows/automations/operation-run.starter.js';
import { BUSINESS_TYPE_PATTERN } from './business-events.js';
import type { OperationRunInput } from '../../workflows/automations/operation-run.js';
import { activeOperation, insertQueuedRun, type RunRecord } from './store.js';

/**
 * The built-in operation kinds: what an operator may define (config) and what a caller passes when
 * running it (input). Kept small on purpose; each is one activity in operationRunWorkflow.
 */
export const OPERATION_KINDS: Record<string, { config: JsonSchema; input: JsonSchema }> = {
  // Send a templated SMS: {{name}} placeholders are filled from input.vars (missing ones become empty).
  send_sms: {
    config: {
      type: 'object',
      required: ['message'],
      additionalProperties: false,
      properties: { message: { type: 'string', minLength: 1, maxLength: 4096 }, sender_id: { type: 'string', maxLength: 64 } },
    },
    input: {
      type: 'object',
      required: ['to'],
      additionalProperties: false,
      properties: {
        to: { type: 'string', minLength: 6, maxLength: 32 },
        vars: { type: 'object', additionalProperties: { type: ['string', 'number', 'boolean'] } },
      },
    },
  },
  // Log a business event of a fixed type with the caller's data (automation subscriptions receive it).
  emit_business_event: {
    config: {
      type: 'object',
      required: ['type'],
      additionalProperties: false,
      properties: { type: { type: 'string', pattern: BUSINESS_TYPE_PATTERN, maxLength: 100 } },
    },
    input: { type: 'object', additionalProperties: false, properties: { data: { type: 'object' } } },
  },
};

export const renderTemplate = (template: string, vars: Record<string, unknown> = {}) =>
  template.replace(/\{\{\s*([\w.-]+)\s*\}\}/g, (_m, k: string) => (vars[k] === undefined || vars[k] === null ? '' : String(vars[k])));

export interface OperationDeps {
  temporal: Client;
  config: Config;
}

/** An operation run as every door shows it (runView's output). */
export const operationRunSchema = {
  type: 'object',
  required: ['run_id', 'operation', 'status'],
  properties: {
    run_id: { type: 'string', format: 'uuid' },
    operation: { type: 'string' },
    status: { enum: ['queued', 'running', 'succeeded', 'failed'] },
    source: { type: 'string' },
    input: { type: 'object' },
    result: {},
    error: { type: ['string', 'null'] },
    created_at: { type: 'string', format: 'date-time' },
    finished_at: { type: ['string', 'null'], format: 'date-time' },
  },
} as const;

export const runView = (
  r: Pick<RunRecord, 'id' | 'operation_name' | 'status' | 'source' | 'input' | 'result' | 'error' | 'created_at' | 'finished_at'>,
) => ({
  run_id: r.id,
  operation: r.operation_name,
  status: r.status,
  source: r.source,
  input: r.input,
  result: r.result ?? null,
  error: r.error,
  created_at: new Date(r.created_at).toISOString(),
  finished_at: r.finished_at ? new Date(r.finished_at).toISOString() : null,
});

/**
 * Runs an operator-defined operation: the run is recorded (queued) and its workflow started. A
 * crash between the two is repaired by the worker's relay, which starts queued runs left behind.
 */
export async function runOperation(rc: RequestContext, deps: OperationDeps, name: string, input: Record<string, unknown>) {
  const em = rc.em;
  const accountId = rc.account.id;
  // Where the run came from, for the run record and its business events.
  const source = rc.actor.kind === 'mcp_credential' ? 'mcp' : 'api';
  const def = await activeOperation(em, accountId, name);
  if (!def) throw notFound('Operation');
  validateBody(OPERATION_KINDS[def.kind].input, input);
  const run = await insertQueuedRun(em, {
    id: crypto.randomUUID(),
    account_id: accountId,
    operation_id: def.id,
    operation_name: name,
    input,
    source,
  });
  await startOperationWorkflow(deps, accountId, run);
  return runView(run);
}

export async function startOperationWorkflow(
  deps: OperationDeps,
  accountId: number,
  run: { id: string; operation_name: string; input: Record<string, unknown>; source: string },
) {
  const args: OperationRunInput = { accountId, runId: run.id, operationName: run.operation_name, input: run.input, source: run.source };
  try {
    await startWorkflow(deps, operationRunStarter, { accountId, runId: run.id }, [args]);
  } catch (err) {
    if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
  }
}
