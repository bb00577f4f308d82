// Point 2 of the hardening issue: no working default secrets in production, and the operator API
// (constant-time token check, throttled failures, its own address and its own OpenAPI document).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { freePort } from '../../scripts/embedded-pg.js';
import { waitForPort } from '../../temporal/dev-server.js';
import { http, newTenant, OPERATOR_TOKEN } from '../support/stack.js';

const STRONG = {
  OPERATOR_TOKEN: 'op-'.padEnd(40, 'x'),
  SMS_GATEWAY_AUTH_TOKEN: 'sms-'.padEnd(32, 'y'),
  WHATSAPP_ACCESS_TOKEN: 'wa-'.padEnd(64, 'z'),
  WHATSAPP_APP_SECRET: 'was-'.padEnd(32, 'w'),
  WHATSAPP_VERIFY_TOKEN: 'wav-'.padEnd(24, 'v'),
  DATA_CURSOR_SECRET: 'dcs-'.padEnd(40, 'c'),
  OAUTH_SECRET: 'oas-'.padEnd(40, 'o'),
  PAYMENT_CONSUMER_SECRET: 'pcs-'.padEnd(32, 'p'),
  PAYMENT_PASSKEY: 'ppk-'.padEnd(64, 'k'),
  PAYMENT_SECURITY_CREDENTIAL: 'psc-'.padEnd(64, 'e'),
  PAYMENT_CALLBACK_SECRET: 'pcb-'.padEnd(32, 'b'),
};

