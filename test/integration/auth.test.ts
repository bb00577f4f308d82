import { test } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { api, admin, http, newTenant, eventually } from '../support/stack.js';

test('a valid key reads /me, /balance and /_auth of its own account', async () => {
  const t = await newTenant();
  const me = await api('GET', '/api/v3/me', t.token);
  assert.equal(me.status, 200);
  assert.equal(me.body.status, 'success');
  assert.equal(me.body.data.id, t.accountId);
  assert.equal(typeof me.body.data.name, 'string');
  const bal = await api('GET', '/api/v3/balance', t.token);
  assert.equal(bal.status, 200);
  assert.deepEqual(
    { balance: bal.body.data.balance, currency: bal.body.data.currency, billing_mode: bal.body.data.billing_mode },
    { balance: 100, currency: 'USD', billing_mode: 'prepaid' },
  );
  const auth = await api('GET', '/api/v3/_auth', t.token);
  assert.equal(auth.status, 200);
  assert.equal(auth.body.data.account_id, t.accountId);
});

test('missing, malformed, unknown and query-string credentials are 401 in the v3 envelope', async () => {
  const t = await newTenant();
  for (const headers of [
    {} as Record<string, string>,
    { authorization: 'Basic abc' },
    { authorization: `Bearer ${'x'.repeat(64)}` },
    { authorization: 'Bearer' },
  ]) {
    const r = await http('GET', '/api/v3/me', { headers });
    assert.equal(r.status, 401, JSON.stringify(headers));
    assert.equal(r.body.status, 'error');
    assert.equal(typeof r.body.message, 'string');
  }
  for (const q of [`api_token=${t.token}`, `api_key=${t.token}`, `token=${t.token}`]) {
    const r = await http('GET', `/api/v3/me?${q}`);
    assert.equal(r.status, 401);
  }
});

test('a revoked key is refused with the contract message, and revocation is permanent', async () => {
  const t = await newTenant();
  const keys = await admin('GET', `/accounts/${t.accountId}/keys`);
  const key = keys.body.data.find((k: any) => k.user_id === t.userId);
  assert.equal((await api('GET', '/api/v3/me', t.token)).status, 200);
  assert.equal((await admin('DELETE', `/accounts/${t.accountId}/keys/${key.id}`)).status, 200);
  const r = await api('GET', '/api/v3/me', t.token);
  assert.equal(r.status, 401);
  assert.equal(r.body.message, 'API token has been revoked.');
  assert.ok(!('token' in keys.body.data[0]), 'listing never shows a secret');
});

test('an expired key is 401; an MCP credential is refused on REST', async () => {
  const t = await newTenant();
  const expired = await admin('POST', `/accounts/${t.accountId}/keys`, {
    name: 'old',
    user_id: t.userId,
    expires_at: new Date(Date.now() - 1000).toISOString(),
  });
  assert.equal(expired.body.data.token.length, 64);
  assert.equal((await api('GET', '/api/v3/me', expired.body.data.token)).status, 401);
  const mcp = await admin('POST', `/accounts/${t.accountId}/mcp-credentials`, { name: 'assistant', user_id: t.userId });
  assert.match(mcp.body.data.token, /^svc_mcp_[A-Za-z0-9]{64}$/);
  assert.equal((await api('GET', '/api/v3/me', mcp.body.data.token)).status, 401);
});

test('a suspended account is 403; reactivated it works again', async () => {
  const t = await newTenant();
  await admin('PATCH', `/accounts/${t.accountId}`, { status: 'suspended' });
  const r = await api('GET', '/api/v3/me', t.token);
  assert.equal(r.status, 403);
  assert.equal(r.body.status, 'error');
  await admin('PATCH', `/accounts/${t.accountId}`, { status: 'active' });
  assert.equal((await api('GET', '/api/v3/me', t.token)).status, 200);
});

test('a key with no issuer works on the original endpoints', async () => {
  const t = await newTenant();
  assert.equal((await api('GET', '/api/v3/me', t.legacyToken)).status, 200);
  assert.equal((await api('GET', '/api/v3/balance', t.legacyToken)).status, 200);
  const send = await api('POST', '/api/v3/sms/send', t.legacyToken, { recipient: '+255700000101', message: 'hi' });
  assert.equal(send.status, 201);
});

test('the tenant comes from the key: tenant_id and account ids in a request change nothing', async () => {
  const a = await newTenant();
  const b = await newTenant();
  const sent = await api('POST', '/api/v3/sms/send', a.token, {
    recipient: '+255700000102',
    message: 'mine',
    tenant_id: b.accountId,
    account_id: b.accountId,
  });
  assert.equal(sent.status, 201);
  const uid = sent.body.data.messages[0].uid;
  assert.equal((await api('GET', `/api/v3/sms/${uid}`, a.token)).status, 200);
  const foreign = await api('GET', `/api/v3/sms/${uid}`, b.token);
  assert.equal(foreign.status, 404);
  assert.equal(foreign.body.status, 'error');
  const me = await http('GET', `/api/v3/me?tenant_id=${b.accountId}`, { token: a.token });
  assert.equal(me.body.data.id, a.accountId);
});

