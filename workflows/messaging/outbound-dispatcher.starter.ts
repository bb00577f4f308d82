import type { WorkflowStarter } from '../starter.js';
import type { DispatcherInput } from './outbound-dispatcher.js';

export interface DispatcherKey {
  channelType: DispatcherInput['channelType'];
  /** 0 … DISPATCH_RUNS-1. */
  run: number;
}

/**
 * `outbound-dispatcher/<channel type>` for run 0 (the id the single dispatcher had, so a running one
 * stays run 0), `outbound-dispatcher/<channel type>/<run>` for the others; all running for good.
 */
export const dispatcherWorkflowId = (channelType: string, run = 0) =>
  run === 0 ? `outbound-dispatcher/${channelType}` : `outbound-dispatcher/${channelType}/${run}`;

/** Every worker start makes sure the dispatcher runs: a running one is kept, a closed one started again. */
export const outboundDispatcherStarter: WorkflowStarter<'outboundDispatcherWorkflow', DispatcherKey> = {
  workflowType: 'outboundDispatcherWorkflow',
  taskQueue: 'taskQueue',
  workflowId: (k) => dispatcherWorkflowId(k.channelType, k.run),
  searchAttributes: (k) => ({
    AccountId: 'system',
    ResourceId: k.run === 0 ? k.channelType : `${k.channelType}/${k.run}`,
    ResourceType: 'outbound-dispatcher',
  }),
  workflowIdReusePolicy: 'ALLOW_DUPLICATE',
  workflowIdConflictPolicy: 'USE_EXISTING',
};
