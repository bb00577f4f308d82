// The agents family's pure rules: the run status vocabulary, the refusal reasons a failed run
// carries, the grant check of a tool call and the shape of a model's turn as the run loop reads it.

/** Every status of a run (docs/agents.md); the last three are terminal. */
export const RUN_STATUSES = ['queued', 'in_progress', 'requires_action', 'completed', 'failed', 'cancelled'] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];
export const TERMINAL_STATUSES: readonly RunStatus[] = ['completed', 'failed', 'cancelled'];
export const isTerminal = (s: string) => (TERMINAL_STATUSES as readonly string[]).includes(s);

/** The reasons a run ends without an answer (the run's `reason`). */
export const RUN_REASONS = [
  'step_limit',
  'time_limit',
  'budget_exhausted',
  'insufficient_balance',
  'model_output_invalid',
  'model_unavailable',
  'tool_not_granted',
  'cancelled',
  'internal_error',
] as const;
export type RunReason = (typeof RUN_REASONS)[number];

/** A tool as the run offers it to the model: the operation's tool name, its input schema and its elevation. */
export interface AgentTool {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
  /** The elevation scope (mcp:send, mcp:delete…) of a tool whose effect reaches beyond reading. */
  elevation: string | null;
}

/** What a profile grants a run, snapshotted when the run starts. */
export interface AgentGrant {
  mcpServers: string[];
  /** Empty: every tool of the servers. */
  tools: string[];
  preapproved: string[];
}

/** Whether a tool offered by `servers` falls inside the grant: one of its servers, and named when the grant names tools. */
export function toolGranted(grant: AgentGrant, tool: { name: string; servers: readonly string[] }): boolean {
  if (!tool.servers.some((s) => grant.mcpServers.includes(s))) return false;
  return grant.tools.length === 0 || grant.tools.includes(tool.name);
}

/** Whether a granted tool must wait for a person before it runs. */
export const needsApproval = (grant: AgentGrant, tool: Pick<AgentTool, 'elevation'>) =>
  tool.elevation !== null && !grant.preapproved.includes(tool.elevation);

/** A chat message of the run's conversation (OpenAI chat-completions shape, the subset we send). */
export type ChatMessage =
  | { role: 'system' | 'user'; content: string }
  | {
      role: 'assistant';
      content: string | null;
      tool_calls?: { id: string; type: 'function'; function: { name: string; arguments: string } }[];
    }
  | { role: 'tool'; tool_call_id: string; content: string };

/** A model's turn as the run loop reads it. */
export type ModelTurn =
  | { kind: 'answer'; content: string; usage: TokenUsage }
  | {
      kind: 'tool_calls';
      calls: { id: string; name: string; arguments: Record<string, unknown> }[];
      usage: TokenUsage;
      content: string | null;
    }
  | { kind: 'invalid'; problem: string; usage: TokenUsage };

export interface TokenUsage {
  promptTokens: number;
  completionTokens: number;
}

/** Parses a tool call's arguments (a JSON string by the chat-completions wire): an object, or the problem. */
export function parseToolArguments(raw: unknown): { ok: true; value: Record<string, unknown> } | { ok: false; problem: string } {
  if (typeof raw !== 'string') return { ok: false, problem: 'tool arguments are not a string' };
  if (raw.trim() === '') return { ok: true, value: {} };
  try {
    const v: unknown = JSON.parse(raw);
    if (v === null || typeof v !== 'object' || Array.isArray(v)) return { ok: false, problem: 'tool arguments are not a JSON object' };
    return { ok: true, value: v as Record<string, unknown> };
  } catch {
    return { ok: false, problem: 'tool arguments are not valid JSON' };
  }
}

/**
 * The tool door of agent runs (api/agents/tool-door.ts, served on the agent-tools task queue by the
 * API process, where the operation registry lives): the run's workflow sees only these types.
 */
export interface AgentToolDoor {
  /** The account's tools the grant and the key's issuer allow now, as the model is offered them. */
  agentToolCatalog(a: { accountId: number; keyId: number | null; grant: AgentGrant }): Promise<AgentTool[]>;
  /** One tool call, checked again against the grant and the issuer's current permissions; recorded as step `seq` (at most once). */
  callAgentTool(a: ToolCallRequest): Promise<ToolCallOutcome>;
}

export interface ToolCallRequest {
  accountId: number;
  runId: string;
  keyId: number | null;
  grant: AgentGrant;
  seq: number;
  callId: string;
  name: string;
  arguments: Record<string, unknown>;
}

export type ToolCallOutcome =
  | { kind: 'result'; isError: boolean; content: string; stop?: 'insufficient_balance' }
  /** Not called: outside the grant, or a step left running by an interrupted attempt (its outcome unknown). */
  | { kind: 'refused'; reason: 'tool_not_granted' | 'interrupted'; content: string };

/** The task queue of the tool door, beside the main queue's name. */
export const agentToolsTaskQueue = (mainQueue: string) => `${mainQueue}-agent-tools`;
