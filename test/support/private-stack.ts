import fs from 'node:fs';
import path from 'node:path';
import { spawn, type ChildProcess } from 'node:child_process';
import { freePort } from '../../scripts/embedded-pg.js';
import { waitForPort } from '../../temporal/dev-server.js';

/**
 * An API and a worker of our own on a private task queue, sharing the run's PostgreSQL, Temporal and
 * simulator. Tests that kill workers or change throughput settings use it so they disturb no one.
 * `apis` and `workers` start several of each on the same task queue (the production shape: every
 * API and every worker of one deployment against one database and one Temporal namespace).
 */
export async function privateStack(env: Record<string, string> = {}, shape: { apis?: number; workers?: number } = {}) {
  const apiCount = shape.apis ?? 1;
  const workerCount = shape.workers ?? 1;
  const ports: number[] = [];
  for (let i = 0; i < apiCount; i++) ports.push(await freePort());
  const port = ports[0];
  const taskQueue = `private-${process.pid}-${port}`;
  const common = {
    ...process.env,
    TEMPORAL_TASK_QUEUE: taskQueue,
    LOG_LEVEL: 'warn',
    ...env,
  };
  const logDir = process.env.TEST_DATA_DIR;
  const out = (name: string) => (logDir ? fs.openSync(path.join(logDir, `private-${port}-${name}.log`), 'a') : 'ignore');
  const spawnPart = (entry: string, name: string, extra: Record<string, string> = {}) =>
    spawn(process.execPath, ['--import', 'tsx', entry], {
      env: { ...common, ...extra },
      stdio: ['ignore', out(name), out(name)],
    });
  const apiEnv = (p: number) => ({ PORT: String(p), PUBLIC_BASE_URL: `http://127.0.0.1:${p}` });
  // Workers get the first API's address for whatever they link back to.
  const workerEnv = apiEnv(port);
  const workerName = (i: number) => (i === 0 ? 'worker' : `worker-${i}`);
  const workers: ChildProcess[] = Array.from({ length: workerCount }, (_, i) => spawnPart('worker/main.ts', workerName(i), workerEnv));
  const apis: ChildProcess[] = ports.map((p, i) => spawnPart('api/main.ts', i === 0 ? 'api' : `api-${i}`, apiEnv(p)));
  const kill = (c: ChildProcess, signal: NodeJS.Signals) =>
    new Promise<void>((resolve) => {
      if (c.exitCode !== null || c.signalCode !== null) return resolve();
      c.once('exit', () => resolve());
      c.kill(signal);
      // A process that will not stop must not hold the suite hostage.
      setTimeout(() => c.kill('SIGKILL'), 30_000).unref();
    });
  try {
    // Two minutes: on a loaded machine an API's first start (module loading) has taken over 60 s.
    for (const [i, p] of ports.entries()) await waitForPort(p, 120_000, apis[i]);
  } catch (err) {
    // The caller gets no handle to stop what started, so stop it here: left running, it would keep
    // the test file (and the whole run) from ever ending.
    await Promise.all([...workers, ...apis].map((c) => kill(c, 'SIGKILL')));
    throw err;
  }
  return {
    apiUrl: `http://127.0.0.1:${port}`,
    apiUrls: ports.map((p) => `http://127.0.0.1:${p}`),
    taskQueue,
    /** Process ids, for CPU and memory readings. */
    pids: () => ({ apis: apis.map((c) => c.pid), workers: workers.map((c) => c.pid) }),
    killWorker: (i = 0) => kill(workers[i], 'SIGKILL'),
    startWorker: (i = 0) => {
      workers[i] = spawnPart('worker/main.ts', workerName(i), workerEnv);
    },
    killApi: (i = 0) => kill(apis[i], 'SIGKILL'),
    stop: async () => {
      await Promise.all(workers.map((w) => kill(w, 'SIGTERM')));
      await Promise.all(apis.map((a) => kill(a, 'SIGTERM')));
    },
  };
}
