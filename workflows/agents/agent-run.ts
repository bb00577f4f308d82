import {
  ActivityFailure,
  CancellationScope,
  condition,
  continueAsNew,
  defineQuery,
  defineSignal,
  defineUpdate,
  isCancellation,
  proxyActivities,
  setHandler,
  sleep,
  workflowInfo,
} from '@temporalio/workflow';
import type { AgentRunActivities } from '../../activities/agents/agent-run.js';
import {
  needsApproval,
  type AgentGrant,
  type AgentTool,
  type AgentToolDoor,
  type ChatMessage,
  type RunReason,
  type RunStatus,
} from '../../domain/agents/index.js';

// One agent run (docs/agents.md): the loop lives here, each model turn and each tool call is an
// activity, so a run survives worker restarts without repeating a step. A tool with an elevation
// the profile does not pre-approve waits for a person's decision (the decideToolCall update, from
// the API or the operator); cancelRun stops the run between or during steps; the deadline
// (max_seconds from the first start) and the step limit end it too. Long runs continue as new with
// the conversation carried over.

export interface AgentRunInput {
  accountId: number;
  runId: string;
  profileId: string;
  agent: string;
  /** The submitting REST key: its issuer's permissions are applied at every tool call. */
  keyId: number | null;
  model: string;
  instructions: string;
  prompt: string;
  grant: AgentGrant;
  maxSteps: number;
  maxSeconds: number;
  /** The tool door's task queue (domain/agents agentToolsTaskQueue). */
  toolsTaskQueue: string;
  /** Set by continue-as-new: where the previous execution stopped. */
  carried?: Carried;
}

interface Carried {
  messages: ChatMessage[];
  tools: AgentTool[];
  seq: number;
  deadline: number;
  usage: Usage;
}

interface Usage {
  promptTokens: number;
  completionTokens: number;
  toolCalls: number;
}

export type PendingToolCall = {
  call_id: string;
  tool: string;
  arguments: Record<string, unknown>;
  elevation: string;
};

export interface AgentRunState {
  status: RunStatus;
  seq: number;
  pending: PendingToolCall | null;
  usage: Usage;
  deadline: number;
  reason: RunReason | null;
}

export interface ToolDecision {
  call_id: string;
  approve: boolean;
  /** Who decided: `api_key:12`, `operator`. */
  by: string;
  note?: string;
}

export const agentRunStateQuery = defineQuery<AgentRunState>('state');
export const cancelRunSignal = defineSignal<[{ by: string }]>('cancelRun');
export const decideToolCallUpdate = defineUpdate<{ accepted: true }, [ToolDecision]>('decideToolCall');

export type AgentRunResult = { status: 'completed' | 'failed' | 'cancelled'; reason: RunReason | null };

/** Model turns per execution before continuing as new (each carries the whole conversation, so the history grows fast). */
const TURNS_PER_EXECUTION = 25;

const act = proxyActivities<AgentRunActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds', maximumAttempts: 10 },
});
// A model turn: 429, 5xx and timeouts are retried; output that is not a chat completion is not (ModelOutputInvalid).
const model = proxyActivities<AgentRunActivities>({
  startToCloseTimeout: '90 seconds',
  retry: {
    initialInterval: '1 second',
    backoffCoefficient: 2,
    maximumInterval: '20 seconds',
    maximumAttempts: 6,
    nonRetryableErrorTypes: ['ModelOutputInvalid'],
  },
});

