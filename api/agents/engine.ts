import { defineOperation, type Operation } from '../operation.js';
import { runSchema } from '../../services/agents/views.js';
import { cancelRun, decideToolCall, getRun, listAgentRuns, submitRun } from '../../services/agents/runs.js';

// Agent tasks (contract: Endpoints > Agent tasks; docs/agents.md): base /api/engine, the REST key,
// the engine's own envelope (problem details) and its own throttle. Paths and fields are ours; the
// run uuid is the identifier. Not MCP tools: a run's tools are the MCP tools, a run is not one.
const base = { tag: 'Agent tasks', auth: 'rest', issuerRequired: true, envelope: 'engine' } as const;

const agentParam = '/api/engine/agents/{agent}';

export const runsQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    limit: { type: 'integer', minimum: 1, maximum: 100, default: 20 },
    before: { type: 'string', maxLength: 64, description: 'The next_before of the previous page (a run uuid)' },
  },
} as const;

export const runsListSchema = {
  type: 'object',
  required: ['runs', 'has_more', 'next_before'],
  properties: {
    runs: { type: 'array', items: runSchema },
    has_more: { type: 'boolean' },
    next_before: { type: ['string', 'null'] },
  },
} as const;

export const decisionBody = {
  type: 'object',
  required: ['call_id', 'decision'],
  additionalProperties: false,
  properties: {
    call_id: { type: 'string', minLength: 1, maxLength: 100, description: "The pending_tool_call's call_id" },
    decision: { enum: ['approve', 'deny'] },
    note: { type: 'string', maxLength: 500, description: 'Shown to the model with a denial' },
  },
} as const;

/** A run's cancel, as the engine and the operator both define it: no fields, the run answered 202. */
export const cancelRunShape = {
  summary: 'Cancel a run',
  refusals: { 409: 'The run has already ended' },
  // No fields: an empty body or none.
  body: { type: 'object', additionalProperties: false, properties: {} },
  output: {
    kind: 'resource',
    status: 202,
    description: 'The run; it records cancelled when its workflow takes the request',
    schema: runSchema,
  },
} as const;

export const engineOperations: readonly Operation[] = [
  defineOperation({
    ...base,
    name: 'engine_submit_run',
    method: 'POST',
    path: `${agentParam}/runs`,
    summary: 'Submit a prompt to an agent: 202 with the run (200 when it settled within wait_seconds)',
    description:
      'The account engine, the API availability and the agent must permit it (403 engine_disabled, api_unavailable, ' +
      'agent_not_runnable; 402 budget_exhausted, insufficient_balance). An Idempotency-Key (IETF draft; a quoted ' +
      'string or a bare token, at most 255 characters, kept per account) replays the same run for the same request ' +
      '(Idempotent-Replayed: true) and is refused with 422 for another; a malformed key is a 400. A 200 still carries ' +
      "the run's status: check it.",
    headers: { 'Idempotency-Key': 'idempotency_key' },
    refusals: {
      402: "The agent's token budget is spent, or the prepaid balance is empty",
      409: 'A request with the same Idempotency-Key is being accepted',
    },
    body: {
      type: 'object',
      required: ['prompt'],
      additionalProperties: false,
      properties: {
        prompt: { type: 'string', minLength: 1, maxLength: 32_000, pattern: '\\S', description: 'What the agent is asked to do' },
        wait_seconds: {
          type: 'integer',
          minimum: 0,
          maximum: 30,
          default: 0,
          description: 'Wait up to this long (capped by the service) for the run to settle before answering',
        },
        idempotency_key: { type: 'string', maxLength: 300, description: 'The Idempotency-Key header' },
      },
      examples: [{ prompt: 'Summarise this week’s new leads.', wait_seconds: 5 }],
    } as const,
    output: {
      kind: 'resource',
      status: 202,
      description: 'The run, accepted (queued or in progress)',
      schema: runSchema,
      alsoStatus: { status: 200, description: 'The run settled within wait_seconds (check its status)' },
    },
    answerStatus: (run) => (run.terminal ? 200 : 202),
    answerHeaders: (run): Record<string, string> => (run.replayed ? { 'Idempotent-Replayed': 'true' } : {}),
    handler: async ({ rc, deps }, { agent, ...input }) => submitRun(rc, deps, agent, input),
  }),
  defineOperation({
    ...base,
    name: 'engine_list_agent_runs',
    method: 'GET',
    path: `${agentParam}/runs`,
    summary: "An agent's runs, newest first",
    query: runsQuery,
    output: { kind: 'list', status: 200, description: 'A page of runs', schema: runsListSchema },
    handler: async ({ rc }, { agent, ...q }) => listAgentRuns(rc, agent, q),
  }),
  defineOperation({
    ...base,
    name: 'engine_get_run',
    method: 'GET',
    path: '/api/engine/runs/{run}',
    summary: 'A run: status, steps (model turns, tool calls with arguments and results), output, usage, times',
    output: { kind: 'resource', status: 200, description: 'The run', schema: runSchema },
    handler: async ({ rc }, { run }) => getRun(rc, run),
  }),
  defineOperation({
    ...base,
    name: 'engine_cancel_run',
    method: 'POST',
    path: '/api/engine/runs/{run}/cancel',
    ...cancelRunShape,
    handler: async ({ rc, deps }, { run }) => cancelRun(rc, deps, run),
  }),
  defineOperation({
    ...base,
    name: 'engine_decide_tool_call',
    method: 'POST',
    path: '/api/engine/runs/{run}/approval',
    summary: 'Approve or deny the tool call a run waits on (status requires_action)',
    refusals: { 409: 'The run is not waiting for a decision on this call' },
    body: decisionBody,
    output: { kind: 'resource', status: 200, description: 'The run after the decision', schema: runSchema },
    handler: async ({ rc, deps }, { run, ...d }) => decideToolCall(rc, deps, run, d),
  }),
];
