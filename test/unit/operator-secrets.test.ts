import { test, mock } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { syncBuiltinESMExports } from 'node:module';
import { operatorTokenMatches } from '../../api/http/auth.js';
import {
  isPlaceholderSecret,
  loadConfig,
  PRODUCTION_SECRETS,
  productionSecretProblems,
  refuseDefaultSecrets,
  type SecretRole,
} from '../../config.js';

const TOKEN = 'a-real-operator-token-of-forty-characters';

test('the operator token is compared with timingSafeEqual on equal-length digests, whatever the length presented', () => {
  const spy = mock.method(crypto, 'timingSafeEqual');
  syncBuiltinESMExports();
  try {
    const cases: Array<[string | undefined, boolean]> = [
      [`Bearer ${TOKEN}`, true],
      [`bearer ${TOKEN}`, true],
      [`Bearer ${TOKEN.slice(0, -1)}`, false],
      [`Bearer ${TOKEN}x`, false],
      [`Bearer ${'z'.repeat(TOKEN.length)}`, false],
      ['Bearer x', false],
      [TOKEN, false],
      ['', false],
      [undefined, false],
    ];
    for (const [header, expected] of cases) assert.equal(operatorTokenMatches(header, TOKEN), expected, String(header));
    assert.equal(spy.mock.callCount(), cases.length, 'every attempt goes through timingSafeEqual, refusals included');
    for (const call of spy.mock.calls) {
      const [a, b] = call.arguments as [Buffer, Buffer];
      assert.equal(a.length, 32);
      assert.equal(b.length, 32);
    }
    assert.equal(operatorTokenMatches('Bearer ', ''), false, 'an empty configured token never matches');
  } finally {
    spy.mock.restore();
    syncBuiltinESMExports();
  }
});

const strong = {
  OPERATOR_TOKEN: 'o'.repeat(32),
  SMS_GATEWAY_AUTH_TOKEN: 's'.repeat(32),
  WHATSAPP_ACCESS_TOKEN: 'a'.repeat(64),
  WHATSAPP_APP_SECRET: 'w'.repeat(32),
  WHATSAPP_VERIFY_TOKEN: 'v'.repeat(16),
  DATA_CURSOR_SECRET: 'c'.repeat(32),
  OAUTH_SECRET: 'h'.repeat(32),
  PAYMENT_CONSUMER_SECRET: 'p'.repeat(16),
  PAYMENT_PASSKEY: 'k'.repeat(64),
  PAYMENT_SECURITY_CREDENTIAL: 'e'.repeat(344),
  PAYMENT_CALLBACK_SECRET: 'b'.repeat(32),
  PAYMENT_PROVIDER_URL: 'https://api.safaricom.co.ke',
  DATABASE_URL: 'postgres://svc:a-real-database-password@db.internal:5432/svc?sslmode=disable',
};
/** The payment secrets a worker uses (it requests, queries and reverses payments). */
const PAYMENT_WORKER = ['PAYMENT_CONSUMER_SECRET', 'PAYMENT_PASSKEY', 'PAYMENT_SECURITY_CREDENTIAL'];
const problems = (env: Record<string, string | undefined>, role: SecretRole = 'api') => {
  const saved = { ...process.env };
  for (const k of Object.keys(strong)) delete process.env[k];
  Object.assign(process.env, Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined)));
  try {
    return productionSecretProblems(loadConfig(), process.env, role);
  } finally {
    process.env = saved;
  }
};

