import http from 'node:http';
import { loadConfig, refuseDefaultSecrets } from '../config.js';
import { createLogger } from '../logger.js';
import { openOrm } from '../entities/orm.js';
import { connectTemporalClient } from '../temporal/client.js';
import { createApp } from './http/app.js';
import { rawIngress } from './http/ingress.js';

const config = loadConfig();
refuseDefaultSecrets(config);
const log = createLogger('api', config.logLevel);
const orm = await openOrm(config.databaseUrl, 20);
const temporal = await connectTemporalClient(config.temporalAddress, config.temporalNamespace);
const deps = { config, orm, temporal: temporal.client, log };
// OPERATOR_PORT moves /admin/v1 (and its OpenAPI document) to an address of its own, which can be
// kept off the public network; the public port then answers 404 there.
const app = createApp(deps, config.operatorPort === null ? 'all' : 'public');
const koa = app.callback();
// Provider webhooks (SMS receipts above all) are answered ahead of Koa; see api/http/ingress.ts.
const ingress = rawIngress(deps);
const server = http.createServer((req, res) => {
  if (!ingress(req, res)) void koa(req, res);
});
server.keepAliveTimeout = 65_000;
server.listen(config.port, '127.0.0.1', () => log.info({ port: config.port }, 'api listening'));
const operatorServer = config.operatorPort === null ? null : http.createServer(createApp(deps, 'operator').callback());
operatorServer?.listen(config.operatorPort!, config.operatorHost, () =>
  log.info({ port: config.operatorPort, host: config.operatorHost }, 'operator api listening'),
);

const stop = () => {
  log.info('api stopping');
  operatorServer?.close();
  server.close(async () => {
    await temporal.close();
    await orm.close();
    process.exit(0);
  });
  setTimeout(() => process.exit(0), 5000).unref();
};
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
