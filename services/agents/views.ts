import { RUN_STATUSES, RUN_REASONS } from '../../domain/agents/index.js';
import type { ProfileRecord, RunRecord, SettingsRecord, StepRecord } from './store.js';

// What every door shows of the agents family: the engine settings, a profile, a run with its steps.

const iso = (t: string | Date | null) => (t === null ? null : new Date(t).toISOString());
const dateTime = { type: ['string', 'null'], format: 'date-time' } as const;

export const settingsSchema = {
  type: 'object',
  required: ['account_id', 'engine_enabled', 'api_enabled'],
  properties: {
    account_id: { type: 'integer' },
    engine_enabled: { type: 'boolean', description: "The account's engine switch: off, no agent runs" },
    api_enabled: { type: 'boolean', description: 'Whether agents may be run over the REST API (/api/engine)' },
    updated_at: dateTime,
  },
} as const;

export const settingsView = (accountId: number, s: SettingsRecord | null) => ({
  account_id: accountId,
  engine_enabled: s?.engine_enabled ?? false,
  api_enabled: s?.api_enabled ?? false,
  updated_at: s ? iso(s.updated_at) : null,
});

export const profileSchema = {
  type: 'object',
  required: ['id', 'name', 'instructions', 'model', 'mcp_servers', 'tools', 'preapproved', 'max_steps', 'max_seconds', 'api_enabled'],
  properties: {
    id: { type: 'string', format: 'uuid' },
    name: { type: 'string' },
    instructions: { type: 'string' },
    model: { type: 'string' },
    mcp_servers: { type: 'array', items: { type: 'string' } },
    tools: { type: 'array', items: { type: 'string' } },
    preapproved: { type: 'array', items: { type: 'string' } },
    max_steps: { type: 'integer' },
    max_seconds: { type: 'integer' },
    token_budget: { type: ['integer', 'null'] },
    tokens_used: { type: 'integer' },
    api_enabled: { type: 'boolean' },
    created_at: dateTime,
    updated_at: dateTime,
  },
} as const;

export const profileView = (p: ProfileRecord) => ({
  id: p.id,
  name: p.name,
  instructions: p.instructions,
  model: p.model,
  mcp_servers: p.mcp_servers,
  tools: p.tools,
  preapproved: p.preapproved,
  max_steps: p.max_steps,
  max_seconds: p.max_seconds,
  token_budget: p.token_budget === null ? null : Number(p.token_budget),
  tokens_used: Number(p.tokens_used),
  api_enabled: p.api_enabled,
  created_at: iso(p.created_at),
  updated_at: iso(p.updated_at),
});

const stepSchema = {
  type: 'object',
  required: ['seq', 'kind', 'name', 'status'],
  properties: {
    seq: { type: 'integer' },
    kind: { enum: ['model', 'tool'], description: 'A model turn, or a tool call the model asked for' },
    name: { type: 'string', description: "The tool's name; the model's for a model turn" },
    call_id: { type: ['string', 'null'] },
    arguments: { description: "A tool call's arguments; a model turn's tool calls or answer" },
    result: { description: "The tool's result (or its refusal); the model turn's output" },
    status: { enum: ['running', 'succeeded', 'failed', 'denied'] },
    usage: {
      type: 'object',
      properties: { prompt_tokens: { type: 'integer' }, completion_tokens: { type: 'integer' } },
    },
    started_at: dateTime,
    finished_at: dateTime,
  },
} as const;

export const runSchema = {
  type: 'object',
  required: ['run_uuid', 'agent', 'status', 'terminal', 'prompt', 'steps', 'usage', 'created_at'],
  properties: {
    run_uuid: { type: 'string', format: 'uuid' },
    agent: { type: 'string' },
    status: {
      enum: RUN_STATUSES,
      description:
        'queued → in_progress ⇄ requires_action (a tool call awaits approval) → completed, failed or cancelled (terminal: terminal is true)',
    },
    terminal: { type: 'boolean' },
    prompt: { type: 'string' },
    output: { type: ['string', 'null'], description: "The agent's final answer, once completed" },
    reason: { type: ['string', 'null'], enum: [...RUN_REASONS, null], description: 'Why a run failed or was cancelled' },
    error: { type: ['string', 'null'] },
    pending_tool_call: {
      type: ['object', 'null'],
      description: 'The tool call waiting for approval (POST …/runs/{run_uuid}/approval)',
      properties: {
        call_id: { type: 'string' },
        tool: { type: 'string' },
        arguments: { type: 'object' },
        elevation: { type: 'string' },
      },
    },
    steps: { type: 'array', items: stepSchema },
    usage: {
      type: 'object',
      required: ['prompt_tokens', 'completion_tokens', 'total_tokens', 'tool_calls', 'cost'],
      properties: {
        prompt_tokens: { type: 'integer' },
        completion_tokens: { type: 'integer' },
        total_tokens: { type: 'integer' },
        tool_calls: { type: 'integer' },
        cost: { type: 'string', description: "Debited from the account's wallet, in its currency" },
      },
    },
    poll_after_ms: { type: ['integer', 'null'], description: 'A hint for the next read while the run is not terminal' },
    replayed: { type: 'boolean', description: 'true when an Idempotency-Key matched this earlier run' },
    created_at: dateTime,
    started_at: dateTime,
    finished_at: dateTime,
  },
} as const;

export function runView(r: RunRecord, steps: StepRecord[], opts: { replayed?: boolean } = {}) {
  const terminal = ['completed', 'failed', 'cancelled'].includes(r.status);
  const pending = r.pending as { call_id: string; tool: string; arguments: Record<string, unknown>; elevation: string } | null;
  return {
    run_uuid: r.id,
    agent: r.agent_name,
    status: r.status,
    terminal,
    prompt: r.prompt,
    output: r.output,
    reason: r.reason as (typeof RUN_REASONS)[number] | null,
    error: r.error,
    pending_tool_call: pending,
    steps: steps.map((s) => ({
      seq: s.seq,
      kind: s.kind,
      name: s.name,
      call_id: s.call_id,
      arguments: s.arguments,
      result: s.result,
      status: s.status,
      usage: { prompt_tokens: s.prompt_tokens, completion_tokens: s.completion_tokens },
      started_at: iso(s.started_at),
      finished_at: iso(s.finished_at),
    })),
    usage: {
      prompt_tokens: r.prompt_tokens,
      completion_tokens: r.completion_tokens,
      total_tokens: r.prompt_tokens + r.completion_tokens,
      tool_calls: r.tool_calls,
      cost: r.cost,
    },
    poll_after_ms: terminal ? null : 1000,
    ...(opts.replayed ? { replayed: true } : {}),
    created_at: iso(r.created_at),
    started_at: iso(r.started_at),
    finished_at: iso(r.finished_at),
  };
}