test('production mode names every secret that is unset, a known default or too short; development mode names none', () => {
  assert.deepEqual(problems({ ...strong, NODE_ENV: 'production' }), []);
  const unset = 'unset: the defaults would apply';
  // With a payment provider named, its secrets are demanded too (a deployment without one: below).
  const named = { NODE_ENV: 'production', PAYMENT_PROVIDER_URL: strong.PAYMENT_PROVIDER_URL };
  assert.deepEqual(
    problems(named),
    Object.keys(strong).filter((k) => k !== 'WHATSAPP_ACCESS_TOKEN' && k !== 'PAYMENT_PROVIDER_URL' && !PAYMENT_WORKER.includes(k)),
    unset,
  );
  assert.deepEqual(
    problems(named, 'worker'),
    ['SMS_GATEWAY_AUTH_TOKEN', 'WHATSAPP_ACCESS_TOKEN', ...PAYMENT_WORKER, 'DATABASE_URL'],
    unset,
  );
  // Daraja's sandbox passkey is in every tutorial: a worker refuses it like our own defaults.
  assert.deepEqual(
    problems(
      { ...strong, NODE_ENV: 'production', PAYMENT_PASSKEY: 'bfb279f9aa9bdbcf158e97dd71a467cd2e0c893059b10f78e6b72ada1ed2c919' },
      'worker',
    ),
    ['PAYMENT_PASSKEY'],
  );
  assert.deepEqual(problems({ ...strong, NODE_ENV: 'production', PAYMENT_CALLBACK_SECRET: 'sim-payment-callback-secret' }), [
    'PAYMENT_CALLBACK_SECRET',
  ]);
  assert.deepEqual(
    problems({
      ...strong,
      NODE_ENV: 'production',
      OPERATOR_TOKEN: 'dev-operator-token',
      SMS_GATEWAY_AUTH_TOKEN: 'sim-sms-auth-token',
      WHATSAPP_APP_SECRET: 'short',
      WHATSAPP_VERIFY_TOKEN: 'sim-wa-verify-token',
    }),
    ['OPERATOR_TOKEN', 'SMS_GATEWAY_AUTH_TOKEN', 'WHATSAPP_APP_SECRET', 'WHATSAPP_VERIFY_TOKEN'],
  );
  assert.deepEqual(problems({ ...strong, NODE_ENV: 'production', OPERATOR_TOKEN: 'x'.repeat(31) }), ['OPERATOR_TOKEN']);
  assert.deepEqual(problems({ NODE_ENV: 'development' }), []);
  assert.deepEqual(problems({}), []);
});

test('production mode refuses a DATABASE_URL whose password is well known, naming the variable and never the value', () => {
  const prod = { ...strong, NODE_ENV: 'production' };
  const url = (password: string, rest = '') => `postgres://svc:${password}@db.internal:5432/svc${rest}`;
  for (const password of ['postgres', 'Postgres', 'password', '', 'change-me-database-password', 'svc', 'admin'])
    assert.deepEqual(problems({ ...prod, DATABASE_URL: url(password) }), ['DATABASE_URL'], JSON.stringify(password));
  // The embedded server's password before each data directory had its own, and the development default.
  assert.deepEqual(problems({ ...prod, DATABASE_URL: 'postgres://postgres:postgres@127.0.0.1:5433/svc' }), ['DATABASE_URL']);
  assert.deepEqual(problems({ ...prod, DATABASE_URL: undefined }), ['DATABASE_URL'], 'unset: the development default would apply');
  assert.deepEqual(
    problems({ ...prod, DATABASE_URL: url('', '?password=postgres') }),
    ['DATABASE_URL'],
    'the password parameter counts too',
  );
  // A real password passes; so does an empty one beside a client certificate, which then authenticates.
  assert.deepEqual(problems({ ...prod, DATABASE_URL: url('k3%2Fq9-Zx1m') }), []);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'client-cert-'));
  for (const f of ['c.pem', 'k.pem']) fs.writeFileSync(path.join(dir, f), 'pem');
  const cert = `?sslmode=require&sslcert=${dir}/c.pem&sslkey=${dir}/k.pem`;
  assert.deepEqual(problems({ ...prod, DATABASE_URL: url('', cert) }), []);
  fs.rmSync(dir, { recursive: true });
  assert.deepEqual(problems({ NODE_ENV: 'development', DATABASE_URL: url('postgres') }), [], 'development mode names none');

  // The refusal is one line naming DATABASE_URL; the URL and its password never appear in it.
  const exit = mock.method(process, 'exit', () => undefined as never);
  const write = mock.method(process.stderr, 'write', () => true);
  const saved = { ...process.env };
  try {
    Object.assign(process.env, prod, { DATABASE_URL: url('postgres') });
    refuseDefaultSecrets(loadConfig(), process.env);
    assert.equal(exit.mock.calls[0]?.arguments[0], 1);
    const line = String(write.mock.calls[0]?.arguments[0]);
    assert.match(line, /set DATABASE_URL to real secrets/);
    assert.doesNotMatch(line, /postgres:|db\.internal/);
  } finally {
    process.env = saved;
    exit.mock.restore();
    write.mock.restore();
  }
});

