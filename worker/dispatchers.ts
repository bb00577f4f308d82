import type { Client } from '@temporalio/client';
import { providerTaskQueue, type Config } from '../config.js';
import { startWorkflow } from '../temporal/starters.js';
import type { DispatcherInput } from '../workflows/messaging/outbound-dispatcher.js';
import { outboundDispatcherStarter } from '../workflows/messaging/outbound-dispatcher.starter.js';
import { startWebhookDispatchers } from '../services/webhooks/dispatch.js';

/**
 * The batch dispatchers run for good, DISPATCH_RUNS per channel; a worker start makes sure they exist.
 * Lowering DISPATCH_RUNS leaves the higher runs running (harmless: they claim like the others) until
 * an operator terminates them.
 */
export async function ensureDispatchers(client: Client, config: Config): Promise<void> {
  for (const channelType of ['sms', 'whatsapp'] as const)
    for (let run = 0; run < config.dispatchRuns; run++) {
      const input: DispatcherInput = {
        channelType,
        run,
        providerTaskQueue: providerTaskQueue(config, channelType),
        batchSize: config.dispatchBatchSize,
        concurrency: config.dispatchConcurrency,
        idleWaitMs: 5000,
        receiptTimeoutSeconds: config.receiptTimeoutSeconds,
        pollWindowSeconds: config.deliveryPollSeconds * config.deliveryPollAttempts,
      };
      await startWorkflow({ temporal: client, config }, outboundDispatcherStarter, { channelType, run }, [input]);
    }
  // First attempts of webhook deliveries (docs/webhooks.md).
  await startWebhookDispatchers({ temporal: client, config });
}
