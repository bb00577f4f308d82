import http from 'node:http';
import { loadConfig, poolIdleMillis, poolMaxOf, refuseDefaultSecrets } from '../config.js';
import { createLogger } from '../logger.js';
import { openOrm } from '../entities/orm.js';
import { connectTemporalClient } from '../temporal/client.js';
import { createWorkers } from './create-worker.js';
import { startReconciler } from './reconciler.js';
import { startEventRelay } from './event-relay.js';
import { ensureDispatchers } from './dispatchers.js';
import { ensureSchedules } from './schedules.js';
import { startMemoryLog } from './memory-log.js';
import { serveWorkerMetrics } from '../observability/worker-metrics.js';
import { probeHandler } from '../services/platform/readiness.js';
import { beginStopping } from '../services/platform/shutdown.js';

if (process.env.SVC_MEMORY_LOG) startMemoryLog(process.env.SVC_MEMORY_LOG);
const config = loadConfig();
refuseDefaultSecrets(config, process.env, 'worker');
const log = createLogger('worker', config.logLevel);
const orm = await openOrm(config.databaseUrl, poolMaxOf(config, 'worker'), {
  ...config.database,
  idleTimeoutMillis: poolIdleMillis(config),
});
const temporal = await connectTemporalClient(config.temporalConnection, config.temporalNamespace);
const handle = await createWorkers({ config, orm, log });

// Stopping is possible from here on: the workers are running (they may hold activities), so a
// signal during the rest of the start (dispatchers, schedules) stops them gracefully too instead of
// killing the process mid-activity.
let stopping = false;
let reconciler: { stop(): void } | null = null;
let relay: { stop(): void } | null = null;
let healthServer: http.Server | null = null;
const stop = async () => {
  if (stopping) return;
  stopping = true;
  log.info('worker stopping');
  // Activities get the workers' grace time; past that, nothing is worth holding the process for.
  setTimeout(() => {
    log.warn('worker shutdown timed out');
    process.exit(1);
  }, 30_000).unref();
  beginStopping();
  reconciler?.stop();
  relay?.stop();
  await handle.shutdown();
  log.info('workers stopped');
  healthServer?.close();
  await temporal.close();
  await orm.close();
  log.info('worker stopped');
  process.exit(0);
};
process.on('SIGINT', stop);
process.on('SIGTERM', stop);

/** A start step cut short by a stop is no failure: the stop finishes the process. */
const unlessStopping = (step: Promise<void>) =>
  step.catch((err: unknown) => {
    if (!stopping) throw err;
  });
if (config.workerMetricsPort !== null) serveWorkerMetrics({ port: config.workerMetricsPort, host: config.workerMetricsHost, log });
if (!stopping) await unlessStopping(ensureDispatchers(temporal.client, config));
if (!stopping) await unlessStopping(ensureSchedules(temporal.client, config));
if (!stopping) {
  reconciler = startReconciler({ config, orm, temporal: temporal.client, log });
  relay = startEventRelay({ config, orm, temporal: temporal.client, log });
  // The launcher (scripts/stack.ts) gives the worker V8 heap flags for its memory budget; shown so a
  // worker started another way can be checked.
  const v8Flags = process.execArgv.filter((a) => /^--(max-semi-space-size|heap-growing-percent|max-old-space-size)/.test(a));
  log.info({ taskQueue: config.taskQueue, temporal: config.temporalAddress, v8Flags }, 'worker started');

  // WORKER_HEALTH_PORT: /healthz and /readyz for an orchestrator (services/platform/readiness.ts).
  const probes = probeHandler({ orm, temporal: temporal.client }, () => stopping);
  if (config.workerHealthPort !== null)
    healthServer = http
      .createServer((req, res) => {
        if (!probes(req, res)) res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
      })
      .listen(config.workerHealthPort, config.workerHealthHost, () =>
        log.info({ port: config.workerHealthPort, host: config.workerHealthHost }, 'worker health listening'),
      );
}
await handle.run;
