import { test, mock } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { syncBuiltinESMExports } from 'node:module';
import { operatorTokenMatches } from '../../api/http/auth.js';
import { loadConfig, productionSecretProblems } from '../../config.js';

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
