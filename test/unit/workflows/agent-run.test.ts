import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker, type WorkflowBundle } from '@temporalio/worker';
import type { AgentRunActivities } from '../../../activities/agents/agent-run.js';
import type { AgentToolDoor } from '../../../domain/agents/index.js';
import {
  agentRunStateQuery,
  decideToolCallUpdate,
  type agentRunWorkflow,
  type AgentRunInput,
  type AgentRunState,
} from '../../../workflows/agents/agent-run.js';
import { timeSkippingEnv, freshTaskQueue, untilQueried } from '../../support/workflow-env.js';

// The agent run workflow on the time-skipping server, with doubles for its activities and its tool
// door: the time limit ends a run that waits for an approval nobody gives (ten minutes pass in
// moments), an approval lets the call through, and the step limit stops a model that never answers.
let env: TestWorkflowEnvironment;
let bundle: WorkflowBundle;

before(async () => {
  ({ env, bundle } = await timeSkippingEnv('index.ts'));
});
after(async () => {
  await env?.teardown();
});

const usage = { promptTokens: 10, completionTokens: 5 };

/** Doubles: a model that calls `tool` until it has one result, then answers; a door offering get_x and send_x (mcp:send). */
function doubles(tool: string, opts: { answerAfterResult?: boolean } = {}) {
  const log = { finished: [] as { status: string; reason: string | null; at: number }[], called: [] as string[], waiting: [] as boolean[] };
  const main: Omit<AgentRunActivities, never> = {
    async beginAgentRun() {},
    async agentModelTurn(a) {
      const hasResult = a.messages.some((m) => m.role === 'tool');
      if (hasResult && opts.answerAfterResult !== false) return { kind: 'answer', content: 'done', usage };
      return { kind: 'tool_calls', calls: [{ id: `c${a.seq}`, name: tool, arguments: { n: a.seq } }], usage, content: null };
    },
    async setAgentRunWaiting(a) {
      log.waiting.push(a.pending !== null);
    },
    async recordRefusedToolCall() {},
    async finishAgentRun(a) {
      log.finished.push({ status: a.status, reason: a.reason, at: await env.currentTimeMs() });
    },
  };
  const door: AgentToolDoor = {
    async agentToolCatalog() {
      return [
        { name: 'get_x', description: 'read', parameters: { type: 'object' }, elevation: null },
        { name: 'send_x', description: 'send', parameters: { type: 'object' }, elevation: 'mcp:send' },
      ];
    },
    async callAgentTool(a) {
      log.called.push(a.name);
      return { kind: 'result', isError: false, content: '{"ok":true}' };
    },
  };
  return { log, main, door };
}

async function run<T>(d: ReturnType<typeof doubles>, fn: (taskQueue: string, toolsQueue: string) => Promise<T>): Promise<T> {
  const taskQueue = freshTaskQueue('agent-run');
  const toolsQueue = `${taskQueue}-tools`;
  const main = await Worker.create({ connection: env.nativeConnection, taskQueue, workflowBundle: bundle, activities: d.main });
  const tools = await Worker.create({ connection: env.nativeConnection, taskQueue: toolsQueue, activities: d.door });
  return main.runUntil(tools.runUntil(fn(taskQueue, toolsQueue)));
}

const input = (toolsTaskQueue: string, o: Partial<AgentRunInput> = {}): AgentRunInput => ({
  accountId: 1,
  runId: `run-${Math.random()}`,
  profileId: 'p',
  agent: 'helper',
  keyId: 1,
  model: 'm',
  instructions: 'i',
  prompt: 'p',
  grant: { mcpServers: ['messaging'], tools: [], preapproved: [] },
  maxSteps: 20,
  maxSeconds: 600,
  toolsTaskQueue,
  ...o,
});

