import { NativeConnection, Worker } from '@temporalio/worker';
import { installTemporalRuntime } from '../../observability/temporal-runtime.js';
import type { OperationDeps } from '../operation.js';
import type { RequestContext } from '../../services/platform/context.js';
import {
  agentToolsTaskQueue,
  toolGranted,
  type AgentTool,
  type AgentToolDoor,
  type ToolCallOutcome,
  type ToolCallRequest,
} from '../../domain/agents/index.js';
import { beginToolStep, finishToolStep, recordedStep, runCredential } from '../../services/agents/index.js';
import { callTool } from '../mcp/call.js';
import { mayUse, toolOf, toolOperations } from '../mcp/tools.js';

/**
 * The agent door of the operations, the third beside REST and MCP: an agent run's tools are the
 * account's MCP tools (the same operation registry, schemas, permission checks and handlers as
 * /mcp), called with the submitting key's issuer as it stands at each call. It runs as Temporal
 * activities on a task queue of its own, served by the API process, because that is where the
 * registry lives (nothing below the doors imports api/). A call outside the run's grant is refused
 * here too, whatever the workflow asked; a tool step is begun before the handler runs, so a retried
 * attempt never calls a tool twice (its outcome is then reported unknown to the model).
 */
export function createAgentToolDoor(deps: OperationDeps): AgentToolDoor {
  const byName = new Map(toolOperations.map((op) => [op.name, op]));
  const granted = (grant: ToolCallRequest['grant'], name: string) => {
    const op = byName.get(name);
    return op && toolGranted(grant, { name: op.name, servers: op.mcp!.servers }) ? op : undefined;
  };
  return {
    async agentToolCatalog(a): Promise<AgentTool[]> {
      const em = deps.orm.em.fork();
      const who = await runCredential(em, a.accountId, a.keyId);
      if (!who.ok) return [];
      const principal = { account: who.account, key: who.key, user: who.user };
      return toolOperations
        .filter((op) => granted(a.grant, op.name) && mayUse(principal, op))
        .map((op) => {
          const tool = toolOf(op);
          return {
            name: op.name,
            description: tool.description ?? op.summary,
            parameters: tool.inputSchema,
            elevation: op.mcp!.elevation ?? null,
          };
        });
    },

    async callAgentTool(a): Promise<ToolCallOutcome> {
      const op = granted(a.grant, a.name);
      if (!op) return { kind: 'refused', reason: 'tool_not_granted', content: `This agent may not use ${a.name}; it was not called.` };
      const em = deps.orm.em.fork();
      if (!(await beginToolStep(em, { runId: a.runId, seq: a.seq, name: a.name, callId: a.callId, arguments: a.arguments }))) {
        const earlier = await recordedStep(em, a.runId, a.seq);
        if (earlier && earlier.status !== 'running')
          return { kind: 'result', isError: earlier.status === 'failed', content: JSON.stringify(earlier.result ?? null) };
        return {
          kind: 'refused',
          reason: 'interrupted',
          content: JSON.stringify({
            error: 'interrupted',
            message: 'This call was interrupted; whether it took effect is unknown. Check before calling it again.',
          }),
        };
      }
      const who = await runCredential(em, a.accountId, a.keyId);
      let isError: boolean;
      let content: string;
      let result: unknown;
      if (!who.ok) {
        isError = true;
        result = { status: 'error', message: who.message };
        content = JSON.stringify(result);
      } else {
        const rc: RequestContext = {
          account: who.account,
          actor: { kind: 'api_key', key: who.key, issuer: who.user },
          em,
          log: deps.log.child({ account: a.accountId, agentRun: a.runId, tool: a.name }),
        };
        const answer = await callTool(op, a.arguments, { principal: { account: who.account, key: who.key, user: who.user }, rc, deps });
        isError = answer.isError === true;
        content = answer.content.map((c) => c.text).join('\n');
        result = answer.structuredContent ?? safeJson(content);
      }
      const paid = await finishToolStep(deps.orm.em.fork(), deps.config, {
        accountId: a.accountId,
        runId: a.runId,
        seq: a.seq,
        failed: isError,
        result,
      });
      return { kind: 'result', isError, content, ...(paid ? {} : { stop: 'insufficient_balance' as const }) };
    },
  };
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/**
 * The activity-only worker of the tool door, in the API process: it polls the agent-tools queue
 * beside serving requests. Stopped with the API.
 */
export async function startAgentToolWorker(deps: OperationDeps): Promise<{ shutdown(): Promise<void> }> {
  // As the worker's: the SDK's lines as pino JSON, and no signal handlers of the SDK's, so the API's
  // own stop (api/main.ts) decides the order on SIGTERM: drain, close the listeners, then this
  // worker. With the SDK's handlers SIGTERM also started the worker's shutdown at once, beside the
  // drain, and the API closed its listeners late (test/integration/api-stop).
  await installTemporalRuntime(deps.log, { coreMetrics: false });
  const connection = await NativeConnection.connect(deps.config.temporalConnection);
  const worker = await Worker.create({
    connection,
    namespace: deps.config.temporalNamespace,
    taskQueue: agentToolsTaskQueue(deps.config.taskQueue),
    activities: { ...createAgentToolDoor(deps) },
    maxConcurrentActivityTaskExecutions: 20,
    shutdownGraceTime: '10 seconds',
  });
  const running = worker.run();
  running.catch((err: unknown) => deps.log.error({ err }, 'agent tool worker stopped'));
  deps.log.info({ taskQueue: agentToolsTaskQueue(deps.config.taskQueue) }, 'agent tool door polling');
  return {
    async shutdown() {
      worker.shutdown();
      await running.catch(() => undefined);
      await connection.close();
    },
  };
}
