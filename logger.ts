import os from 'node:os';
import { format } from 'node:util';
import { pino, type Logger } from 'pino';

export type { Logger };

/** The roles whose output is read as a log stream (JSON lines only), where console output is taken over. */
const SERVICE_ROLES = new Set(['api', 'worker']);

/**
 * The one logger of a process: JSON lines on stdout, each with the process id, the host and the
 * process's role (api, worker, launcher), so lines of several APIs and workers on one machine or
 * one log pipeline stay apart. The worker's Temporal SDK lines come through it too
 * (observability/temporal-runtime.ts); a request's lines carry its requestId (api/http/observability.ts).
 * In the API and the worker it also takes the console (takeConsole).
 */
export function createLogger(role: string, level = process.env.LOG_LEVEL ?? 'info'): Logger {
  const log = pino({ level, base: { pid: process.pid, hostname: os.hostname(), role }, timestamp: pino.stdTimeFunctions.isoTime });
  if (SERVICE_ROLES.has(role)) takeConsole(log);
  return log;
}

/**
 * Sends what libraries print with console.* through the logger, marked `console: true`, so the
 * process writes nothing but JSON lines. The MCP SDK's console.warn about its JSON response mode was
 * the API's one plain-text line at every start. Returns the console as it was (for tests).
 */
export function takeConsole(log: Logger): () => void {
  const saved = {
    log: console.log,
    info: console.info,
    warn: console.warn,
    error: console.error,
    debug: console.debug,
    trace: console.trace,
  };
  const to =
    (level: 'debug' | 'info' | 'warn' | 'error') =>
    (...args: unknown[]) =>
      log[level]({ console: true }, format(...args));
  console.log = to('info');
  console.info = to('info');
  console.warn = to('warn');
  console.error = to('error');
  console.debug = to('debug');
  console.trace = to('debug');
  return () => Object.assign(console, saved);
}