/** deploy/example.env as `docker compose` reads it: KEY=value lines, comments and blanks skipped. */
const exampleEnv = (): Record<string, string> =>
  Object.fromEntries(
    fs
      .readFileSync(new URL('../../deploy/example.env', import.meta.url), 'utf8')
      .split('\n')
      .filter((line) => /^[A-Z_]+=/.test(line))
      .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
  );

test('production mode refuses every example secret of deploy/example.env, each on its own, in the roles that use it', () => {
  const example = exampleEnv();
  const prod = { ...strong, NODE_ENV: 'production' };
  const secretNames = Object.keys(example).filter((k) => /TOKEN|SECRET|PASSWORD|PASSKEY|CREDENTIAL/.test(k));
  // Every secret the example documents is either read by the processes (refused below) or is the
  // Temporal database's, left empty so compose's `${TEMPORAL_DB_PASSWORD:?…}` refuses to start.
  assert.deepEqual(secretNames.sort(), [...PRODUCTION_SECRETS.map((s) => s.variable), 'SVC_DB_PASSWORD', 'TEMPORAL_DB_PASSWORD'].sort());
  assert.equal(example.TEMPORAL_DB_PASSWORD, '');
  for (const s of PRODUCTION_SECRETS) {
    const value = example[s.variable]!;
    assert.ok(value.length >= s.minLength, `${s.variable}'s example is long enough: length alone would let it through`);
    assert.ok(isPlaceholderSecret(value), s.variable);
    for (const role of ['api', 'worker'] as const) {
      const named = (s.roles as readonly string[]).includes(role) ? [s.variable] : [];
      assert.deepEqual(problems({ ...prod, [s.variable]: value }, role), named, `${role}: ${s.variable}=${value}`);
    }
  }
  // compose.yaml builds DATABASE_URL from SVC_DB_PASSWORD.
  const url = `postgres://svc:${example.SVC_DB_PASSWORD}@postgres:5432/svc?sslmode=disable`;
  assert.deepEqual(problems({ ...prod, DATABASE_URL: url }), ['DATABASE_URL']);
  assert.deepEqual(problems({ ...prod, DATABASE_URL: url.replace('change-me-database-password', 'change-me-db-pass') }), ['DATABASE_URL']);
  // The whole example file at once: every secret the role uses is named.
  const all = { ...example, NODE_ENV: 'production', DATABASE_URL: url };
  assert.deepEqual(problems(all, 'api'), [
    'OPERATOR_TOKEN',
    'SMS_GATEWAY_AUTH_TOKEN',
    'WHATSAPP_APP_SECRET',
    'WHATSAPP_VERIFY_TOKEN',
    'DATA_CURSOR_SECRET',
    'OAUTH_SECRET',
    'PAYMENT_CALLBACK_SECRET',
    'DATABASE_URL',
  ]);
  assert.deepEqual(problems(all, 'worker'), ['SMS_GATEWAY_AUTH_TOKEN', 'WHATSAPP_ACCESS_TOKEN', ...PAYMENT_WORKER, 'DATABASE_URL']);
});

test('a deployment that names no payment provider is not asked for payment secrets', () => {
  const withoutPayments = Object.fromEntries(Object.entries(strong).filter(([k]) => !k.startsWith('PAYMENT_')));
  assert.deepEqual(problems({ ...withoutPayments, NODE_ENV: 'production' }, 'api'), []);
  assert.deepEqual(problems({ ...withoutPayments, NODE_ENV: 'production' }, 'worker'), []);
  // Named, its secrets are demanded as every other provider's are.
  assert.deepEqual(
    problems({ ...withoutPayments, NODE_ENV: 'production', PAYMENT_PROVIDER_URL: 'https://api.safaricom.co.ke' }, 'worker'),
    PAYMENT_WORKER,
  );
});

