import type { WorkflowStarter } from '../starter.js';
import type { DispatcherInput } from './outbound-dispatcher.js';

export interface DispatcherKey {
  channelType: DispatcherInput['channelType'];
}

/** `outbound-dispatcher/<channel type>`: one batch dispatcher per channel, running for good. */
export const dispatcherWorkflowId = (channelType: string) => `outbound-dispatcher/${channelType}`;

/** Every worker start makes sure the dispatcher runs: a running one is kept, a closed one started again. */
export const outboundDispatcherStarter: WorkflowStarter<'outboundDispatcherWorkflow', DispatcherKey> = {
  workflowType: 'outboundDispatcherWorkflow',
  taskQueue: 'taskQueue',
  workflowId: (k) => dispatcherWorkflowId(k.channelType),
  searchAttributes: (k) => ({ AccountId: 'system', ResourceId: k.channelType, ResourceType: 'outbound-dispatcher' }),
  workflowIdReusePolicy: 'ALLOW_DUPLICATE',
  workflowIdConflictPolicy: 'USE_EXISTING',
};
