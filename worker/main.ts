import { loadConfig } from '../config.js';
import { createLogger } from '../logger.js';
import { openOrm } from '../entities/orm.js';
import { connectTemporalClient } from '../temporal/client.js';
import { createWorkers } from './create-worker.js';
import { startReconciler } from './reconciler.js';

const config = loadConfig();
const log = createLogger('worker', config.logLevel);
const orm = await openOrm(config.databaseUrl, 40);
const temporal = await connectTemporalClient(config.temporalAddress, config.temporalNamespace);
const handle = await createWorkers({ config, orm, log });
const reconciler = startReconciler({ config, orm, temporal: temporal.client, log });
log.info({ taskQueue: config.taskQueue, temporal: config.temporalAddress }, 'worker started');

let stopping = false;
const stop = async () => {
  if (stopping) return;
  stopping = true;
  log.info('worker stopping');
  reconciler.stop();
  await handle.shutdown();
  await temporal.close();
  await orm.close();
  process.exit(0);
};
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
await handle.run;
