import type { Client } from '@temporalio/client';
import { providerTaskQueue, type Config } from '../config.js';
import { AccountId, ResourceId, ResourceType } from '../temporal/search-attributes.js';
import type { DispatcherInput } from '../workflows/messaging/outbound-dispatcher.js';

export const dispatcherWorkflowId = (channelType: string) => `outbound-dispatcher/${channelType}`;

/** The batch dispatchers run for good, one per channel; a worker start makes sure they exist. */
export async function ensureDispatchers(client: Client, config: Config): Promise<void> {
  for (const channelType of ['sms', 'whatsapp'] as const) {
    const input: DispatcherInput = {
      channelType,
      providerTaskQueue: providerTaskQueue(config, channelType),
      batchSize: config.dispatchBatchSize,
      concurrency: config.dispatchConcurrency,
      idleWaitMs: 5000,
      receiptTimeoutSeconds: config.receiptTimeoutSeconds,
      pollWindowSeconds: config.deliveryPollSeconds * config.deliveryPollAttempts,
    };
    await client.workflow.start('outboundDispatcherWorkflow', {
      taskQueue: config.taskQueue,
      workflowId: dispatcherWorkflowId(channelType),
      args: [input],
      workflowIdConflictPolicy: 'USE_EXISTING',
      typedSearchAttributes: [
        { key: AccountId, value: 'system' },
        { key: ResourceId, value: channelType },
        { key: ResourceType, value: 'outbound-dispatcher' },
      ],
    });
  }
}
