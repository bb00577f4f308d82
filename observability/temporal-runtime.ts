import net from 'node:net';
import { Runtime, makeTelemetryFilterString, type LogLevel, type LogMetadata, type Logger as SdkLogger } from '@temporalio/worker';
import type { Logger } from '../logger.js';

// The Temporal SDK logs through its Runtime logger: the worker's lifecycle, activity and workflow
// `log` calls (workflow code logs through a sink into this same logger, so workflows stay
// deterministic) and, with `forward`, the Rust core's own lines. Its default logger prints plain
// text; this one writes every line through the process's pino logger, with the SDK's metadata as fields.

const LEVELS: Record<LogLevel, 'trace' | 'debug' | 'info' | 'warn' | 'error'> = {
  TRACE: 'trace',
  DEBUG: 'debug',
  INFO: 'info',
  WARN: 'warn',
  ERROR: 'error',
};

/**
 * What the SDK says of a worker that polls only some kinds of task. Ours are built that way on
 * purpose (worker/create-worker.ts: the provider, dispatch and index queues run activities only, and
 * no worker serves Nexus), so at start-up these came as five warnings and seven info lines a worker
 * process, on every start, about nothing wrong. Registering workflows on those queues would make them
 * poll for workflow tasks that never come; the lines go to debug instead.
 */
const BY_DESIGN = new Set([
  'No workflows registered, not polling for workflow tasks',
  'No activities registered, not polling for activity tasks',
  'No Nexus services registered, not polling for Nexus tasks',
]);

export class PinoSdkLogger implements SdkLogger {
  constructor(private readonly pino: Logger) {}

  log(level: LogLevel, message: string, meta: LogMetadata = {}): void {
    // pino serializes an error's message and stack only under `err`.
    const { error, ...fields } = meta as LogMetadata & { error?: unknown };
    const to = BY_DESIGN.has(message) ? 'debug' : (LEVELS[level] ?? 'info');
    this.pino[to](error === undefined ? fields : { ...fields, err: error }, message);
  }
  trace(message: string, meta?: LogMetadata) {
    this.log('TRACE', message, meta);
  }
  debug(message: string, meta?: LogMetadata) {
    this.log('DEBUG', message, meta);
  }
  info(message: string, meta?: LogMetadata) {
    this.log('INFO', message, meta);
  }
  warn(message: string, meta?: LogMetadata) {
    this.log('WARN', message, meta);
  }
  error(message: string, meta?: LogMetadata) {
    this.log('ERROR', message, meta);
  }
}

/** A port free on the loopback now; the core binds it right after (a tiny race, on loopback only). */
function freeLoopbackPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

let installed: Promise<{ coreMetricsAddress: string | null }> | null = null;

/**
 * Installs the SDK Runtime once per process. With `coreMetrics`, the core's Prometheus exporter
 * (worker task slots, poll and schedule-to-start latencies, sticky cache, activity and workflow
 * counters) listens on a loopback port of its own, which the worker's /metrics merges in
 * (observability/worker-metrics.ts); it is never exposed by itself.
 */
export function installTemporalRuntime(log: Logger, opts: { coreMetrics: boolean }): Promise<{ coreMetricsAddress: string | null }> {
  installed ??= (async () => {
    const coreMetricsAddress = opts.coreMetrics ? `127.0.0.1:${await freeLoopbackPort()}` : null;
    Runtime.install({
      logger: new PinoSdkLogger(log.child({ temporal: true })),
      // Shutdown is ours (worker/main.ts): the SDK's own signal handlers would race it.
      shutdownSignals: [],
      telemetryOptions: {
        logging: { filter: makeTelemetryFilterString({ core: 'WARN' }), forward: {} },
        ...(coreMetricsAddress ? { metrics: { prometheus: { bindAddress: coreMetricsAddress, countersTotalSuffix: true } } } : {}),
      },
    });
    return { coreMetricsAddress };
  })();
  return installed;
}

/** The core exporter's address once the Runtime is installed with it; null otherwise. */
export async function coreMetricsAddress(): Promise<string | null> {
  return installed ? (await installed).coreMetricsAddress : null;
}
