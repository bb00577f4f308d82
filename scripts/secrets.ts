// The secrets the launchers hand to the service and to the simulator. The development defaults in
// config.ts are public, so `npm start` does not run on them: it makes random ones once per data
// directory and the simulator gets the same values, so its signatures still verify.
import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { PRODUCTION_SECRETS } from '../config.js';

export type ServiceSecrets = Record<(typeof PRODUCTION_SECRETS)[number]['variable'], string>;

export const SECRETS_FILE = 'secrets.json';

type SavedSecrets = Record<string, string | undefined>;

const readSaved = (file: string): SavedSecrets => (fs.existsSync(file) ? (JSON.parse(fs.readFileSync(file, 'utf8')) as SavedSecrets) : {});

function writeSaved(file: string, saved: SavedSecrets, changed: boolean): void {
  if (changed) fs.writeFileSync(file, `${JSON.stringify(saved, null, 2)}\n`, { mode: 0o600 });
  // A file made before by hand or by an older launcher may be readable by others.
  if (fs.existsSync(file)) fs.chmodSync(file, 0o600);
}

const randomSecret = () => randomBytes(24).toString('base64url');

/**
 * The data directory's secrets (`secrets.json`, mode 0600), made on first use. A variable set in the
 * environment wins over the file, so a real provider's credentials can be given as usual.
 */
export function dataDirSecrets(dataDir: string, env: NodeJS.ProcessEnv = process.env): ServiceSecrets {
  const file = path.join(dataDir, SECRETS_FILE);
  const saved = readSaved(file);
  let changed = false;
  const secrets = {} as ServiceSecrets;
  for (const { variable } of PRODUCTION_SECRETS) {
    if (!saved[variable]) {
      saved[variable] = randomSecret();
      changed = true;
    }
    secrets[variable] = env[variable] || saved[variable];
  }
  writeSaved(file, saved, changed);
  return secrets;
}

/** The key of the embedded PostgreSQL's password in `secrets.json`. */
export const EMBEDDED_PG_PASSWORD = 'EMBEDDED_PG_PASSWORD';

/**
 * The password of the embedded PostgreSQL whose cluster lives in `dir` (`<dir>/pg` for the
 * launchers), kept in `<dir>/secrets.json` beside the service's secrets and made on first use:
 * every data directory has its own, and none is a default anyone could try.
 */
export function embeddedPgPassword(dir: string): string {
  const file = path.join(dir, SECRETS_FILE);
  const saved = readSaved(file);
  const made = !saved[EMBEDDED_PG_PASSWORD];
  if (made) saved[EMBEDDED_PG_PASSWORD] = randomSecret();
  writeSaved(file, saved, made);
  return saved[EMBEDDED_PG_PASSWORD]!;
}

/** The children's environment for these secrets: the service's variables and the simulator's matching ones. */
export function secretsEnv(s: ServiceSecrets): Record<string, string> {
  return {
    ...s,
    SIM_SMS_AUTH_TOKEN: s.SMS_GATEWAY_AUTH_TOKEN,
    SIM_WA_ACCESS_TOKEN: s.WHATSAPP_ACCESS_TOKEN,
    SIM_WA_APP_SECRET: s.WHATSAPP_APP_SECRET,
    SIM_PAYMENT_CONSUMER_SECRET: s.PAYMENT_CONSUMER_SECRET,
    SIM_PAYMENT_PASSKEY: s.PAYMENT_PASSKEY,
    SIM_PAYMENT_SECURITY_CREDENTIAL: s.PAYMENT_SECURITY_CREDENTIAL,
    SIM_PAYMENT_CALLBACK_SECRET: s.PAYMENT_CALLBACK_SECRET,
  };
}

/** Fixed values for the test stack: not the public defaults, long enough for production mode. */
export const TEST_SECRETS: ServiceSecrets = {
  OPERATOR_TOKEN: 'test-operator-token-0123456789abcdef',
  SMS_GATEWAY_AUTH_TOKEN: 'test-sms-auth-token-0123456789',
  WHATSAPP_ACCESS_TOKEN: 'test-wa-access-token-0123456789',
  WHATSAPP_APP_SECRET: 'test-wa-app-secret-0123456789',
  WHATSAPP_VERIFY_TOKEN: 'test-wa-verify-token-0123456789',
  DATA_CURSOR_SECRET: 'test-data-cursor-secret-0123456789abcdef',
  OAUTH_SECRET: 'test-oauth-secret-0123456789abcdef0123456789',
  PAYMENT_CONSUMER_SECRET: 'test-payment-consumer-secret-0123456789',
  PAYMENT_PASSKEY: 'test-payment-passkey-0123456789',
  PAYMENT_SECURITY_CREDENTIAL: 'test-payment-security-credential-0123456789',
  PAYMENT_CALLBACK_SECRET: 'test-payment-callback-secret-0123456789',
};