export async function agentRunWorkflow(input: AgentRunInput): Promise<AgentRunResult> {
  const tools = proxyActivities<AgentToolDoor>({
    taskQueue: input.toolsTaskQueue,
    startToCloseTimeout: '60 seconds',
    retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds', maximumAttempts: 10 },
  });
  const c = input.carried;
  const state: AgentRunState = {
    status: 'in_progress',
    seq: c?.seq ?? 0,
    pending: null,
    usage: c?.usage ?? { promptTokens: 0, completionTokens: 0, toolCalls: 0 },
    deadline: c?.deadline ?? Date.now() + input.maxSeconds * 1000,
    reason: null,
  };
  let decision: ToolDecision | undefined;
  let cancelled = false;
  // The loop runs in this scope: the cancel signal and the deadline cancel it.
  const loopScope = new CancellationScope();

  setHandler(agentRunStateQuery, () => state);
  setHandler(cancelRunSignal, () => {
    cancelled = true;
    loopScope.cancel();
  });
  setHandler(
    decideToolCallUpdate,
    (d) => {
      decision = d;
      return Promise.resolve({ accepted: true as const });
    },
    {
      validator: (d) => {
        if (!state.pending || state.pending.call_id !== d.call_id) throw new Error('no tool call with this id awaits a decision');
      },
    },
  );

  const finish = async (status: 'completed' | 'failed' | 'cancelled', o: { output?: string; reason?: RunReason; error?: string }) => {
    state.status = status;
    state.pending = null;
    state.reason = o.reason ?? null;
    // Not cancellable: a cancelled run still records that it was.
    await CancellationScope.nonCancellable(() =>
      act.finishAgentRun({
        accountId: input.accountId,
        runId: input.runId,
        status,
        output: o.output ?? null,
        reason: o.reason ?? null,
        error: o.error ?? null,
      }),
    );
    return { status, reason: state.reason };
  };

  let messages: ChatMessage[];
  let catalog: AgentTool[];
  if (c) {
    messages = c.messages;
    catalog = c.tools;
  } else {
    await act.beginAgentRun({ accountId: input.accountId, runId: input.runId });
    catalog = await tools.agentToolCatalog({ accountId: input.accountId, keyId: input.keyId, grant: input.grant });
    messages = [
      { role: 'system', content: input.instructions },
      { role: 'user', content: input.prompt },
    ];
  }
  if (cancelled) return finish('cancelled', { reason: 'cancelled' });

  type LoopEnd = { end: 'completed'; output: string } | { end: 'failed'; reason: RunReason; error: string } | { end: 'continue' };

  const loop = async (): Promise<LoopEnd> => {
    for (let turns = 0; ; turns++) {
      if (turns >= TURNS_PER_EXECUTION || workflowInfo().continueAsNewSuggested) return { end: 'continue' };
      if (state.seq >= input.maxSteps)
        return { end: 'failed', reason: 'step_limit', error: `The run reached its limit of ${input.maxSteps} steps.` };
      const seq = ++state.seq;
      let turn;
      try {
        turn = await model.agentModelTurn({
          accountId: input.accountId,
          runId: input.runId,
          profileId: input.profileId,
          seq,
          model: input.model,
          messages,
          tools: catalog,
        });
      } catch (err) {
        if (isCancellation(err)) throw err;
        const why = err instanceof ActivityFailure && err.cause ? err.cause.message : String(err);
        return { end: 'failed', reason: 'model_unavailable', error: `The model could not be reached: ${why}` };
      }
      state.usage.promptTokens += turn.usage.promptTokens;
      state.usage.completionTokens += turn.usage.completionTokens;
      if (turn.kind === 'invalid') return { end: 'failed', reason: 'model_output_invalid', error: turn.problem };
      if (turn.stop) return { end: 'failed', reason: turn.stop, error: stopMessage(turn.stop) };
      if (turn.kind === 'answer') return { end: 'completed', output: turn.content };

      messages.push({
        role: 'assistant',
        content: turn.content,
        tool_calls: turn.calls.map((call) => ({
          id: call.id,
          type: 'function' as const,
          function: { name: call.name, arguments: JSON.stringify(call.arguments) },
        })),
      });
      for (const call of turn.calls) {
        if (state.seq >= input.maxSteps)
          return { end: 'failed', reason: 'step_limit', error: `The run reached its limit of ${input.maxSteps} steps.` };
        const toolSeq = ++state.seq;
        const tool = catalog.find((t) => t.name === call.name);
        if (!tool) {
          // Never called: the door would refuse it too, but the run does not even ask.
          await act.recordRefusedToolCall({
            runId: input.runId,
            seq: toolSeq,
            callId: call.id,
            name: call.name,
            arguments: call.arguments,
            status: 'denied',
          });
          return { end: 'failed', reason: 'tool_not_granted', error: `The model called ${call.name}, which this agent may not use.` };
        }
        if (needsApproval(input.grant, tool)) {
          state.pending = { call_id: call.id, tool: call.name, arguments: call.arguments, elevation: tool.elevation! };
          state.status = 'requires_action';
          decision = undefined;
          await act.setAgentRunWaiting({ accountId: input.accountId, runId: input.runId, pending: state.pending });
          await condition(() => decision !== undefined);
          const d = decision!;
          state.pending = null;
          state.status = 'in_progress';
          await act.setAgentRunWaiting({ accountId: input.accountId, runId: input.runId, pending: null });
          if (!d.approve) {
            const content = JSON.stringify({ error: 'denied', message: `A person denied this call${d.note ? `: ${d.note}` : '.'}` });
            await act.recordRefusedToolCall({
              runId: input.runId,
              seq: toolSeq,
              callId: call.id,
              name: call.name,
              arguments: call.arguments,
              status: 'denied',
              by: d.by,
              note: d.note,
            });
            messages.push({ role: 'tool', tool_call_id: call.id, content });
            continue;
          }
        }
        const outcome = await tools.callAgentTool({
          accountId: input.accountId,
          runId: input.runId,
          keyId: input.keyId,
          grant: input.grant,
          seq: toolSeq,
          callId: call.id,
          name: call.name,
          arguments: call.arguments,
        });
        if (outcome.kind === 'refused' && outcome.reason === 'tool_not_granted')
          return { end: 'failed', reason: 'tool_not_granted', error: outcome.content };
        if (outcome.kind === 'result') state.usage.toolCalls += 1;
        messages.push({ role: 'tool', tool_call_id: call.id, content: outcome.content });
        if (outcome.kind === 'result' && outcome.stop) return { end: 'failed', reason: outcome.stop, error: stopMessage(outcome.stop) };
      }
    }
  };

  // The loop runs in a scope the cancel signal and the deadline cancel; what ended it decides the status.
  let timedOut = false;
  const timerScope = new CancellationScope();
  const remaining = state.deadline - Date.now();
  void timerScope
    .run(() => sleep(Math.max(remaining, 1)))
    .then(
      () => {
        timedOut = true;
        loopScope.cancel();
      },
      () => undefined,
    );
  let end: LoopEnd | undefined;
  try {
    if (remaining <= 0) timedOut = true;
    else end = await loopScope.run(loop);
  } catch (err) {
    if (!isCancellation(err)) throw err;
  } finally {
    timerScope.cancel();
  }
  if (cancelled) return finish('cancelled', { reason: 'cancelled' });
  if (timedOut || !end)
    return finish('failed', { reason: 'time_limit', error: `The run exceeded its limit of ${input.maxSeconds} seconds.` });
  if (end.end === 'completed') return finish('completed', { output: end.output });
  if (end.end === 'failed') return finish('failed', { reason: end.reason, error: end.error });
  return continueAsNew<typeof agentRunWorkflow>({
    ...input,
    carried: { messages, tools: catalog, seq: state.seq, deadline: state.deadline, usage: state.usage },
  });
}

const stopMessage = (stop: 'budget_exhausted' | 'insufficient_balance') =>
  stop === 'budget_exhausted' ? "The agent's token budget is spent." : "The account's balance does not cover the run's usage.";
