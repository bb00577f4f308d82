// `npm start`: the whole service on one machine, data kept in .data/ across restarts.
import fs from 'node:fs';
import path from 'node:path';
import { startStack, projectRoot } from './stack.js';
import { openOrm } from '../entities/orm.js';
import { one } from '../entities/db.js';
import { createAccount, createApiKey, createUser } from '../services/account/accounts.js';
import { hashToken } from '../services/platform/secrets.js';
import { PERMISSIONS } from '../domain/account/permissions.js';
import { dataDirSecrets, secretsEnv, SECRETS_FILE } from './secrets.js';
import { createLogger } from '../logger.js';

const log = createLogger('launcher');
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
  extraEnv: { ...secretsEnv(secrets), ALLOW_LOOPBACK_DESTINATIONS: process.env.ALLOW_LOOPBACK_DESTINATIONS ?? 'true' },
  logToFiles: false,
});

// A dev account and key, made once and kept in .data/dev-key.json (the database only holds its hash).
async function devKey(): Promise<string> {
  const file = path.join(dataDir, 'dev-key.json');
  const orm = await openOrm(stack.databaseUrl, 2);
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

let stopping = false;
const shutdown = async () => {
  if (stopping) return;
  stopping = true;
  log.info('stopping');
  await stack.stop();
  process.exit(0);
};
process.on('SIGINT', shutdown);
process.on('SIGTERM', shutdown);
for (const [name, child] of stack.children) {
  child.on('exit', (code) => {
    if (!stopping) {
      log.error({ name, code }, 'child exited; stopping');
      void shutdown();
    }
  });
}
