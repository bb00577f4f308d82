import { test } from 'node:test';
import assert from 'node:assert/strict';
import { api, admin, http, newTenant } from '../support/stack.js';

test('a valid key reads /me, /balance and /_auth of its own account', async () => {
  const t = await newTenant();
  const me = await api('GET', '/api/v3/me', t.token);
  assert.equal(me.status, 200);
  assert.equal(me.body.status, 'success');
  assert.equal(me.body.data.id, t.accountId);
  assert.equal(typeof me.body.data.name, 'string');
  const bal = await api('GET', '/api/v3/balance', t.token);
  assert.equal(bal.status, 200);
  assert.deepEqual({ balance: bal.body.data.balance, currency: bal.body.data.currency, billing_mode: bal.body.data.billing_mode }, { balance: 100, currency: 'USD', billing_mode: 'prepaid' });
  const auth = await api('GET', '/api/v3/_auth', t.token);
  assert.equal(auth.status, 200);
  assert.equal(auth.body.data.account_id, t.accountId);
});

test('missing, malformed, unknown and query-string credentials are 401 in the v3 envelope', async () => {
  const t = await newTenant();
  for (const headers of [{} as Record<string, string>, { authorization: 'Basic abc' }, { authorization: `Bearer ${'x'.repeat(64)}` }, { authorization: 'Bearer' }]) {
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
  const expired = await admin('POST', `/accounts/${t.accountId}/keys`, { name: 'old', user_id: t.userId, expires_at: new Date(Date.now() - 1000).toISOString() });
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
  const sent = await api('POST', '/api/v3/sms/send', a.token, { recipient: '+255700000102', message: 'mine', tenant_id: b.accountId, account_id: b.accountId });
  assert.equal(sent.status, 201);
  const uid = sent.body.data.messages[0].uid;
  assert.equal((await api('GET', `/api/v3/sms/${uid}`, a.token)).status, 200);
  const foreign = await api('GET', `/api/v3/sms/${uid}`, b.token);
  assert.equal(foreign.status, 404);
  assert.equal(foreign.body.status, 'error');
  const me = await http('GET', `/api/v3/me?tenant_id=${b.accountId}`, { token: a.token });
  assert.equal(me.body.data.id, a.accountId);
});
