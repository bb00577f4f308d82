import http from 'node:http';
import type { Logger } from '../logger.js';
import { collectProcessMetrics, registry } from './metrics.js';
import { coreMetricsAddress } from './temporal-runtime.js';

/**
 * GET /metrics of a worker (WORKER_METRICS_PORT): the process's own counters and Node metrics, then
 * the Temporal SDK core's worker metrics read from its loopback exporter, as one scrape. The two
 * sets share no metric name (the core's all start with `temporal_`), so the texts concatenate.
 */
export function serveWorkerMetrics(opts: { port: number; host: string; log: Logger }): http.Server {
  collectProcessMetrics();
  const server = http.createServer((req, res) => {
    if (req.method !== 'GET' || (req.url ?? '').split('?')[0] !== '/metrics') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
      return;
    }
    void (async () => {
      const own = await registry.metrics();
      const core = await coreMetricsText().catch((err: unknown) => {
        // A scrape still gets the worker's own metrics; the gap shows as absent temporal_ series.
        opts.log.warn({ err }, 'temporal core metrics unavailable');
        return '';
      });
      res.writeHead(200, { 'content-type': registry.contentType }).end(`${own}\n${core}`);
    })().catch((err: unknown) => {
      opts.log.error({ err }, 'metrics scrape failed');
      if (!res.headersSent) res.writeHead(500);
      res.end();
    });
  });
  server.listen(opts.port, opts.host, () => opts.log.info({ port: opts.port, host: opts.host }, 'worker metrics listening'));
  return server;
}

async function coreMetricsText(): Promise<string> {
  const address = await coreMetricsAddress();
  if (!address) return '';
  const res = await fetch(`http://${address}/metrics`, { signal: AbortSignal.timeout(5000) });
  if (!res.ok) throw new Error(`core exporter answered ${res.status}`);
  return res.text();
}
