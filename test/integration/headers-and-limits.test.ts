// Point 9 of the hardening issue: WWW-Authenticate on 401, no-store on answers carrying secrets,
// nosniff everywhere, no double burst at a rate-limit window boundary, and failed authentication
// throttled per client address and per credential hint, never refusing a valid credential (issue 23).
import { test, mock } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { freePort } from '../../scripts/embedded-pg.js';
import { waitForPort } from '../../temporal/dev-server.js';
import { openOrm } from '../../entities/orm.js';
import { authenticate } from '../../api/http/auth.js';
import { WINDOW_MS } from '../../api/http/ratelimit.js';
import { admin, api, http, newTenant, API_URL } from '../support/stack.js';

test('every 401 says WWW-Authenticate: Bearer: REST, operator and MCP', async () => {
  const mcpInit = { jsonrpc: '2.0', id: 1, method: 'initialize', params: {} };
  const refusals = [
    await http('GET', '/api/v3/me'),
    await http('GET', '/api/v3/me', { token: 'x'.repeat(64) }),
    await http('POST', '/api/v3/sms/send', { token: 'nope', body: { recipient: '+255700000001', message: 'x' } }),
    await http('GET', '/admin/v1/accounts'),
    await http('GET', '/admin/v1/accounts', { token: 'wrong' }),
    await http('POST', '/mcp', { token: 'svc_mcp_nope', body: mcpInit, headers: { accept: 'application/json, text/event-stream' } }),
  ];
  for (const r of refusals) {
    assert.equal(r.status, 401, r.text);
    assert.match(r.headers.get('www-authenticate') ?? '', /^Bearer\b/);
  }
  // The MCP door answers as RFC 6750 says (the MCP authorization spec's bearer rules): realm, and why a token sent was refused.
  assert.equal(refusals[5].headers.get('www-authenticate')?.startsWith('Bearer realm="mcp", error="invalid_token"'), true);
});

test('answers that carry a secret are Cache-Control: no-store; the listings are not marked', async () => {
  const t = await newTenant();
  const secretAnswers = [
    await admin('POST', `/accounts/${t.accountId}/keys`, { name: 'k', user_id: t.userId }),
    await admin('POST', `/accounts/${t.accountId}/mcp-credentials`, { name: 'm', user_id: t.userId }),
    await admin('POST', `/accounts/${t.accountId}/webhook-endpoints`, { url: 'http://127.0.0.1:9/hook' }),
    await admin('POST', `/accounts/${t.accountId}/automation-subscriptions`, {
      event_type: 'order.*',
      target_url: 'http://127.0.0.1:9/sub',
    }),
  ];
  const endpoint = secretAnswers[2].body.data;
  secretAnswers.push(await admin('POST', `/accounts/${t.accountId}/webhook-endpoints/${endpoint.id}/rotate-secret`, { overlap_hours: 0 }));
  for (const r of secretAnswers) {
    assert.ok(r.status === 200 || r.status === 201, r.text);
    assert.ok(r.body.data.token || r.body.data.secret, 'the answer does carry a secret');
    assert.equal(r.headers.get('cache-control'), 'no-store');
  }
  assert.equal((await admin('GET', `/accounts/${t.accountId}/keys`)).headers.get('cache-control'), null);
});

test('X-Content-Type-Options: nosniff on every answer: JSON, errors, the docs, raw provider ingress, MCP', async () => {
  const t = await newTenant();
  const answers = [
    await api('GET', '/api/v3/me', t.token),
    await http('GET', '/no/such/path'),
    await http('GET', '/api/v3/me'),
    await http('GET', '/api-docs/openapi.json'),
    await http('GET', '/api-docs'),
    await http('POST', `${API_URL}/providers/sms/status?m=x`, {
      raw: 'MessageSid=SM1',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    }),
    await http('POST', '/mcp', { token: 'svc_mcp_nope', body: {} }),
  ];
  for (const r of answers) assert.equal(r.headers.get('x-content-type-options'), 'nosniff', `${r.status} ${r.text.slice(0, 80)}`);
  assert.ok(answers[5].status >= 400, 'the unsigned receipt was refused by the raw ingress');
});

// The policy of /api-docs (Scalar's page) is held by test/integration/api-docs-page.test.ts.

test('the rate limit SQL slides: a burst straddling a minute boundary gets no second budget', async () => {
  const t = await newTenant();
  const orm = await openOrm(process.env.DATABASE_URL!, 2);
  // The statement's occasional sweep of old windows would, from this far-future clock, drop the
  // suite's live windows: kept from firing in this process.
  const random = mock.method(Math, 'random', () => 0.5);
  try {
    const limit = 10;
    // A minute boundary far from the real clock, so the suite's own requests never share its windows.
    const boundary = Math.ceil((Date.now() + 3_600_000) / WINDOW_MS) * WINDOW_MS;
    let allowed = 0;
    const statuses: string[] = [];
    // 40 requests in the last second of one minute and the first second of the next.
    for (let i = 0; i < 40; i++) {
      const now = boundary - 1_000 + i * 50;
      const a = await authenticate(orm.em.fork(), `Bearer ${t.token}`, 'rest', limit, now);
      if (a.rate.allowed) allowed++;
      statuses.push(`${now - boundary}:${a.rate.allowed ? 'ok' : a.rate.retryAfter}`);
    }
    assert.ok(allowed >= limit && allowed <= limit + 1, `allowed ${allowed}: ${statuses.join(' ')}`);
    // A minute without requests later, the burst's weight has drained: the budget is back.
    const later = await authenticate(orm.em.fork(), `Bearer ${t.token}`, 'rest', limit, boundary + 2 * WINDOW_MS + 1_000);
    assert.equal(later.rate.allowed, true);
  } finally {
    random.mock.restore();
    await orm.close();
  }
});

