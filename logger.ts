import os from 'node:os';
import { pino, type Logger } from 'pino';

export type { Logger };

/**
 * The one logger of a process: JSON lines on stdout, each with the process id, the host and the
 * process's role (api, worker, launcher), so lines of several APIs and workers on one machine or
 * one log pipeline stay apart. The worker's Temporal SDK lines come through it too
 * (observability/temporal-runtime.ts); a request's lines carry its requestId (api/http/observability.ts).
 */
export function createLogger(role: string, level = process.env.LOG_LEVEL ?? 'info'): Logger {
  return pino({ level, base: { pid: process.pid, hostname: os.hostname(), role }, timestamp: pino.stdTimeFunctions.isoTime });
}
