import http from 'node:http';
import { loadConfig, poolMaxOf, refuseDefaultSecrets } from '../config.js';
import { createLogger } from '../logger.js';
import { openOrm } from '../entities/orm.js';
import { connectTemporalClient } from '../temporal/client.js';
import { createApp } from './http/app.js';
import { rawIngress } from './http/ingress.js';
import { MAX_HEADER_BYTES, answerClientErrors } from './http/client-errors.js';
import { probeHandler } from '../services/platform/readiness.js';

const config = loadConfig();
refuseDefaultSecrets(config);
const log = createLogger('api', config.logLevel);
const orm = await openOrm(config.databaseUrl, poolMaxOf(config, 'api'), { ...config.database });
const temporal = await connectTemporalClient(config.temporalConnection, config.temporalNamespace);
const deps = { config, orm, temporal: temporal.client, log };
// OPERATOR_PORT moves /admin/v1 (and its OpenAPI document) to an address of its own, which can be
// kept off the public network; the public port then answers 404 there.
const app = createApp(deps, config.operatorPort === null ? 'all' : 'public');
const koa = app.callback();
// Provider webhooks (SMS receipts above all) are answered ahead of Koa; see api/http/ingress.ts.
const ingress = rawIngress(deps);
let stopping = false;
// /healthz and /readyz (services/platform/readiness.ts): no auth, not in the OpenAPI document.
const probes = probeHandler({ orm, temporal: temporal.client }, () => stopping);
const server = http.createServer({ maxHeaderSize: MAX_HEADER_BYTES }, (req, res) => {
  if (!probes(req, res) && !ingress(req, res)) void koa(req, res);
});
answerClientErrors(server);
server.keepAliveTimeout = 65_000;
server.listen(config.port, config.host, () => log.info({ port: config.port, host: config.host }, 'api listening'));
const operatorServer =
  config.operatorPort === null ? null : http.createServer({ maxHeaderSize: MAX_HEADER_BYTES }, createApp(deps, 'operator').callback());
if (operatorServer) answerClientErrors(operatorServer);
operatorServer?.listen(config.operatorPort!, config.operatorHost, () =>
  log.info({ port: config.operatorPort, host: config.operatorHost }, 'operator api listening'),
);

/**
 * Requests in flight finish; idle keep-alive connections (clients hold them for up to 65 s) are closed
 * at once and again as each busy one falls idle, so an idle API stops in milliseconds instead of
 * waiting for its clients to hang up. Past the grace, what is left is cut: the workflows a request
 * started run on in Temporal whatever happens to its connection.
 */
const STOP_GRACE_MS = 5000;
const stop = () => {
  if (stopping) return;
  stopping = true;
  log.info('api stopping');
  const t0 = Date.now();
  const servers = [server, ...(operatorServer ? [operatorServer] : [])];
  const sweep = setInterval(() => {
    for (const s of servers) s.closeIdleConnections();
  }, 50);
  setTimeout(() => {
    log.warn('api stop grace over; closing the remaining connections');
    for (const s of servers) s.closeAllConnections();
  }, STOP_GRACE_MS).unref();
  void Promise.all(servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve())))).then(async () => {
    clearInterval(sweep);
    await temporal.close();
    await orm.close();
    log.info({ ms: Date.now() - t0 }, 'api stopped');
    process.exit(0);
  });
  setTimeout(() => process.exit(1), STOP_GRACE_MS + 2000).unref();
};
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
