import type { WorkflowStarter } from '../starter.js';

export interface WebhookDispatcherKey {
  /** The webhook task queue: deployments (or test stacks) on their own queue get their own dispatchers. */
  taskQueue: string;
  /** 1, 2, …: several dispatchers share the queue of first attempts (claims never overlap). */
  n: number;
}

/** `webhook-dispatcher/<webhook task queue>/<n>`: first attempts of webhook deliveries in batches, running for good. */
export const webhookDispatcherWorkflowId = (taskQueue: string, n: number) => `webhook-dispatcher/${taskQueue}/${n}`;

/**
 * Two by default: on one worker they share its connection pool; with more workers each activity
 * run may land on another process, so first attempts spread over two of them.
 */
export const WEBHOOK_DISPATCHERS = 2;

/** Every worker start makes sure the dispatchers run: a running one is kept, a closed one started again. */
export const webhookDispatcherStarter: WorkflowStarter<'webhookDispatcherWorkflow', WebhookDispatcherKey, 'webhookTaskQueue'> = {
  workflowType: 'webhookDispatcherWorkflow',
  taskQueue: 'webhookTaskQueue',
  workflowId: (k) => webhookDispatcherWorkflowId(k.taskQueue, k.n),
  searchAttributes: (k) => ({ AccountId: 'system', ResourceId: `${k.taskQueue}/${k.n}`, ResourceType: 'webhook-dispatcher' }),
  workflowIdReusePolicy: 'ALLOW_DUPLICATE',
  workflowIdConflictPolicy: 'USE_EXISTING',
};
