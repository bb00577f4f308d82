import { NativeConnection, Worker, type WorkflowBundleOption } from '@temporalio/worker';
import type { MikroORM } from '@mikro-orm/postgresql';
import { providerTaskQueue, type Config } from '../config.js';
import type { Logger } from '../logger.js';
import { createActivities } from '../activities/index.js';
import { buildWorkflowBundle, bundlePath, staleReason } from './workflow-bundle.js';
import { dataIndexTaskQueue } from '../workflows/data/column-index.starter.js';
import { installTemporalRuntime } from '../observability/temporal-runtime.js';
import { dispatchTaskQueueOf } from '../domain/messaging/dispatch-runs.js';

/**
 * Sticky-cache sizes, from the worker's memory budget (512 MB): a cached workflow holds its own copy
 * of the bundle's modules, about 310 KB resident each (measured with messageWorkflow, 1,000 and
 * 3,000 cached). The earlier 5,000 + 2,000 could have grown the worker by about 2 GB; these cap the
 * caches at about 220 MB. An evicted workflow is replayed from its history at its next task
 * (a receipt, a timer), which costs a little CPU, not correctness.
 */
const MAX_CACHED_WORKFLOWS = { main: 500, webhooks: 200 };

export interface WorkerHandle {
  workers: Worker[];
  connection: NativeConnection;
  run: Promise<unknown>;
  shutdown(): Promise<void>;
}

/**
 * The prebuilt bundle (scripts/bundle-workflows.ts) when it matches the sources; otherwise, e.g. a
 * worker started on its own after a workflow edit, the workflows are bundled here (slower start,
 * about 150 MB more memory) and the bundle is written for the next start.
 */
export async function loadWorkflowBundle(log: Logger): Promise<WorkflowBundleOption> {
  const reason = staleReason();
  if (!reason) return { codePath: bundlePath };
  log.warn(
    { reason },
    'workflow bundle missing or out of date; bundling in the worker process (run scripts/bundle-workflows.ts before starting the worker)',
  );
  const built = await buildWorkflowBundle();
  if (built.writeError) log.warn({ err: built.writeError.message }, 'could not save the workflow bundle');
  log.info({ ms: built.ms }, 'workflow bundle built in the worker process');
  return { code: built.code };
}

/**
 * One main worker (workflows and database activities) and one activity-only worker per provider
 * channel. The provider queues carry a server-side rate limit: that is the admission control that
 * turns a burst into `queued` messages draining at the provider's pace instead of provider 429s.
 */
export async function createWorkers(opts: {
  config: Config;
  orm: MikroORM;
  log: Logger;
  workflowBundle?: WorkflowBundleOption;
}): Promise<WorkerHandle> {
  // Once per process: the SDK's and the core's log lines through our pino logger, and the core's
  // worker metrics when this worker serves /metrics.
  await installTemporalRuntime(opts.log, { coreMetrics: opts.config.workerMetricsPort !== null });
  const { config } = opts;
  // TLS, mTLS, API key and gRPC metadata as config.ts read them through @temporalio/envconfig.
  const connection = await NativeConnection.connect(config.temporalConnection);
  const activities = createActivities({ orm: opts.orm, config, log: opts.log });
  // One bundle for every worker that runs workflows, built ahead of the worker process.
  const workflowBundle = opts.workflowBundle ?? (await loadWorkflowBundle(opts.log));
  const main = await Worker.create({
    connection,
    namespace: config.temporalNamespace,
    taskQueue: config.taskQueue,
    activities,
    workflowBundle,
    // Sized for a 2-core machine and a database pool of about 40 connections.
    maxConcurrentActivityTaskExecutions: 40,
    maxConcurrentWorkflowTaskExecutions: 40,
    maxCachedWorkflows: MAX_CACHED_WORKFLOWS.main,
    shutdownGraceTime: '10 seconds',
  });
  const providers = await Promise.all(
    (['sms', 'whatsapp'] as const).map((channel) =>
      Worker.create({
        connection,
        namespace: config.temporalNamespace,
        taskQueue: providerTaskQueue(config, channel),
        activities,
        maxConcurrentActivityTaskExecutions: 50,
        maxTaskQueueActivitiesPerSecond: channel === 'sms' ? config.smsMaxPerSecond : config.whatsappMaxPerSecond,
        shutdownGraceTime: '10 seconds',
      }),
    ),
  );
  // The batch dispatchers' streaming activities: DISPATCH_RUNS_PER_WORKER at once in this process, so
  // a channel's runs spread over the workers (domain/messaging/dispatch-runs.ts).
  const dispatchers = await Promise.all(
    (['sms', 'whatsapp'] as const).map((channel) =>
      Worker.create({
        connection,
        namespace: config.temporalNamespace,
        taskQueue: dispatchTaskQueueOf(providerTaskQueue(config, channel)),
        activities,
        maxConcurrentActivityTaskExecutions: config.dispatchRunsPerWorker,
        shutdownGraceTime: '10 seconds',
      }),
    ),
  );
  // Webhook and automation deliveries: a queue every worker of the deployment polls.
  const webhooks = await Worker.create({
    connection,
    namespace: config.temporalNamespace,
    taskQueue: config.webhookTaskQueue,
    workflowBundle,
    activities,
    maxConcurrentWorkflowTaskExecutions: 40,
    maxConcurrentLocalActivityExecutions: 40,
    maxCachedWorkflows: MAX_CACHED_WORKFLOWS.webhooks,
    shutdownGraceTime: '10 seconds',
  });
  // Data-table index builds, one at a time per worker: a CREATE INDEX CONCURRENTLY waits for every
  // older transaction, other builds included (workflows/data/column-index.starter.ts).
  const dataIndexes = await Worker.create({
    connection,
    namespace: config.temporalNamespace,
    taskQueue: dataIndexTaskQueue(config),
    activities,
    maxConcurrentActivityTaskExecutions: 1,
    shutdownGraceTime: '10 seconds',
  });
  const workers = [main, ...providers, ...dispatchers, webhooks, dataIndexes];
  const run = Promise.all(workers.map((w) => w.run()));
  return {
    workers,
    connection,
    run,
    shutdown: async () => {
      for (const w of workers) if (w.getState() === 'RUNNING') w.shutdown();
      await run.catch(() => {});
      await connection.close();
    },
  };
}