function run(entry: string, env: Record<string, string>): ChildProcess & { output: () => string } {
  const child = spawn(process.execPath, ['--import', 'tsx', entry], {
    env: { ...process.env, LOG_LEVEL: 'error', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (b) => (out += b));
  child.stderr!.on('data', (b) => (out += b));
  return Object.assign(child, { output: () => out });
}

const exited = (child: ChildProcess) =>
  new Promise<number | null>((resolve) =>
    child.exitCode !== null ? resolve(child.exitCode) : child.once('exit', (code) => resolve(code)),
  );

async function stop(child: ChildProcess) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  await exited(child);
}

test('with NODE_ENV=production the API and the worker refuse to start on default, missing or short secrets, in one line naming them', async () => {
  const env = {
    ...STRONG,
    NODE_ENV: 'production',
    PORT: String(await freePort()),
    OPERATOR_TOKEN: 'dev-operator-token',
    SMS_GATEWAY_AUTH_TOKEN: '',
    WHATSAPP_APP_SECRET: 'too-short',
    // The embedded server's password before each data directory had its own (issue 23, point 6).
    DATABASE_URL: 'postgres://svc:postgres@db.internal:5432/svc',
  };
  // Each names the secrets it uses (config.ts, PRODUCTION_SECRETS' roles): a worker is given no
  // operator token nor app secret (compose.yaml), so it does not check them.
  const named = {
    'api/main.ts': /set OPERATOR_TOKEN, SMS_GATEWAY_AUTH_TOKEN, WHATSAPP_APP_SECRET, DATABASE_URL to/,
    'worker/main.ts': /set SMS_GATEWAY_AUTH_TOKEN, DATABASE_URL to/,
  };
  for (const [entry, names] of Object.entries(named)) {
    const child = run(entry, env);
    assert.equal(await exited(child), 1, `${entry} exits with 1`);
    const lines = child.output().trim().split('\n');
    assert.equal(lines.length, 1, child.output());
    assert.match(lines[0], /NODE_ENV=production/);
    assert.match(lines[0], names);
    assert.doesNotMatch(lines[0], /WHATSAPP_ACCESS_TOKEN|WHATSAPP_VERIFY_TOKEN/, 'the real values are not named');
    assert.doesNotMatch(lines[0], /too-short|dev-operator-token|postgres|db\.internal/, 'values are never printed');
  }
});

test('with NODE_ENV=production and real secrets the API starts and takes its operator token', async () => {
  const port = await freePort();
  const child = run('api/main.ts', { ...STRONG, NODE_ENV: 'production', PORT: String(port) });
  try {
    await waitForPort(port, 120_000, child);
    const base = `http://127.0.0.1:${port}`;
    assert.equal((await http('GET', `${base}/admin/v1/accounts?per_page=1`, { token: STRONG.OPERATOR_TOKEN })).status, 200);
    assert.equal((await http('GET', `${base}/admin/v1/accounts?per_page=1`, { token: 'dev-operator-token' })).status, 401);
  } finally {
    await stop(child);
  }
});

test('OPERATOR_PORT: /admin/v1 and its document are served only there; the public port answers 404 for them', async () => {
  const [port, operatorPort] = [await freePort(), await freePort()];
  const child = run('api/main.ts', { PORT: String(port), OPERATOR_PORT: String(operatorPort), OPERATOR_HOST: '127.0.0.1' });
  try {
    await waitForPort(port, 120_000, child);
    await waitForPort(operatorPort, 120_000, child);
    const pub = `http://127.0.0.1:${port}`;
    const ops = `http://127.0.0.1:${operatorPort}`;
    const t = await newTenant();
    for (const path of ['/admin/v1/accounts', '/admin/v1/openapi.json', `/admin/v1/accounts/${t.accountId}/keys`]) {
      const r = await http('GET', `${pub}${path}`, { token: OPERATOR_TOKEN });
      assert.equal(r.status, 404, `public ${path}`);
      assert.equal(r.body.status, 'error');
    }
    assert.equal((await http('GET', `${ops}/admin/v1/accounts/${t.accountId}/keys`, { token: OPERATOR_TOKEN })).status, 200);
    const doc = await http('GET', `${ops}/admin/v1/openapi.json`);
    assert.equal(doc.status, 200);
    assert.ok(doc.body.paths['/admin/v1/accounts/{account}/keys'].post);
    assert.equal((await http('GET', `${ops}/api/v3/me`, { token: t.token })).status, 404, 'no customer API on the operator port');
    assert.equal((await http('GET', `${ops}/api-docs/openapi.json`)).status, 404);
    assert.equal((await http('GET', `${pub}/api/v3/me`, { token: t.token })).status, 200);
    const customerDoc = await http('GET', `${pub}/api-docs/openapi.json`);
    assert.deepEqual(
      Object.keys(customerDoc.body.paths).filter((p) => p.startsWith('/admin')),
      [],
    );
  } finally {
    await stop(child);
  }
});

test('failed operator attempts are throttled per client address: 429 with Retry-After, the right token still admitted, account keys unaffected', async () => {
  const port = await freePort();
  const child = run('api/main.ts', { PORT: String(port), OPERATOR_FAILURES_PER_MINUTE: '3' });
  try {
    await waitForPort(port, 120_000, child);
    const base = `http://127.0.0.1:${port}`;
    assert.equal((await http('GET', `${base}/admin/v1/accounts?per_page=1`, { token: OPERATOR_TOKEN })).status, 200);
    for (const token of ['guess-1', `${OPERATOR_TOKEN}x`, OPERATOR_TOKEN.slice(0, -1)]) {
      const r = await http('GET', `${base}/admin/v1/accounts`, { token });
      assert.equal(r.status, 401, token);
      assert.equal(r.headers.get('www-authenticate'), 'Bearer');
    }
    for (let i = 4; i < 40; i++) {
      const r = await http('GET', `${base}/admin/v1/accounts`, { token: `guess-${i}` });
      assert.equal(r.status, 429, `failure ${i}`);
      assert.equal(r.body.status, 'error');
      assert.ok(Number(r.headers.get('retry-after')) >= 1);
    }
    // The right token is checked whatever the throttle says: a neighbour's guessing never locks the operator out.
    assert.equal((await http('GET', `${base}/admin/v1/accounts?per_page=1`, { token: OPERATOR_TOKEN })).status, 200);
    const t = await newTenant();
    assert.equal((await http('GET', `${base}/api/v3/me`, { token: t.token })).status, 200, 'the account door has its own count');
  } finally {
    await stop(child);
  }
});