test(
  'a run waiting for an approval nobody gives fails at its time limit, not before; the tool is never called',
  { timeout: 60_000 },
  async () => {
    const d = doubles('send_x');
    const started = await env.currentTimeMs();
    const result = await run(d, async (taskQueue, toolsQueue) => {
      const h = await env.client.workflow.start<typeof agentRunWorkflow>('agentRunWorkflow', {
        taskQueue,
        workflowId: `agent-run-${Math.random()}`,
        args: [input(toolsQueue)],
      });
      return h.result();
    });
    assert.deepEqual(result, { status: 'failed', reason: 'time_limit' });
    assert.deepEqual(d.log.called, [], 'the elevated call waited and was never made');
    assert.deepEqual(d.log.waiting, [true]);
    const elapsed = d.log.finished[0].at - started;
    assert.ok(elapsed >= 600_000 && elapsed < 660_000, `ended after ${elapsed} ms`);
  },
);

test('an approval lets the elevated call through; the run completes well inside its limit', { timeout: 60_000 }, async () => {
  const d = doubles('send_x');
  const result = await run(d, async (taskQueue, toolsQueue) => {
    const h = await env.client.workflow.start<typeof agentRunWorkflow>('agentRunWorkflow', {
      taskQueue,
      workflowId: `agent-run-${Math.random()}`,
      args: [input(toolsQueue)],
    });
    const s = await untilQueried<AgentRunState>(h, agentRunStateQuery, (x) => x.pending !== null);
    await assert.rejects(h.executeUpdate(decideToolCallUpdate, { args: [{ call_id: 'other', approve: true, by: 'test' }] }));
    await h.executeUpdate(decideToolCallUpdate, { args: [{ call_id: s.pending!.call_id, approve: true, by: 'test' }] });
    return h.result();
  });
  assert.deepEqual(result, { status: 'completed', reason: null });
  assert.deepEqual(d.log.called, ['send_x']);
  assert.deepEqual(d.log.waiting, [true, false]);
});

test('a model that never answers is stopped by the step limit; a preapproved elevation does not wait', { timeout: 60_000 }, async () => {
  const d = doubles('send_x', { answerAfterResult: false });
  const result = await run(d, async (taskQueue, toolsQueue) => {
    const h = await env.client.workflow.start<typeof agentRunWorkflow>('agentRunWorkflow', {
      taskQueue,
      workflowId: `agent-run-${Math.random()}`,
      args: [input(toolsQueue, { maxSteps: 5, grant: { mcpServers: ['messaging'], tools: [], preapproved: ['mcp:send'] } })],
    });
    return h.result();
  });
  assert.deepEqual(result, { status: 'failed', reason: 'step_limit' });
  assert.deepEqual(d.log.called, ['send_x', 'send_x'], 'turns and calls count as steps: model, tool, model, tool, model');
  assert.deepEqual(d.log.waiting, []);
});

test(
  'a long run continues as new (same workflow id, the conversation carried) and still ends at its step limit',
  { timeout: 60_000 },
  async () => {
    const d = doubles('get_x', { answerAfterResult: false });
    const turns: number[] = [];
    const model = d.main.agentModelTurn;
    d.main.agentModelTurn = async (a) => {
      turns.push(a.messages.length);
      return model(a);
    };
    const { result, runs } = await run(d, async (taskQueue, toolsQueue) => {
      const h = await env.client.workflow.start<typeof agentRunWorkflow>('agentRunWorkflow', {
        taskQueue,
        workflowId: `agent-run-${Math.random()}`,
        args: [input(toolsQueue, { maxSteps: 60 })],
      });
      const r = await h.result();
      const last = await env.client.workflow.getHandle(h.workflowId).describe();
      return { result: r, runs: [h.firstExecutionRunId, last.runId] };
    });
    assert.deepEqual(result, { status: 'failed', reason: 'step_limit' });
    assert.notEqual(runs[0], runs[1], 'the run continued as new');
    assert.equal(d.log.called.length, 30, '60 steps: 30 model turns and 30 tool calls');
    // The conversation grows across the continue-as-new: no turn starts from scratch again.
    assert.ok(turns.every((n, i) => i === 0 || n > turns[i - 1]));
  },
);
