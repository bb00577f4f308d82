import type { WorkflowStarter } from '../starter.js';
import type { cancelRunSignal, decideToolCallUpdate } from './agent-run.js';

export interface AgentRunKey {
  accountId: number;
  runId: string;
}

/** `agent-run/<account>/<run uuid>`. */
export const agentRunWorkflowId = (accountId: number, runId: string) => `agent-run/${accountId}/${runId}`;

/** A run the API recorded (queued): started once; a second start of the same run (an idempotent replay, the relay) is a no-op. */
export const agentRunStarter: WorkflowStarter<
  'agentRunWorkflow',
  AgentRunKey,
  'taskQueue',
  { decideToolCall: typeof decideToolCallUpdate },
  { cancelRun: typeof cancelRunSignal }
> = {
  workflowType: 'agentRunWorkflow',
  taskQueue: 'taskQueue',
  workflowId: (k) => agentRunWorkflowId(k.accountId, k.runId),
  searchAttributes: (k) => ({ AccountId: String(k.accountId), ResourceId: k.runId, ResourceType: 'agent_run' }),
  workflowIdReusePolicy: 'REJECT_DUPLICATE',
  workflowIdConflictPolicy: 'FAIL',
  updates: { decideToolCall: 'decideToolCall' },
  signals: { cancelRun: 'cancelRun' },
};
