// Reads started beside their authentication (api/http/speculation.ts): a read of a token this API
// process admitted a moment ago runs at once with the principal it had then, and its answer is used
// only when the authentication admits the request as exactly that principal. Every change that
// authentication can see (balance, permissions, issuer, revocation, account status) must win.
// @test-alone: it counts the API process's early reads, which other files' requests would move, and
// early reads happen only while few requests are in flight.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { OPERATOR_TOKEN, admin, api, http, newTenant } from '../support/stack.js';

async function earlyReads(): Promise<{ used: number; dropped: number }> {
  const text = (await http('GET', '/metrics', { token: OPERATOR_TOKEN })).text;
  const count = (outcome: string) =>
    Number(new RegExp(`^http_early_reads_total\\{outcome="${outcome}"\\} (\\d+)`, 'm').exec(text)?.[1] ?? 0);
  return { used: count('used'), dropped: count('dropped') };
}

test('a read of a known token starts early and its answer is used when the principal is unchanged', async () => {
  const t = await newTenant();
  assert.equal((await api('GET', '/api/v3/balance', t.token)).status, 200);
  const before = await earlyReads();
  const r = await api('GET', '/api/v3/balance', t.token);
  assert.equal(r.status, 200);
  assert.equal(r.body.data.balance, 100);
  assert.ok(r.headers.get('x-ratelimit-remaining'), 'the rate headers come from the authentication that ran beside it');
  const after = await earlyReads();
  assert.equal(after.used - before.used, 1, 'the early answer was used');
});

test('a change authentication sees wins over the early read: balance, permissions, issuer, revocation, suspension', async () => {
  const t = await newTenant();
  const tables = () => api('GET', '/api/v3/data/tables', t.token);
  assert.equal((await tables()).status, 200);
  assert.equal((await api('GET', '/api/v3/balance', t.token)).status, 200);

  // The balance is part of the principal: the early answer (100) is dropped, the read runs again.
  let before = await earlyReads();
  assert.equal((await admin('PATCH', `/accounts/${t.accountId}`, { wallet_balance: 42 })).status, 200);
  const balance = await api('GET', '/api/v3/balance', t.token);
  assert.equal(balance.body.data.balance, 42);
  assert.equal((await earlyReads()).dropped - before.dropped, 1);

  // The issuer loses data.view: 403, never the early answer.
  assert.equal((await admin('PATCH', `/accounts/${t.accountId}/users/${t.userId}`, { permissions: ['communications.send'] })).status, 200);
  const denied = await tables();
  assert.equal(denied.status, 403, denied.text);
  assert.ok(!('tables' in (denied.body ?? {})), 'no rows leave with a refusal');

  // Permissions back, then the issuer deactivated.
  assert.equal((await admin('PATCH', `/accounts/${t.accountId}/users/${t.userId}`, { permissions: ['*'] })).status, 200);
  assert.equal((await tables()).status, 200);
  assert.equal((await admin('PATCH', `/accounts/${t.accountId}/users/${t.userId}`, { active: false })).status, 200);
  assert.equal((await tables()).status, 403);
  assert.equal((await admin('PATCH', `/accounts/${t.accountId}/users/${t.userId}`, { active: true })).status, 200);
  assert.equal((await tables()).status, 200);

  // The account suspended: 403 account_suspended.
  before = await earlyReads();
  assert.equal((await admin('PATCH', `/accounts/${t.accountId}`, { status: 'suspended' })).status, 200);
  const suspended = await api('GET', '/api/v3/balance', t.token);
  assert.equal(suspended.status, 403);
  assert.equal((await earlyReads()).dropped - before.dropped, 1, 'the suspended account had been read early and was dropped');
  assert.equal((await admin('PATCH', `/accounts/${t.accountId}`, { status: 'active' })).status, 200);
  assert.equal((await api('GET', '/api/v3/balance', t.token)).status, 200);

  // Revoked: 401 with the contract's message, and the token is forgotten (no more early reads for it).
  const keys = await admin('GET', `/accounts/${t.accountId}/keys`);
  const key = keys.body.data.find((k: { user_id: number | null }) => k.user_id === t.userId);
  assert.equal((await admin('DELETE', `/accounts/${t.accountId}/keys/${key.id}`)).status, 200);
  before = await earlyReads();
  for (let i = 0; i < 3; i++) {
    const r = await tables();
    assert.equal(r.status, 401);
    assert.equal(r.body.message, 'API token has been revoked.');
  }
  const after = await earlyReads();
  assert.equal(after.dropped - before.dropped, 1, 'only the first refused request had started early');
  assert.equal(after.used, before.used);
});

test('refusals of the path and query still follow the authentication', async () => {
  const t = await newTenant();
  assert.equal((await api('GET', '/api/v3/data/tables', t.token)).status, 200);
  const bad = await api('GET', '/api/v3/data/tables/not-a-table/records?limit=abc', t.token);
  assert.ok(bad.status >= 400 && bad.status < 500, bad.text);
  const unauthenticated = await api('GET', '/api/v3/data/tables/not-a-table/records?limit=abc', 'x'.repeat(64));
  assert.equal(unauthenticated.status, 401, 'a bad query from an unknown token is 401, as before');
});
