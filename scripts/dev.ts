// `npm start`: the whole service on one machine, data kept in .data/ across restarts.
//
// Two processes. The one npm starts only relays Ctrl-C; the stack runs in a child of its own process
// group (the supervisor), because a terminal's Ctrl-C signals every process of the foreground group
// at once: PostgreSQL and the Temporal dev server used to stop while the worker was still finishing
// activities ("the database system is shutting down"), and the worker then waited its whole grace
// time for a server that was gone (about 20 s in all). Now only the launcher hears Ctrl-C and stops
// the parts in order (scripts/stack.ts): API, worker, then the simulator, Temporal and PostgreSQL.
import fs from 'node:fs';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { startStack, projectRoot } from './stack.js';
import { openOrm } from '../entities/orm.js';
import { one } from '../entities/db.js';
import { createAccount, createApiKey, createUser } from '../services/account/accounts.js';
import { hashToken } from '../services/platform/secrets.js';
import { PERMISSIONS } from '../domain/account/permissions.js';
import { dataDirSecrets, secretsEnv, SECRETS_FILE } from './secrets.js';
import { createLogger } from '../logger.js';
import { parseDatabaseUrl } from '../config.js';

const log = createLogger('launcher');

if (process.env.SVC_LAUNCHER_ROLE !== 'supervisor') {
  const supervisor = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url)], {
    detached: true,
    env: { ...process.env, SVC_LAUNCHER_ROLE: 'supervisor' },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  let askedAt = 0;
  const relay = () => {
    // A second Ctrl-C is for someone who will not wait: everything of the stack is killed at once.
    // One press often arrives twice (from the terminal and relayed by tsx), hence the second's delay.
    if (askedAt === 0) {
      askedAt = Date.now();
      supervisor.kill('SIGTERM');
    } else if (Date.now() - askedAt > 1000) {
      log.warn('second interrupt: killing every process of the stack');
      try {
        process.kill(-supervisor.pid!, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  };
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, relay);
  supervisor.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
} else {
  await supervise();
}

async function supervise() {
  // Asked to stop while starting: the parts started so far are stopped once the stack is up, never
  // left running without a parent.
  let interrupted = false;
  const early = () => {
    interrupted = true;
  };
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, early);
  process.on('disconnect', early);
  const dataDir = process.env.SVC_DATA_DIR ?? path.join(projectRoot, '.data');
  const apiPort = Number(process.env.PORT ?? 8080);
  fs.mkdirSync(dataDir, { recursive: true });
  // Random secrets of this data directory (the public defaults of config.ts are never used), handed to
  // every child: the simulator signs receipts and inbound messages with the same values.
  const secrets = dataDirSecrets(dataDir);
  const operatorToken = secrets.OPERATOR_TOKEN;

  const stack = await startStack({
    dataDir,
    persistentTemporal: true,
    apiPort,
    uiPort: Number(process.env.TEMPORAL_UI_PORT ?? 8233),
    temporalPort: Number(process.env.TEMPORAL_PORT ?? 7233),
    simulatorPort: Number(process.env.SIM_PORT ?? 4010),
    // Webhooks to a receiver on this machine are part of trying the service out; deployments refuse them.
    extraEnv: {
      ...secretsEnv(secrets),
      ALLOW_LOOPBACK_DESTINATIONS: process.env.ALLOW_LOOPBACK_DESTINATIONS ?? 'true',
      // Nothing balances a developer's one API: Ctrl-C stops it without the drain a deployment waits out.
      API_DRAIN_SECONDS: process.env.API_DRAIN_SECONDS ?? '0',
    },
    logToFiles: false,
  });

  // A dev account and key, made once and kept in .data/dev-key.json (the database only holds its hash).
  async function devKey(): Promise<string> {
    const file = path.join(dataDir, 'dev-key.json');
    const orm = await openOrm(stack.databaseUrl, 2, { ...parseDatabaseUrl(stack.databaseUrl, process.env) });
    const em = orm.em.fork();
    try {
      if (fs.existsSync(file)) {
        const saved = JSON.parse(fs.readFileSync(file, 'utf8')) as { token: string };
        const live = await one(em, 'select id from api_keys where token_hash = ? and revoked_at is null', [hashToken(saved.token)]);
        if (live) return saved.token;
      }
      const account = await createAccount(em, { name: 'Dev account', wallet_balance: 100, currency: 'USD' });
      const user = await createUser(em, Number(account!.id), { email: 'dev@example.com', name: 'Dev user', permissions: [...PERMISSIONS] });
      const key = await createApiKey(em, Number(account!.id), { name: 'dev key', userId: Number(user!.id) });
      fs.writeFileSync(file, JSON.stringify({ token: key.token, account_id: account!.id }), { mode: 0o600 });
      return key.token;
    } finally {
      await orm.close();
    }
  }

  const token = await devKey();
  log.info('service ready');
  process.stdout.write(`
  API            ${stack.apiUrl}   (reference: ${stack.apiUrl}/api-docs)
  Temporal UI    ${stack.uiUrl ?? '(external Temporal at ' + stack.temporalAddress + ')'}
  Simulator      ${stack.simulatorUrl}/_sim/sms/messages
  Dev API key    ${token}
  Operator token ${operatorToken}
  Secrets        ${path.join(dataDir, SECRETS_FILE)} (mode 0600; the same values go to the simulator)
                 SMS_GATEWAY_AUTH_TOKEN=${secrets.SMS_GATEWAY_AUTH_TOKEN}
                 WHATSAPP_ACCESS_TOKEN=${secrets.WHATSAPP_ACCESS_TOKEN}
                 WHATSAPP_APP_SECRET=${secrets.WHATSAPP_APP_SECRET}
                 WHATSAPP_VERIFY_TOKEN=${secrets.WHATSAPP_VERIFY_TOKEN}
  Loopback hooks ${stack.env.ALLOW_LOOPBACK_DESTINATIONS === 'true' ? 'allowed (ALLOW_LOOPBACK_DESTINATIONS=true): webhooks may target 127.0.0.1' : 'refused'}

  try: curl -s -H "Authorization: Bearer ${token}" ${stack.apiUrl}/api/v3/me
  Ctrl-C stops everything.
`);

  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.off(signal, early);
  process.off('disconnect', early);
  let stopping = false;
  const shutdown = async () => {
    if (stopping) return;
    stopping = true;
    const t0 = Date.now();
    log.info('stopping');
    await stack.stop();
    log.info({ ms: Date.now() - t0 }, 'stopped');
    process.exit(0);
  };
  process.on('SIGINT', shutdown);
  process.on('SIGTERM', shutdown);
  // The relaying launcher gone (killed, its terminal closed): nothing would ever stop this stack.
  process.on('disconnect', () => void shutdown());
  if (interrupted || (process.send !== undefined && !process.connected)) void shutdown();
  for (const [name, child] of stack.children) {
    child.on('exit', (code) => {
      if (!stopping) {
        log.error({ name, code }, 'child exited; stopping');
        void shutdown();
      }
    });
  }
}
