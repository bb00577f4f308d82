import { createRequire } from 'node:module';
import { NativeConnection, Worker, Runtime, makeTelemetryFilterString } from '@temporalio/worker';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { Config } from '../config.js';
import type { Logger } from '../logger.js';
import { createActivities } from '../activities/index.js';

const require = createRequire(import.meta.url);

let runtimeInstalled = false;

export interface WorkerHandle { worker: Worker; connection: NativeConnection; run: Promise<void>; shutdown(): Promise<void> }

export async function createWorker(opts: { config: Config; orm: MikroORM; log: Logger; workflowBundle?: { code: string } }): Promise<WorkerHandle> {
  if (!runtimeInstalled) {
    runtimeInstalled = true;
    Runtime.install({ telemetryOptions: { logging: { filter: makeTelemetryFilterString({ core: 'WARN' }), forward: {} } } });
  }
  const connection = await NativeConnection.connect({ address: opts.config.temporalAddress });
  const worker = await Worker.create({
    connection,
    namespace: opts.config.temporalNamespace,
    taskQueue: opts.config.taskQueue,
    activities: createActivities({ orm: opts.orm, config: opts.config, log: opts.log }),
    ...(opts.workflowBundle ? { workflowBundle: opts.workflowBundle } : { workflowsPath: require.resolve('../workflows/index.ts') }),
    // Sized for a 2-core machine and a database pool of about 20 connections.
    maxConcurrentActivityTaskExecutions: 40,
    maxConcurrentWorkflowTaskExecutions: 20,
    maxCachedWorkflows: 2000,
    shutdownGraceTime: '10 seconds',
  });
  const run = worker.run();
  return { worker, connection, run, shutdown: async () => { worker.shutdown(); await run.catch(() => {}); await connection.close(); } };
}
