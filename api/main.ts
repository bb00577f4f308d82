import http from 'node:http';
import net from 'node:net';
import { loadConfig, poolIdleMillis, poolMaxOf, refuseDefaultSecrets, requestBoundedDatabase } from '../config.js';
import { createLogger } from '../logger.js';
import { openOrm } from '../entities/orm.js';
import { connectTemporalClient } from '../temporal/client.js';
import { createApp } from './http/app.js';
import { rawIngress } from './http/ingress.js';
import { MAX_HEADER_BYTES, answerClientErrors } from './http/client-errors.js';
import { probeHandler } from '../services/platform/readiness.js';
import { startAgentToolWorker } from './agents/tool-door.js';

const config = loadConfig();
refuseDefaultSecrets(config);
const log = createLogger('api', config.logLevel);
// Every request's database and Temporal work is bounded (docs/architecture.md, "When a dependency
// fails"): a dependency that is down or hung is answered 503 temporary_failure, never waited on for ever.
const orm = await openOrm(config.databaseUrl, poolMaxOf(config, 'api'), {
  ...requestBoundedDatabase(config),
  idleTimeoutMillis: poolIdleMillis(config),
});
const temporal = await connectTemporalClient(config.temporalConnection, config.temporalNamespace, {
  callTimeoutMs: config.temporalCallTimeoutMs,
  // The longest a request waits for a workflow on purpose (answered sends; group, catalogue and product waits are 15 s).
  waitMs: Math.max(config.answeredSendWaitMs, 15_000),
});
const deps = { config, orm, temporal: temporal.client, log };
// The agent runs' tool door (api/agents/tool-door.ts): activities on a queue of their own, served
// here where the operation registry lives. AGENT_TOOL_WORKER=false leaves it to other API processes.
const toolWorker = config.agentToolWorker
  ? await startAgentToolWorker(deps).catch((err: unknown) => {
      log.error({ err }, 'the agent tool door could not start; agent runs wait for another API process to serve it');
      return null;
    })
  : null;
// OPERATOR_PORT moves /admin/v1 (and its OpenAPI document) to an address of its own, which can be
// kept off the public network; the public port then answers 404 there.
const app = createApp(deps, config.operatorPort === null ? 'all' : 'public');
const koa = app.callback();
// Provider webhooks (SMS receipts above all) are answered ahead of Koa; see api/http/ingress.ts.
const ingress = rawIngress(deps);
let stopping = false;
// /healthz and /readyz (services/platform/readiness.ts): no auth, not in the OpenAPI document.
const probes = probeHandler({ orm, temporal: temporal.client }, () => stopping);
// Answers begun while the API stops close their connection (drain below); those in flight then are found here.
const open = new Set<http.ServerResponse>();
const closing = (res: http.ServerResponse) => {
  if (!res.headersSent) res.setHeader('Connection', 'close');
};
const track = (res: http.ServerResponse) => {
  if (stopping) closing(res);
  else {
    open.add(res);
    res.once('close', () => open.delete(res));
  }
};
const server = http.createServer({ maxHeaderSize: MAX_HEADER_BYTES }, (req, res) => {
  track(res);
  if (!probes(req, res) && !ingress(req, res)) void koa(req, res);
});
answerClientErrors(server);
server.keepAliveTimeout = 65_000;
server.listen(config.port, config.host, () => log.info({ port: config.port, host: config.host }, 'api listening'));
const operatorKoa = config.operatorPort === null ? null : createApp(deps, 'operator').callback();
const operatorServer =
  operatorKoa === null
    ? null
    : http.createServer({ maxHeaderSize: MAX_HEADER_BYTES }, (req, res) => {
        track(res);
        void operatorKoa(req, res);
      });
if (operatorServer) answerClientErrors(operatorServer);
operatorServer?.listen(config.operatorPort!, config.operatorHost, () =>
  log.info({ port: config.operatorPort, host: config.operatorHost }, 'operator api listening'),
);

/**
 * A graceful stop that cuts no request that reached the API:
 *
 * 1. Drain (API_DRAIN_SECONDS): /readyz answers 503 `stopping` at once, so a load balancer takes
 *    the replica out; meanwhile it goes on serving whatever still arrives, and every answer (those
 *    in flight included) says `Connection: close`, so keep-alive clients open their next request
 *    elsewhere instead of finding a connection closed under it.
 * 2. The listeners close (no new connections; a client is refused at connect, before it sent
 *    anything). Connections that are idle are closed after a short linger (a request already on its
 *    way is read and answered first); the rest close as their answers end.
 * 3. Past API_STOP_GRACE_SECONDS what is left is cut: the workflows a request started run on in
 *    Temporal whatever happens to its connection. Then Temporal and the pool close and the process exits.
 */
const LINGER_MS = 250;
const stop = () => {
  if (stopping) return;
  stopping = true;
  const t0 = Date.now();
  const servers = [server, ...(operatorServer ? [operatorServer] : [])];
  for (const res of open) closing(res);
  open.clear();
  log.info({ drainSeconds: config.apiDrainSeconds }, 'api stopping: draining');
  setTimeout(() => {
    log.info({ ms: Date.now() - t0 }, 'api drained; closing the listeners');
    // net.Server's close: http.Server's would also close every idle connection at once, the moment
    // a client may be writing its next request on one.
    const closed = Promise.all(servers.map((s) => new Promise<void>((resolve) => net.Server.prototype.close.call(s, () => resolve()))));
    const sweep = setInterval(() => {
      for (const s of servers) s.closeIdleConnections();
    }, LINGER_MS);
    setTimeout(() => {
      log.warn('api stop grace over; closing the remaining connections');
      for (const s of servers) s.closeAllConnections();
    }, config.apiStopGraceSeconds * 1000).unref();
    void closed.then(async () => {
      clearInterval(sweep);
      await toolWorker?.shutdown();
      await temporal.close();
      await orm.close();
      log.info({ ms: Date.now() - t0 }, 'api stopped');
      process.exit(0);
    });
    setTimeout(() => process.exit(1), config.apiStopGraceSeconds * 1000 + 2000).unref();
  }, config.apiDrainSeconds * 1000);
};
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
