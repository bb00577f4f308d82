import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { startEmbeddedPg, freePort, type EmbeddedPg } from './embedded-pg.js';
import { resolveTemporalCli, startDevServer, setRetention, waitForPort, type DevServer } from '../temporal/dev-server.js';
import { openOrm } from '../entities/orm.js';
import { parseDatabaseUrl } from '../config.js';

export const projectRoot = fileURLToPath(new URL('..', import.meta.url));

export interface StackOptions {
  dataDir: string; // where PostgreSQL, the Temporal SQLite file and logs live
  persistentTemporal: boolean;
  /** Omitted: a free port chosen once the database and Temporal are up (their own random ports taken first). */
  apiPort?: number;
  uiPort?: number;
  temporalPort?: number;
  simulatorPort?: number;
  extraEnv?: Record<string, string>;
  logToFiles: boolean;
}

export interface Stack {
  env: Record<string, string>;
  apiUrl: string;
  simulatorUrl: string;
  temporalAddress: string;
  uiUrl: string | null;
  databaseUrl: string;
  children: Map<string, ChildProcess>;
  startChild(name: 'api' | 'worker' | 'simulator', extraEnv?: Record<string, string>): Promise<ChildProcess>;
  stopChild(name: string, signal?: NodeJS.Signals): Promise<void>;
  stop(): Promise<void>;
}

function bundleWorkflows(logFile: string | null): Promise<void> {
  return new Promise((resolve, reject) => {
    const out = logFile ? fs.openSync(logFile, 'a') : 'inherit';
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(projectRoot, 'scripts/bundle-workflows.ts')], {
      cwd: projectRoot,
      stdio: ['ignore', out, out],
    });
    child.once('error', reject);
    child.once('exit', (code) =>
      code === 0 ? resolve() : reject(new Error(`scripts/bundle-workflows.ts exited with ${code}${logFile ? `; see ${logFile}` : ''}`)),
    );
  });
}

const ENTRY = { api: 'api/main.ts', worker: 'worker/main.ts', simulator: 'simulator/main.ts' } as const;
// The worker's V8 heap sized for its 512 MB budget. With the defaults for this 24 GB machine (a 4 GB
// heap limit) V8 let the young generation reach 128 MB and the old one grow to about 4x the live
// data between full collections: worker peak 682-705 MB in the 100,000-contact campaign. The old
// generation is held to 30 % growth; the young one stays at 32 MB semi-spaces, because smaller ones
// (8 MB) promoted the objects of in-flight provider calls and cost 2-3 s more worker CPU per 100,000
// messages for 50 MB less (docs/benchmarks.md). SVC_WORKER_V8_FLAGS replaces them. Not NODE_OPTIONS:
// V8 refuses --heap-growing-percent there.
const NODE_FLAGS: Partial<Record<keyof typeof ENTRY, string[]>> = {
  worker: (process.env.SVC_WORKER_V8_FLAGS ?? '--max-semi-space-size=32 --heap-growing-percent=30').split(' ').filter(Boolean),
  // The API's: none by default; SVC_API_V8_FLAGS sets them (to weigh heap settings against send latency).
  api: (process.env.SVC_API_V8_FLAGS ?? '').split(' ').filter(Boolean),
};

// Scheduling priority (nice) per process when they share one machine. The API answers requests
// while the worker (dispatch, campaigns, receipts' workflows) and the simulator (a stand-in for
// providers that are elsewhere in production) do work nobody waits on by the millisecond: at equal
// priority, open-loop sends at 500/s had a p99 of 104-147 ms with stalls while a dispatch burst and
// its callbacks took both cores; with these two at nice 10, 35 ms (docs/benchmarks.md, "Sends at
// 500/s"). Threads inherit it, so it is set at spawn (`nice`), not after. SVC_WORKER_NICE and
// SVC_SIMULATOR_NICE replace the defaults; 0 runs them as the API.
const NICE: Partial<Record<keyof typeof ENTRY, number>> = {
  worker: Number(process.env.SVC_WORKER_NICE ?? 10),
  simulator: Number(process.env.SVC_SIMULATOR_NICE ?? 10),
};

/**
 * Starts what the service needs: PostgreSQL (embedded unless DATABASE_URL is set), Temporal (the CLI
 * dev server unless TEMPORAL_ADDRESS is set), then the simulator, the worker and the API as child
 * processes of this one. Used by `npm start` and by `npm test`.
 */
