import { createRequire } from 'node:module';
import { NativeConnection, Worker, Runtime, makeTelemetryFilterString, bundleWorkflowCode } from '@temporalio/worker';
import type { MikroORM } from '@mikro-orm/postgresql';
import { providerTaskQueue, type Config } from '../config.js';
import type { Logger } from '../logger.js';
import { createActivities } from '../activities/index.js';

const require = createRequire(import.meta.url);

let runtimeInstalled = false;

export interface WorkerHandle { workers: Worker[]; connection: NativeConnection; run: Promise<unknown>; shutdown(): Promise<void> }

/**
 * One main worker (workflows and database activities) and one activity-only worker per provider
 * channel. The provider queues carry a server-side rate limit: that is the admission control that
 * turns a burst into `queued` messages draining at the provider's pace instead of provider 429s.
 */
export async function createWorkers(opts: { config: Config; orm: MikroORM; log: Logger; workflowBundle?: { code: string } }): Promise<WorkerHandle> {
  if (!runtimeInstalled) {
    runtimeInstalled = true;
    // Shutdown is ours (worker/main.ts): the SDK's own signal handlers would race it.
    Runtime.install({ shutdownSignals: [], telemetryOptions: { logging: { filter: makeTelemetryFilterString({ core: 'WARN' }), forward: {} } } });
  }
  const { config } = opts;
  const connection = await NativeConnection.connect({ address: config.temporalAddress });
  const activities = createActivities({ orm: opts.orm, config, log: opts.log });
  // One bundle for every worker that runs workflows (bundling is slow and memory-hungry).
  const workflowBundle = opts.workflowBundle ?? await bundleWorkflowCode({ workflowsPath: require.resolve('../workflows/index.ts') });
  const main = await Worker.create({
    connection,
    namespace: config.temporalNamespace,
    taskQueue: config.taskQueue,
    activities,
    workflowBundle,
    // Sized for a 2-core machine and a database pool of about 40 connections.
    maxConcurrentActivityTaskExecutions: 40,
    maxConcurrentWorkflowTaskExecutions: 40,
    maxCachedWorkflows: 5000,
    shutdownGraceTime: '10 seconds',
  });
  const providers = await Promise.all((['sms', 'whatsapp'] as const).map((channel) => Worker.create({
    connection,
    namespace: config.temporalNamespace,
    taskQueue: providerTaskQueue(config, channel),
    activities,
    maxConcurrentActivityTaskExecutions: 50,
    maxTaskQueueActivitiesPerSecond: channel === 'sms' ? config.smsMaxPerSecond : config.whatsappMaxPerSecond,
    shutdownGraceTime: '10 seconds',
  })));
  // Webhook and automation deliveries: a queue every worker of the deployment polls.
  const webhooks = await Worker.create({
    connection, namespace: config.temporalNamespace, taskQueue: config.webhookTaskQueue, workflowBundle, activities,
    maxConcurrentWorkflowTaskExecutions: 40, maxConcurrentLocalActivityExecutions: 40, maxCachedWorkflows: 2000, shutdownGraceTime: '10 seconds',
  });
  const workers = [main, ...providers, webhooks];
  const run = Promise.all(workers.map((w) => w.run()));
  return {
    workers, connection, run,
    shutdown: async () => {
      for (const w of workers) if (w.getState() === 'RUNNING') w.shutdown();
      await run.catch(() => {});
      await connection.close();
    },
  };
}