test('other spellings of a placeholder are refused; real-looking secrets pass', () => {
  const prod = { ...strong, NODE_ENV: 'production' };
  for (const value of [
    'changeme-changeme-changeme-changeme',
    'CHANGE_ME_0123456789abcdefghijklmnop',
    'replace-me-with-a-real-operator-token',
    'your-operator-token-goes-here-please-1',
    '<operator-token-of-32-characters-or-more>',
    'an-example-operator-token-0123456789abc',
    'placeholder-placeholder-placeholder-1',
  ])
    assert.deepEqual(problems({ ...prod, OPERATOR_TOKEN: value }), ['OPERATOR_TOKEN'], value);
  const real = {
    OPERATOR_TOKEN: crypto.randomBytes(24).toString('base64url'),
    SMS_GATEWAY_AUTH_TOKEN: crypto.randomBytes(16).toString('hex'),
    WHATSAPP_ACCESS_TOKEN: `EAAG${crypto.randomBytes(60).toString('base64url')}`,
    WHATSAPP_APP_SECRET: crypto.randomBytes(16).toString('hex'),
    WHATSAPP_VERIFY_TOKEN: 'k9Qz-4vTn-w2Lp-8sRb',
    DATA_CURSOR_SECRET: crypto.randomBytes(32).toString('base64'),
    OAUTH_SECRET: crypto.randomBytes(32).toString('base64url'),
    PAYMENT_CONSUMER_SECRET: crypto.randomBytes(12).toString('base64url'),
    PAYMENT_PASSKEY: crypto.randomBytes(32).toString('hex'),
    PAYMENT_SECURITY_CREDENTIAL: crypto.randomBytes(256).toString('base64'),
    PAYMENT_CALLBACK_SECRET: crypto.randomBytes(24).toString('base64url'),
    DATABASE_URL: `postgres://svc:${encodeURIComponent(crypto.randomBytes(18).toString('base64'))}@postgres:5432/svc`,
  };
  assert.deepEqual(problems({ ...real, NODE_ENV: 'production' }), []);
  assert.deepEqual(problems({ ...real, NODE_ENV: 'production' }, 'worker'), []);
  for (const s of PRODUCTION_SECRETS) assert.equal(isPlaceholderSecret(real[s.variable]), false, s.variable);
});

test('each process checks only the secrets it uses: a worker is given no operator token, app secret, verify token, cursor or OAuth secret, an API no access token', () => {
  const worker = {
    NODE_ENV: 'production',
    SMS_GATEWAY_AUTH_TOKEN: strong.SMS_GATEWAY_AUTH_TOKEN,
    WHATSAPP_ACCESS_TOKEN: strong.WHATSAPP_ACCESS_TOKEN,
    PAYMENT_CONSUMER_SECRET: strong.PAYMENT_CONSUMER_SECRET,
    PAYMENT_PASSKEY: strong.PAYMENT_PASSKEY,
    PAYMENT_SECURITY_CREDENTIAL: strong.PAYMENT_SECURITY_CREDENTIAL,
    PAYMENT_PROVIDER_URL: strong.PAYMENT_PROVIDER_URL,
    DATABASE_URL: strong.DATABASE_URL,
  };
  assert.deepEqual(problems(worker, 'worker'), []);
  assert.deepEqual(problems(worker, 'api'), [
    'OPERATOR_TOKEN',
    'WHATSAPP_APP_SECRET',
    'WHATSAPP_VERIFY_TOKEN',
    'DATA_CURSOR_SECRET',
    'OAUTH_SECRET',
    'PAYMENT_CALLBACK_SECRET',
  ]);
  assert.deepEqual(problems({ ...worker, SMS_GATEWAY_AUTH_TOKEN: 'sim-sms-auth-token' }, 'worker'), ['SMS_GATEWAY_AUTH_TOKEN']);
  const { WHATSAPP_ACCESS_TOKEN: _unused, ...api } = { ...strong, NODE_ENV: 'production' };
  assert.deepEqual(problems(api, 'api'), []);
  assert.deepEqual(problems(api, 'worker'), ['WHATSAPP_ACCESS_TOKEN']);
});