/** An API process of its own (its own failure counts in memory), with these settings. */
async function privateApi(env: Record<string, string>) {
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', 'api/main.ts'], {
    env: { ...process.env, PORT: String(port), LOG_LEVEL: 'error', ...env },
    stdio: 'ignore',
  });
  try {
    await waitForPort(port, 120_000, child);
  } catch (err) {
    // Left running, the child would keep this file from ever ending.
    child.kill('SIGKILL');
    throw err;
  }
  return { base: `http://127.0.0.1:${port}`, stop: () => child.kill('SIGTERM') };
}

/** A well-formed REST key that exists nowhere; its hint (first and last four characters) is `head…tail`. */
const guess = (head = randomBytes(2).toString('hex'), tail = randomBytes(2).toString('hex')) =>
  `${head}${randomBytes(28).toString('hex')}${tail}`;

const mcpInitialize = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
};
const mcpHeaders = { accept: 'application/json, text/event-stream' };

test('failed authentication is throttled (429 with Retry-After), and a valid credential from the same address is never refused by it: REST and MCP', async () => {
  const api = await privateApi({ AUTH_FAILURES_PER_MINUTE: '3' });
  try {
    const t = await newTenant();
    const mcp = (await admin('POST', `/accounts/${t.accountId}/mcp-credentials`, { name: 'm', user_id: t.userId })).body.data.token;
    assert.equal((await http('GET', `${api.base}/api/v3/me`, { token: t.token })).status, 200);
    for (let i = 0; i < 35; i++) {
      const r = await http('GET', `${api.base}/api/v3/me`, { token: guess() });
      if (i < 3) {
        assert.equal(r.status, 401, `failure ${i + 1}`);
        continue;
      }
      assert.equal(r.status, 429, `failure ${i + 1}: ${r.text}`);
      assert.equal(r.body.status, 'error');
      assert.ok(Number(r.headers.get('retry-after')) >= 1);
    }
    const mcpGuess = await http('POST', `${api.base}/mcp`, { token: `svc_mcp_${guess()}`, body: mcpInitialize, headers: mcpHeaders });
    assert.equal(mcpGuess.status, 429, 'the MCP door shares the count');
    // The valid credentials of the same address are checked and admitted: REST (a read, a send) and MCP.
    assert.equal((await http('GET', `${api.base}/api/v3/me`, { token: t.token })).status, 200);
    const sent = await http('POST', `${api.base}/api/v3/sms/send`, { token: t.token, body: { recipient: '+255700000191', message: 'x' } });
    assert.equal(sent.status, 201, sent.text);
    assert.equal((await http('POST', `${api.base}/mcp`, { token: mcp, body: mcpInitialize, headers: mcpHeaders })).status, 200);
    assert.equal(
      (await http('GET', `${API_URL}/api/v3/me`, { token: t.token })).status,
      200,
      'counted per process: the main API is not affected',
    );
  } finally {
    api.stop();
  }
});

test('X-Forwarded-For is never read without TRUSTED_PROXY_HOPS: every client is the socket address', async () => {
  const api = await privateApi({ AUTH_FAILURES_PER_MINUTE: '3' });
  try {
    for (let i = 1; i <= 3; i++) {
      const r = await http('GET', `${api.base}/api/v3/me`, { token: guess(), headers: { 'x-forwarded-for': `10.0.0.${i}` } });
      assert.equal(r.status, 401);
    }
    const r = await http('GET', `${api.base}/api/v3/me`, { token: guess(), headers: { 'x-forwarded-for': '10.0.0.4' } });
    assert.equal(r.status, 429, 'a claimed address is not an address of its own');
  } finally {
    api.stop();
  }
});

test('behind TRUSTED_PROXY_HOPS=1 the address is the one the proxy recorded: a guesser is throttled by address and by key hint, neighbours are not', async () => {
  const api = await privateApi({ AUTH_FAILURES_PER_MINUTE: '3', TRUSTED_PROXY_HOPS: '1' });
  const me = (token: string, forwardedFor?: string) =>
    http('GET', `${api.base}/api/v3/me`, { token, headers: forwardedFor ? { 'x-forwarded-for': forwardedFor } : {} });
  try {
    const t = await newTenant();
    // The proxy appends the address it received from; what the client wrote before it is not taken.
    for (const spoof of ['198.51.100.1', '198.51.100.2', '198.51.100.3'])
      assert.equal((await me(guess(), `${spoof}, 10.0.0.1`)).status, 401);
    assert.equal((await me(guess(), '198.51.100.4, 10.0.0.1')).status, 429, 'the guesser at 10.0.0.1');
    assert.equal((await me(guess(), '10.0.0.1')).status, 429);
    assert.equal((await me(guess(), '10.0.0.2')).status, 401, 'a neighbour behind the same proxy is not throttled');
    assert.equal((await me(guess())).status, 401, 'without the header: the socket address, a client of its own');
    assert.equal((await me(t.token, '10.0.0.1')).status, 200, 'a valid key at the throttled address is admitted');

    // One key's hint aimed at from many addresses: throttled by the hint, other hints are not.
    for (let i = 1; i <= 3; i++) assert.equal((await me(guess('abcd', 'wxyz'), `10.0.1.${i}`)).status, 401);
    assert.equal((await me(guess('abcd', 'wxyz'), '10.0.1.4')).status, 429, 'the hint abcd…wxyz, from a fresh address');
    assert.equal((await me(guess('abce', 'wxyz'), '10.0.1.5')).status, 401, 'another hint from a fresh address');
  } finally {
    api.stop();
  }
});
