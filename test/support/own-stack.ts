import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn, type ChildProcess } from 'node:child_process';
import { freePort, startEmbeddedPg, type EmbeddedPg } from '../../scripts/embedded-pg.js';
import { resolveTemporalCli, startDevServer, waitForPort, type DevServer } from '../../temporal/dev-server.js';
import { openOrm } from '../../entities/orm.js';
import { parseDatabaseUrl } from '../../config.js';
import { alive, descendants } from './launcher.js';

const root = path.resolve(import.meta.dirname, '../..');

/**
 * A PostgreSQL, a Temporal dev server and an API of this test's own (no worker, no simulator), for
 * tests that stop or freeze a dependency: the run's shared PostgreSQL and Temporal serve every other
 * test file at the same time, so only processes started here are ever signalled. `env` goes to the API.
 */
export async function ownStack(env: Record<string, string> = {}) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-own-'));
  const pgPort = await freePort();
  const pgDir = path.join(dir, 'pg');
  let pg: EmbeddedPg | null = null;
  let dev: DevServer | null = null;
  let api: ChildProcess | null = null;
  const frozen = new Set<number>();
  const signal = (pids: number[], sig: NodeJS.Signals) => {
    for (const pid of pids)
      try {
        process.kill(pid, sig);
      } catch {
        // gone already
      }
  };
  /** The postmaster (from its pid file, in this stack's own data directory) and its backends. */
  const pgProcesses = () => {
    const pid = Number(fs.readFileSync(path.join(pgDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
    return [pid, ...descendants(pid)];
  };
  const temporalProcesses = () => (dev?.process.pid ? [dev.process.pid, ...descendants(dev.process.pid)] : []);
  const freeze = (pids: number[]) => {
    for (const p of pids) frozen.add(p);
    signal(pids, 'SIGSTOP');
  };
  const thaw = (pids: number[]) => {
    signal(pids, 'SIGCONT');
    for (const p of pids) frozen.delete(p);
  };
  const stopApi = () =>
    new Promise<number | null>((resolve) => {
      const child = api;
      if (!child || child.exitCode !== null || child.signalCode !== null) return resolve(child?.exitCode ?? null);
      child.once('exit', (code) => resolve(code));
      child.kill('SIGTERM');
      setTimeout(() => child.kill('SIGKILL'), 30_000).unref();
    });
  const teardown = async () => {
    signal([...frozen], 'SIGCONT');
    await stopApi();
    await dev?.stop().catch(() => undefined);
    await pg?.stop().catch(() => undefined);
    fs.rmSync(dir, { recursive: true, force: true });
  };
  try {
    pg = await startEmbeddedPg(pgDir, pgPort);
    const databaseUrl = pg.url;
    const orm = await openOrm(databaseUrl, 2, { ...parseDatabaseUrl(databaseUrl, {}) });
    await orm.migrator.up();
    await orm.close();
    dev = await startDevServer({ cli: resolveTemporalCli(root), port: await freePort(), logFile: path.join(dir, 'temporal.log') });
    const port = await freePort();
    const log = fs.openSync(path.join(process.env.TEST_DATA_DIR ?? dir, `own-${port}-api.log`), 'a');
    api = spawn(process.execPath, ['--import', 'tsx', 'api/main.ts'], {
      cwd: root,
      env: {
        ...process.env,
        DATABASE_URL: databaseUrl,
        TEMPORAL_ADDRESS: dev.address,
        TEMPORAL_TASK_QUEUE: `own-${process.pid}-${port}`,
        PORT: String(port),
        PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
        LOG_LEVEL: 'warn',
        ...env,
      },
      stdio: ['ignore', log, log],
    });
    await waitForPort(port, 120_000, api);
    return {
      url: `http://127.0.0.1:${port}`,
      api,
      stopApi,
      freezePostgres: () => freeze(pgProcesses()),
      thawPostgres: () => thaw(pgProcesses()),
      freezeTemporal: () => freeze(temporalProcesses()),
      thawTemporal: () => thaw(temporalProcesses()),
      stopPostgres: async () => {
        const pids = pgProcesses();
        await pg!.stop();
        const deadline = Date.now() + 15_000;
        while (pids.some(alive) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      },
      startPostgres: async () => {
        pg = await startEmbeddedPg(pgDir, pgPort);
      },
      teardown,
    };
  } catch (err) {
    await teardown();
    throw err;
  }
}
