import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { openOrm } from '../../entities/orm.js';
import { one } from '../../entities/db.js';
import { admin, http, newTenant, OPERATOR_TOKEN } from '../support/stack.js';
import { privateStack } from '../support/private-stack.js';
import { createEndpoint, deliveredEvent, runDelivery, closeTemporal } from '../support/webhooks.js';

// Outbound destinations (SSRF): the test stack runs with ALLOW_LOOPBACK_DESTINATIONS=true, so what
// stays refused here is refused whatever the switch says; a private API without it shows the rest.
after(closeTemporal);

const ALWAYS_REFUSED = [
  'http://169.254.169.254/latest/meta-data/',
  'http://2852039166/', // 169.254.169.254 as one decimal number
  'http://[::ffff:169.254.169.254]/',
  'http://[fe80::1]/h',
  'http://10.0.0.8/h',
  'http://172.16.5.4/h',
  'http://192.168.1.1/h',
  'http://[fd00::1]/h',
  'http://0.0.0.0:9/h',
  'http://224.0.0.1/h',
  'http://user:secret@hooks.example.com/h',
  // IPv6 forms that carry the metadata address, or a prefix refused whole (issue 23, point 7).
  'http://[::ffff:0:a9fe:a9fe]/', // IPv4-translated
  'http://[64:ff9b::a9fe:a9fe]/', // NAT64 well-known prefix
  'http://[64:ff9b:1::808:808]/', // local-use NAT64
  'http://[100::a9fe:a9fe]/', // discard prefix
];
const LOOPBACK = ['http://127.0.0.1:9/h', 'http://localhost:9/h', 'http://[::1]:9/h', 'http://2130706433:9/h', 'http://0x7f.1:9/h'];

type Call = (method: string, path: string, body?: unknown) => Promise<{ status: number; body: any }>;
/** Each way an account-controlled URL is saved, with the field a refusal names. */
function savers(call: Call, accountId: number, endpointId: number) {
  return [
    { name: 'endpoint create', field: 'url', save: (url: string) => call('POST', `/accounts/${accountId}/webhook-endpoints`, { url }) },
    {
      name: 'endpoint update',
      field: 'url',
      save: (url: string) => call('PATCH', `/accounts/${accountId}/webhook-endpoints/${endpointId}`, { url }),
    },
    {
      name: 'subscription create',
      field: 'target_url',
      save: (url: string) => call('POST', `/accounts/${accountId}/automation-subscriptions`, { event_type: '*', target_url: url }),
    },
  ];
}

test('private, link-local, metadata, unspecified, multicast and credentialed URLs are refused on save with 422 on the field', async () => {
  const t = await newTenant();
  const ep = await createEndpoint(t.accountId, 'https://hooks.example.com/in');
  for (const s of savers(admin, t.accountId, ep.id))
    for (const url of ALWAYS_REFUSED) {
      const r = await s.save(url);
      assert.equal(r.status, 422, `${s.name} ${url}`);
      assert.deepEqual(Object.keys(r.body.errors ?? {}), [s.field], `${s.name} ${url}`);
    }
  const kept = await admin('GET', `/accounts/${t.accountId}/webhook-endpoints/${ep.id}`);
  assert.equal(kept.body.data.url, 'https://hooks.example.com/in', 'a refused update changes nothing');
  // With the switch on (this stack), loopback is accepted: the switch is what the test above leaves out.
  assert.equal((await savers(admin, t.accountId, ep.id)[0].save('http://127.0.0.1:9/h')).status, 201);
  // A public IPv4 address behind the NAT64 or translated forms is judged public, as the address itself is.
  for (const url of ['http://[64:ff9b::808:808]/h', 'http://[::ffff:0:808:808]/h'])
    assert.equal((await savers(admin, t.accountId, ep.id)[0].save(url)).status, 201, url);
});

test('without the loopback switch, loopback in every spelling is refused too', { timeout: 120_000 }, async () => {
  const stack = await privateStack({ ALLOW_LOOPBACK_DESTINATIONS: 'false' });
  try {
    const call: Call = (method, path, body) => http(method, `${stack.apiUrl}/admin/v1${path}`, { token: OPERATOR_TOKEN, body });
    const account = (await call('POST', '/accounts', { name: `No loopback ${Date.now()}` })).body.data;
    const ep = (await call('POST', `/accounts/${account.id}/webhook-endpoints`, { url: 'https://hooks.example.com/in' })).body.data;
    for (const s of savers(call, account.id, ep.id))
      for (const url of [...LOOPBACK, ALWAYS_REFUSED[0]]) {
        const r = await s.save(url);
        assert.equal(r.status, 422, `${s.name} ${url}`);
        assert.deepEqual(Object.keys(r.body.errors ?? {}), [s.field], `${s.name} ${url}`);
      }
  } finally {
    await stack.stop();
  }
});

test(
  'a stored URL that is no longer allowed is refused at send time with a generic error and nothing of an answer',
  { timeout: 60_000 },
  async () => {
    const t = await newTenant();
    const { event } = await deliveredEvent(t, `+2557${String(Date.now()).slice(-8)}`);
    const ep = await createEndpoint(t.accountId, 'https://hooks.example.com/in', ['order.paid']);
    // As if saved before the policy existed: the database is the only way to get it there now.
    const orm = await openOrm(process.env.DATABASE_URL!, 1);
    try {
      await one(orm.em.fork(), 'update webhook_endpoints set url = ? where id = ? returning id', [
        'http://169.254.169.254/latest/meta-data/',
        ep.id,
      ]);
    } finally {
      await orm.close();
    }
    const result = await runDelivery({
      accountId: t.accountId,
      eventId: event.event_id,
      target: { type: 'endpoint', id: ep.id },
      retryDelaysSeconds: [],
    });
    assert.deepEqual([result.status, result.lastStatusCode, result.lastError], ['failed', null, 'destination not allowed']);
    const log = await admin('GET', `/accounts/${t.accountId}/webhook-deliveries?endpoint_id=${ep.id}`);
    assert.deepEqual(
      log.body.data[0].attempt_log.map((a: any) => [a.status_code, a.error, a.response_excerpt]),
      [[null, 'destination not allowed', null]],
    );
  },
);
