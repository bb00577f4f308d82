// The secrets the launchers hand to the service and to the simulator. The development defaults in
// config.ts are public, so `npm start` does not run on them: it makes random ones once per data
// directory and the simulator gets the same values, so its signatures still verify.
import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { PRODUCTION_SECRETS } from '../config.js';

export type ServiceSecrets = Record<(typeof PRODUCTION_SECRETS)[number]['variable'], string>;

export const SECRETS_FILE = 'secrets.json';

/**
 * The data directory's secrets (`secrets.json`, mode 0600), made on first use. A variable set in the
 * environment wins over the file, so a real provider's credentials can be given as usual.
 */
export function dataDirSecrets(dataDir: string, env: NodeJS.ProcessEnv = process.env): ServiceSecrets {
  const file = path.join(dataDir, SECRETS_FILE);
  let saved: Partial<ServiceSecrets> = {};
  if (fs.existsSync(file)) saved = JSON.parse(fs.readFileSync(file, 'utf8')) as Partial<ServiceSecrets>;
  let changed = false;
  const secrets = {} as ServiceSecrets;
  for (const { variable } of PRODUCTION_SECRETS) {
    if (!saved[variable]) {
      saved[variable] = randomBytes(24).toString('base64url');
      changed = true;
    }
    secrets[variable] = env[variable] || saved[variable];
  }
  if (changed) fs.writeFileSync(file, `${JSON.stringify(saved, null, 2)}\n`, { mode: 0o600 });
  // A file made before by hand or by an older launcher may be readable by others.
  fs.chmodSync(file, 0o600);
  return secrets;
}

/** The children's environment for these secrets: the service's variables and the simulator's matching ones. */
export function secretsEnv(s: ServiceSecrets): Record<string, string> {
  return {
    ...s,
    SIM_SMS_AUTH_TOKEN: s.SMS_GATEWAY_AUTH_TOKEN,
    SIM_WA_ACCESS_TOKEN: s.WHATSAPP_ACCESS_TOKEN,
    SIM_WA_APP_SECRET: s.WHATSAPP_APP_SECRET,
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
};
