import http from 'node:http';
import { loadConfig } from '../config.js';
import { createLogger } from '../logger.js';
import { openOrm } from '../entities/orm.js';
import { connectTemporalClient } from '../temporal/client.js';
import { createApp } from './http/app.js';
import { rawIngress } from './http/ingress.js';

const config = loadConfig();
const log = createLogger('api', config.logLevel);
const orm = await openOrm(config.databaseUrl, 20);
const temporal = await connectTemporalClient(config.temporalAddress, config.temporalNamespace);
const deps = { config, orm, temporal: temporal.client, log };
const app = createApp(deps);
const koa = app.callback();
// Provider webhooks (SMS receipts above all) are answered ahead of Koa; see api/http/ingress.ts.
const ingress = rawIngress(deps);
const server = http.createServer((req, res) => {
  if (!ingress(req, res)) void koa(req, res);
});
server.keepAliveTimeout = 65_000;
server.listen(config.port, '127.0.0.1', () => log.info({ port: config.port }, 'api listening'));

const stop = () => {
  log.info('api stopping');
  server.close(async () => {
    await temporal.close();
    await orm.close();
    process.exit(0);
  });
  setTimeout(() => process.exit(0), 5000).unref();
};
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
