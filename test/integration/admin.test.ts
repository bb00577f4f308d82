import { test } from 'node:test';
import assert from 'node:assert/strict';
import { api, admin, http, newTenant } from '../support/stack.js';
import { cli } from '../support/admin-cli.js';

test('the operator CLI creates an account, a user, a key shown once, identities and a blacklist entry (JSON on stdout)', async () => {
  const acc = await cli('accounts:create', '--name', 'CLI Shop', '--currency', 'tzs', '--balance', '25');
  assert.equal(acc.code, 0);
  assert.equal(acc.json.data.currency, 'TZS');
  const id = String(acc.json.data.id);
  const user = await cli(
    'users:create',
    '--account',
    id,
    '--email',
    `ops${Date.now()}@shop.test`,
    '--name',
    'Ops',
    '--permissions',
    'contacts.view,api-keys.view',
  );
  assert.deepEqual(user.json.data.permissions, ['contacts.view', 'api-keys.view']);
  const key = await cli('keys:create', '--account', id, '--name', 'backend', '--user', String(user.json.data.id));
  assert.match(key.json.data.token, /^[A-Za-z0-9]{64}$/);
  const listed = await cli('keys:list', '--account', id);
  assert.equal(listed.json.data.length, 1);
  assert.equal(listed.json.data[0].token, undefined, 'the secret is shown only once');
  assert.equal((await api('GET', '/api/v3/me', key.json.data.token)).body.data.name, 'CLI Shop');

  assert.equal((await cli('senders:add', '--account', id, '--value', 'SHOP', '--status', 'approved')).code, 0);
  assert.equal(
    (
      await cli(
        'numbers:add',
        '--account',
        id,
        '--number',
        '+255 700 123 456',
        '--capabilities',
        'sms,whatsapp',
        '--phone-number-id',
        '1234567',
      )
    ).json.data.number,
    '+255700123456',
  );
  assert.equal((await cli('short-codes:add', '--account', id, '--code', '15500')).code, 0);
  assert.equal((await cli('blacklist:add', '--account', id, '--phone', '+255700000009')).json.data.phone, '+255700000009');
  const senders = await api('GET', '/api/v3/sms/senders', key.json.data.token);
  assert.deepEqual(senders.body.data.senders.map((s: any) => s.type).sort(), ['alphanumeric', 'phone_number', 'short_code']);

  const wallet = await cli('wallet:set', '--account', id, '--balance', '80.5', '--billing-mode', 'postpaid');
  assert.equal(wallet.code, 0);
  const bal = await api('GET', '/api/v3/balance', key.json.data.token);
  assert.deepEqual([bal.body.data.balance, bal.body.data.currency, bal.body.data.billing_mode], [80.5, 'TZS', 'postpaid']);

  assert.equal((await cli('users:deactivate', '--account', id, '--user', String(user.json.data.id))).json.data.active, false);
  assert.equal((await cli('accounts:suspend', '--account', id)).json.data.status, 'suspended');
  assert.equal((await api('GET', '/api/v3/me', key.json.data.token)).status, 403);
  const bad = await cli('keys:create', '--account', id, '--name', 'x'.repeat(161));
  assert.equal(bad.code, 1);
  assert.ok(bad.json.errors.name);
});

test('the operator interface refuses account keys and wrong tokens; unknown accounts are 404', async () => {
  const t = await newTenant();
  assert.equal((await http('GET', '/admin/v1/accounts', { token: t.token })).status, 401);
  assert.equal((await http('GET', '/admin/v1/accounts', { token: 'nope' })).status, 401);
  assert.equal((await admin('GET', '/accounts/99999999/keys')).status, 404);
  const user = await admin('POST', `/accounts/${t.accountId}/users`, { email: 'x@y.z', name: 'N', permissions: ['not.a.permission'] });
  assert.equal(user.status, 422);
  const foreignUser = await newTenant();
  const key = await admin('POST', `/accounts/${t.accountId}/keys`, { name: 'k', user_id: foreignUser.userId });
  assert.equal(key.status, 422, 'an issuer from another account is refused');
  assert.equal((await admin('GET', `/accounts/${t.accountUid}/keys`)).status, 200, 'operator paths take the account uid too');
});