/** Waits, when needed, so the next few seconds stay inside one rate-limit minute. */
async function freshMinute(needMs = 15_000) {
  const intoMinute = Date.now() % 60_000;
  if (intoMinute > 60_000 - needMs) await new Promise((r) => setTimeout(r, 60_000 - intoMinute + 100));
}

test("a refused credential counts against nobody's rate-limit window (401s and the 403 of a suspended account)", async () => {
  const t = await newTenant();
  const revoked = (await admin('POST', `/accounts/${t.accountId}/keys`, { name: 'to revoke', user_id: t.userId })).body.data;
  const expired = (
    await admin('POST', `/accounts/${t.accountId}/keys`, {
      name: 'old',
      user_id: t.userId,
      expires_at: new Date(Date.now() - 1000).toISOString(),
    })
  ).body.data;
  const mcp = (await admin('POST', `/accounts/${t.accountId}/mcp-credentials`, { name: 'assistant', user_id: t.userId })).body.data;
  await freshMinute();
  // The key's own window: 1 counted request, refusals while suspended, then 1 more.
  const first = await api('GET', '/api/v3/me', t.token);
  assert.equal(first.headers.get('x-ratelimit-remaining'), '119');
  await admin('PATCH', `/accounts/${t.accountId}`, { status: 'suspended' });
  for (let i = 0; i < 3; i++) assert.equal((await api('GET', '/api/v3/me', t.token)).status, 403);
  await admin('PATCH', `/accounts/${t.accountId}`, { status: 'active' });
  const after = await api('GET', '/api/v3/me', t.token);
  assert.equal(after.status, 200);
  assert.equal(after.headers.get('x-ratelimit-remaining'), '118', 'the 403s were not counted');

  // Refused keys: no window is opened for them at all.
  assert.equal((await admin('DELETE', `/accounts/${t.accountId}/keys/${revoked.id}`)).status, 200);
  for (const token of [revoked.token, expired.token, mcp.token]) {
    for (let i = 0; i < 3; i++)
      assert.equal((await api('POST', '/api/v3/sms/send', token, { recipient: '+255700000103', message: 'x' })).status, 401);
  }
  const ownId = (await admin('GET', `/accounts/${t.accountId}/keys`)).body.data.find((k: any) => k.name === 'test key').id;
  const db = new pg.Client({ connectionString: process.env.DATABASE_URL });
  await db.connect();
  try {
    const windows = await db.query('select bucket, count from rate_limit_windows where bucket = any($1)', [
      [revoked.id, expired.id, mcp.id].map((id) => `key:${id}`),
    ]);
    assert.deepEqual(windows.rows, []);
    const own = await db.query('select count from rate_limit_windows where bucket = $1 order by window_start desc limit 1', [
      `key:${ownId}`,
    ]);
    assert.equal(own.rows[0]?.count, 2);
  } finally {
    await db.end();
  }
});

test('last_used_at is set on first use and written at most once a minute', async () => {
  const t = await newTenant();
  const keyRow = async () => (await admin('GET', `/accounts/${t.accountId}/keys`)).body.data.find((k: any) => k.name === 'test key');
  assert.equal((await keyRow()).last_used_at, null);
  assert.equal((await api('GET', '/api/v3/me', t.token)).status, 200);
  const used = await eventually(keyRow, (k) => k.last_used_at !== null);
  assert.notEqual(used.last_used_at, null);
  for (let i = 0; i < 3; i++) assert.equal((await api('GET', '/api/v3/me', t.token)).status, 200);
  await new Promise((r) => setTimeout(r, 300));
  assert.equal((await keyRow()).last_used_at, used.last_used_at, 'not rewritten within the minute');
});

test('a deactivated default SMS channel is not used by the very next send', async () => {
  // The default channel is read by the authentication statement of each request: no cache.
  const t = await newTenant();
  const ch = await admin('POST', `/accounts/${t.accountId}/channels`, {
    channel_type: 'sms',
    code: `own-${t.accountId}`,
    is_default: true,
  });
  const own = await api('POST', '/api/v3/sms/send', t.token, { recipient: '+255700000104', message: 'x' });
  assert.equal(own.body.data.messages[0].channel_code, `own-${t.accountId}`);
  assert.equal((await admin('PATCH', `/accounts/${t.accountId}/channels/${ch.body.data.id}`, { active: false })).status, 200);
  const next = await api('POST', '/api/v3/sms/send', t.token, { recipient: '+255700000105', message: 'x' });
  assert.equal(next.status, 201);
  assert.equal(next.body.data.messages[0].channel_code, 'system-sms');
});
