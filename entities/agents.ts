import { defineEntity, p } from '@mikro-orm/core';
import { createdAt, timestamps } from './columns.js';

// The agents family (docs/agents.md): the account's engine switch, the agent profiles the operator
// sets up, and the runs of those agents with every step they took. Kept apart from the account's
// own tables: only services/agents/store.ts names them.

/** Per account: whether the engine runs at all, and whether its agents may be run over the REST API. */
export const AgentSettings = defineEntity({
  name: 'AgentSettings',
  tableName: 'agent_settings',
  properties: {
    accountId: p.integer().primary().autoincrement(false),
    engineEnabled: p.boolean().default(false),
    apiEnabled: p.boolean().default(false),
    ...timestamps(),
  },
});

/** An agent: what it is told, which model answers it, what it may touch and how far it may go. */
export const AgentProfile = defineEntity({
  name: 'AgentProfile',
  tableName: 'agent_profiles',
  properties: {
    id: p.uuid().primary(),
    accountId: p.integer(),
    /** The agent's name in paths (/api/engine/agents/{name}/runs): a slug, unique in the account. */
    name: p.string().length(64),
    instructions: p.text(),
    model: p.string().length(100),
    /** The MCP servers (keys of /mcp/v1/<key>) whose tools it may use. */
    mcpServers: p.json<string[]>(),
    /** Tool names it may use among those servers' tools; empty: every tool of the servers. */
    tools: p.json<string[]>(),
    /** Elevation scopes (mcp:send, mcp:delete…) whose tools run without a person's approval. */
    preapproved: p.json<string[]>(),
    maxSteps: p.integer(),
    maxSeconds: p.integer(),
    /** Model tokens the agent may spend over all its runs; null: no budget. */
    tokenBudget: p.bigint('string').nullable(),
    tokensUsed: p.bigint('string').default('0'),
    /** Whether the agent may be run over the REST API (/api/engine), beside the account's switch. */
    apiEnabled: p.boolean().default(true),
    ...timestamps(),
  },
  uniques: [{ properties: ['accountId', 'name'] }],
});

/** One run of an agent: a Temporal workflow `agent-run/<account>/<id>`; this row is what readers see. */
export const AgentRun = defineEntity({
  name: 'AgentRun',
  tableName: 'agent_runs',
  properties: {
    id: p.uuid().primary(),
    accountId: p.integer(),
    profileId: p.uuid(),
    agentName: p.string().length(64),
    /** The REST key that submitted it: its issuer's permissions apply at every tool call. */
    keyId: p.integer().nullable(),
    status: p.enum(['queued', 'in_progress', 'requires_action', 'completed', 'failed', 'cancelled']).default('queued'),
    prompt: p.text(),
    output: p.text().nullable(),
    /** Why a run failed or was cancelled (a stable word: step_limit, time_limit, model_output_invalid…). */
    reason: p.string().length(64).nullable(),
    error: p.text().nullable(),
    /** The tool call waiting for a person (id, tool, arguments, elevation), while requires_action. */
    pending: p.json<Record<string, unknown>>().nullable(),
    promptTokens: p.integer().default(0),
    completionTokens: p.integer().default(0),
    toolCalls: p.integer().default(0),
    /** What the run has cost so far, in the account's currency, debited as it went. */
    cost: p.decimal('string').precision(16).scale(6).default('0'),
    idempotencyKey: p.string().length(255).nullable(),
    requestHash: p.string().length(64).nullable(),
    createdAt: createdAt(),
    startedAt: p.datetime().nullable(),
    finishedAt: p.datetime().nullable(),
  },
  uniques: [{ properties: ['accountId', 'idempotencyKey'] }],
  indexes: [{ properties: ['accountId', 'profileId', 'createdAt'] }],
});

/** A step of a run: a model turn or a tool call, recorded once by the activity that made it. */
export const AgentRunStep = defineEntity({
  name: 'AgentRunStep',
  tableName: 'agent_run_steps',
  properties: {
    runId: p.uuid().primary(),
    seq: p.integer().primary(),
    kind: p.enum(['model', 'tool']),
    /** The tool's name; the model's for a model turn. */
    name: p.string().length(100),
    /** The model's tool call id, for a tool step. */
    callId: p.string().length(100).nullable(),
    arguments: p.json<unknown>().nullable(),
    result: p.json<unknown>().nullable(),
    status: p.enum(['running', 'succeeded', 'failed', 'denied']),
    promptTokens: p.integer().default(0),
    completionTokens: p.integer().default(0),
    startedAt: p.datetime(),
    finishedAt: p.datetime().nullable(),
  },
});
