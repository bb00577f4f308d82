import { test, mock } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { syncBuiltinESMExports } from 'node:module';
import { operatorTokenMatches } from '../../api/http/auth.js';
import { loadConfig, productionSecretProblems, refuseDefaultSecrets } from '../../config.js';

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
  DATABASE_URL: 'postgres://svc:a-real-database-password@db.internal:5432/svc?sslmode=disable',
};
const problems = (env: Record<string, string | undefined>) => {
  const saved = { ...process.env };
  for (const k of Object.keys(strong)) delete process.env[k];
  Object.assign(process.env, Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined)));
  try {
    return productionSecretProblems(loadConfig(), process.env);
  } finally {
    process.env = saved;
  }
};

test('production mode names every secret that is unset, a known default or too short; development mode names none', () => {
  assert.deepEqual(problems({ ...strong, NODE_ENV: 'production' }), []);
  assert.deepEqual(problems({ NODE_ENV: 'production' }), Object.keys(strong), 'unset: the defaults would apply');
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