export async function startStack(o: StackOptions): Promise<Stack> {
  fs.mkdirSync(o.dataDir, { recursive: true });
  // The workflow bundle, checked (and rebuilt when a workflow or anything it imports changed) in a
  // process of its own while PostgreSQL and Temporal start, so webpack never runs in the worker.
  const bundled = bundleWorkflows(o.logToFiles ? path.join(o.dataDir, 'bundle.log') : null);
  bundled.catch(() => {}); // awaited below, before the worker starts
  const cleanups: Array<() => Promise<void>> = [];
  let pg: EmbeddedPg | null = null;
  let databaseUrl = process.env.DATABASE_URL;
  if (!databaseUrl) {
    pg = await startEmbeddedPg(path.join(o.dataDir, 'pg'), await freePort());
    databaseUrl = pg.url;
    cleanups.push(() => pg!.stop());
  }
  const orm = await openOrm(databaseUrl, 2, { ...parseDatabaseUrl(databaseUrl, process.env) });
  await orm.migrator.up();
  await orm.close();

  let temporalAddress = process.env.TEMPORAL_ADDRESS;
  let dev: DevServer | null = null;
  if (!temporalAddress) {
    const cli = resolveTemporalCli(projectRoot);
    dev = await startDevServer({
      cli,
      port: o.temporalPort ?? (await freePort()),
      uiPort: o.uiPort,
      dbFile: o.persistentTemporal ? path.join(o.dataDir, 'temporal.sqlite') : undefined,
      logFile: path.join(o.dataDir, 'temporal.log'),
    });
    temporalAddress = dev.address;
    if (o.persistentTemporal) setRetention(cli, temporalAddress, process.env.TEMPORAL_NAMESPACE ?? 'default');
    cleanups.push(() => dev!.stop());
  }

  const simPort = o.simulatorPort ?? (await freePort());
  // Chosen only now: the Temporal dev server opens random ports of its own (its HTTP API among them),
  // and a port picked before it started could be one of them (a run once reached Temporal's HTTP API).
  const apiPort = o.apiPort ?? (await freePort());
  const apiUrl = `http://127.0.0.1:${apiPort}`;
  const simulatorUrl = `http://127.0.0.1:${simPort}`;
  const env: Record<string, string> = {
    DATABASE_URL: databaseUrl,
    TEMPORAL_ADDRESS: temporalAddress,
    PORT: String(apiPort),
    PUBLIC_BASE_URL: process.env.PUBLIC_BASE_URL || apiUrl,
    SIM_PORT: String(simPort),
    SMS_GATEWAY_URL: process.env.SMS_GATEWAY_URL || `${simulatorUrl}/sms`,
    WHATSAPP_API_URL: process.env.WHATSAPP_API_URL || `${simulatorUrl}/whatsapp/v21.0`,
    PAYMENT_PROVIDER_URL: process.env.PAYMENT_PROVIDER_URL || `${simulatorUrl}/daraja`,
    SOCIAL_GRAPH_URL: process.env.SOCIAL_GRAPH_URL || `${simulatorUrl}/graph/v21.0`,
    // The agents' model: the simulator's OpenAI-compatible chat completions (simulator/model.ts).
    MODEL_API_URL: process.env.MODEL_API_URL || `${simulatorUrl}/v1`,
    SIM_SMS_INBOUND_URL: `${apiUrl}/providers/sms/inbound`,
    SIM_WA_WEBHOOK_URL: `${apiUrl}/providers/whatsapp/webhook`,
    ...o.extraEnv,
  };

  const children = new Map<string, ChildProcess>();
  const startChild = async (name: keyof typeof ENTRY, extraEnv: Record<string, string> = {}) => {
    const out = o.logToFiles ? fs.openSync(path.join(o.dataDir, `${name}.log`), 'a') : 'inherit';
    // SVC_PROFILE_DIR=<dir> writes a V8 CPU profile per child process on exit (bench diagnosis).
    const profile = process.env.SVC_PROFILE_DIR
      ? ['--cpu-prof', `--cpu-prof-dir=${process.env.SVC_PROFILE_DIR}`, `--cpu-prof-name=${name}.cpuprofile`]
      : [];
    const node = [process.execPath, ...(NODE_FLAGS[name] ?? []), ...profile, '--import', 'tsx', path.join(projectRoot, ENTRY[name])];
    const nice = process.platform === 'win32' ? 0 : (NICE[name] ?? 0);
    const [command, ...args] = nice ? ['nice', '-n', String(nice), ...node] : node;
    const child = spawn(command, args, {
      cwd: projectRoot,
      env: { ...process.env, ...env, ...extraEnv },
      stdio: ['ignore', out, out],
    });
    children.set(name, child);
    if (name === 'api') await waitForPort(apiPort, 60_000, child);
    if (name === 'simulator') await waitForPort(simPort, 60_000, child);
    return child;
  };
  const stopChild = async (name: string, signal: NodeJS.Signals = 'SIGTERM') => {
    const child = children.get(name);
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    await new Promise<void>((resolve) => {
      child.once('exit', () => resolve());
      child.kill(signal);
      setTimeout(() => child.kill('SIGKILL'), 10_000).unref();
    });
    children.delete(name);
  };

  const useSimulator = !process.env.SMS_GATEWAY_URL;
  if (useSimulator) await startChild('simulator');
  try {
    await bundled;
  } catch (err) {
    await stopChild('simulator');
    for (const c of cleanups.reverse()) await c().catch(() => {});
    throw err;
  }
  await startChild('worker');
  await startChild('api');

  return {
    env,
    apiUrl,
    simulatorUrl,
    temporalAddress,
    uiUrl: dev?.uiUrl ?? null,
    databaseUrl,
    children,
    startChild,
    stopChild,
    // In the order work flows: the API first (its requests in flight may wait on workflows), then
    // the worker (its activities finish against a live database and Temporal), then what they used,
    // together: nothing runs on the simulator, Temporal or PostgreSQL any more.
    stop: async () => {
      await stopChild('api');
      await stopChild('worker');
      await Promise.all([stopChild('simulator'), ...cleanups.map((c) => c().catch(() => {}))]);
    },
  };
}

/**
 * A stack of its own for one run of a script (the test runner, fuzzing, history recording, benches):
 * a new temporary data directory named `<prefix>-…`, an in-memory Temporal dev server, a free API
 * port and logs in the data directory.
 */
export async function privateRunStack(prefix: string, extraEnv: Record<string, string>): Promise<{ stack: Stack; dataDir: string }> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), `${prefix}-`));
  const stack = await startStack({ dataDir, persistentTemporal: false, logToFiles: true, extraEnv });
  return { stack, dataDir };
}
