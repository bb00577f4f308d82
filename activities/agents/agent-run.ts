import { ApplicationFailure } from '@temporalio/activity';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { Logger } from '../../logger.js';
import type { ChatModel } from '../../providers/index.js';
import { ModelCallFailed } from '../../providers/index.js';
import { parseToolArguments, type AgentTool, type ChatMessage, type ModelTurn, type RunReason } from '../../domain/agents/index.js';
import {
  beginRun,
  endRun,
  recordModelTurn,
  recordUncalledTool,
  recordedStep,
  waitForDecision,
  type Prices,
} from '../../services/agents/index.js';

// The run workflow's own activities (workflows/agents/agent-run.ts): its status, and each model
// turn, recorded once with its usage. Tool calls go through the tool door (api/agents/tool-door.ts),
// which serves the operation registry on its own task queue.

export interface AgentRunDeps {
  orm: MikroORM;
  log: Logger;
  model: () => ChatModel;
  prices: Prices;
}

export type ModelTurnResult = ModelTurn & { stop?: 'budget_exhausted' | 'insufficient_balance' };

/** A model's answer read as a turn: text, tool calls with parsed arguments, or what makes it unusable. */
function turnOf(answer: Awaited<ReturnType<ChatModel['complete']>>): ModelTurn {
  const usage = answer.usage;
  if (answer.toolCalls.length === 0) return { kind: 'answer', content: answer.content ?? '', usage };
  const calls = [];
  for (const call of answer.toolCalls) {
    const args = parseToolArguments(call.arguments);
    if (!args.ok) return { kind: 'invalid', problem: `The model's call of ${call.name} was unusable: ${args.problem}.`, usage };
    calls.push({ id: call.id, name: call.name, arguments: args.value });
  }
  return { kind: 'tool_calls', calls, usage, content: answer.content };
}

export function createAgentRunActivities(deps: AgentRunDeps) {
  return {
    async beginAgentRun(a: { accountId: number; runId: string }): Promise<void> {
      await beginRun(deps.orm.em.fork(), a.accountId, a.runId);
    },

    /**
     * One model turn. A turn already recorded (the activity ran, its completion was lost) is answered
     * from its record, so the model is not asked (nor paid) twice. A 429, a 5xx or a timeout is
     * thrown for Temporal to retry; an answer that is no usable turn is recorded and returned as
     * `invalid`, which fails the run with its reason.
     */
    async agentModelTurn(a: {
      accountId: number;
      runId: string;
      profileId: string;
      seq: number;
      model: string;
      messages: ChatMessage[];
      tools: AgentTool[];
    }): Promise<ModelTurnResult> {
      const em = deps.orm.em.fork();
      const earlier = await recordedStep(em, a.runId, a.seq);
      if (earlier) return earlier.result as ModelTurnResult;
      let turn: ModelTurn;
      try {
        const answer = await deps.model().complete({
          model: a.model,
          messages: a.messages,
          tools: a.tools.map((t) => ({ name: t.name, description: t.description, parameters: t.parameters })),
        });
        turn = turnOf(answer);
      } catch (err) {
        if (!(err instanceof ModelCallFailed)) throw err;
        if (err.retryable) throw ApplicationFailure.retryable(err.message, 'ModelUnavailable');
        // A 4xx of the endpoint (a wrong key, an unknown model) is no output of the model: the run fails as model_unavailable.
        if (err.status !== null) throw ApplicationFailure.nonRetryable(err.message, 'ModelRefused');
        turn = {
          kind: 'invalid',
          problem: `The model's answer was unusable: ${err.message}`,
          usage: { promptTokens: 0, completionTokens: 0 },
        };
      }
      const recorded = await recordModelTurn(em, deps.prices, {
        accountId: a.accountId,
        runId: a.runId,
        profileId: a.profileId,
        seq: a.seq,
        model: a.model,
        usage: turn.usage,
        arguments: { messages: a.messages.length, tools: a.tools.length },
        result: turn,
        failed: turn.kind === 'invalid',
      });
      if (!recorded.step) return ((await recordedStep(em, a.runId, a.seq))?.result as ModelTurnResult) ?? turn;
      return recorded.stop ? { ...turn, stop: recorded.stop } : turn;
    },

    async setAgentRunWaiting(a: { accountId: number; runId: string; pending: Record<string, unknown> | null }): Promise<void> {
      await waitForDecision(deps.orm.em.fork(), a.accountId, a.runId, a.pending);
    },

    /** A tool call that was not made: denied by a person, or outside the agent's grant. */
    async recordRefusedToolCall(a: {
      runId: string;
      seq: number;
      callId: string;
      name: string;
      arguments: Record<string, unknown>;
      status: 'denied';
      by?: string;
      note?: string;
    }): Promise<void> {
      const result = a.by
        ? { error: 'denied', denied_by: a.by, ...(a.note ? { note: a.note } : {}) }
        : { error: 'tool_not_granted', message: `This agent may not use ${a.name}; it was not called.` };
      await recordUncalledTool(deps.orm.em.fork(), { ...a, result });
    },

    async finishAgentRun(a: {
      accountId: number;
      runId: string;
      status: 'completed' | 'failed' | 'cancelled';
      output: string | null;
      reason: RunReason | null;
      error: string | null;
    }): Promise<void> {
      await endRun(deps.orm.em.fork(), a.accountId, a.runId, a);
    },
  };
}

export type AgentRunActivities = ReturnType<typeof createAgentRunActivities>;
