import type { Client } from '@temporalio/client';
import { providerTaskQueue, type Config } from '../config.js';
import { startWorkflow } from '../temporal/starters.js';
import type { DispatcherInput } from '../workflows/messaging/outbound-dispatcher.js';
import { outboundDispatcherStarter } from '../workflows/messaging/outbound-dispatcher.starter.js';

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
    await startWorkflow({ temporal: client, config }, outboundDispatcherStarter, { channelType }, [input]);
  }
}
