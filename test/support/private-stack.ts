import fs from 'node:fs';
import path from 'node:path';
import { spawn, type ChildProcess } from 'node:child_process';
import { freePort } from '../../scripts/embedded-pg.js';
import { waitForPort } from '../../temporal/dev-server.js';

/**
 * An API and a worker of our own on a private task queue, sharing the run's PostgreSQL, Temporal and
 * simulator. Tests that kill workers or change throughput settings use it so they disturb no one.
 */
export async function privateStack(env: Record<string, string> = {}) {
  const port = await freePort();
  const taskQueue = `private-${process.pid}-${port}`;
  const common = {
    ...process.env,
    PORT: String(port),
    PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
    TEMPORAL_TASK_QUEUE: taskQueue,
    LOG_LEVEL: 'warn',
    ...env,
  };
  const logDir = process.env.TEST_DATA_DIR;
  const out = (name: string) => (logDir ? fs.openSync(path.join(logDir, `private-${port}-${name}.log`), 'a') : 'ignore');
  const spawnPart = (entry: string) =>
    spawn(process.execPath, ['--import', 'tsx', entry], {
      env: common,
      stdio: ['ignore', out(path.basename(path.dirname(entry))), out(path.basename(path.dirname(entry)))],
    });
  let worker: ChildProcess = spawnPart('worker/main.ts');
  const apiProc = spawnPart('api/main.ts');
  await waitForPort(port, 60_000, apiProc);
  const kill = (c: ChildProcess, signal: NodeJS.Signals) =>
    new Promise<void>((resolve) => {
      if (c.exitCode !== null || c.signalCode !== null) return resolve();
      c.once('exit', () => resolve());
      c.kill(signal);
      // A process that will not stop must not hold the suite hostage.
      setTimeout(() => c.kill('SIGKILL'), 30_000).unref();
    });
  return {
    apiUrl: `http://127.0.0.1:${port}`,
    taskQueue,
    killWorker: () => kill(worker, 'SIGKILL'),
    startWorker: () => {
      worker = spawnPart('worker/main.ts');
    },
    stop: async () => {
      await kill(worker, 'SIGTERM');
      await kill(apiProc, 'SIGTERM');
    },
  };
}
