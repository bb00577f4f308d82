import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import {
  DestinationRefused,
  assertDestinationAllowed,
  checkDestinationText,
  checkedLookup,
  classifyAddress,
  destinationAgent,
  isDestinationRefusal,
  type LookupAll,
} from '../../services/platform/destinations.js';
import { DomainError } from '../../services/platform/errors.js';

const strict = { allowLoopbackDestinations: false };
const loose = { allowLoopbackDestinations: true };
const noDns: LookupAll = async () => {
  throw Object.assign(new Error('offline'), { code: 'ENOTFOUND' });
};
const resolvesTo =
  (...addresses: string[]): LookupAll =>
  async () =>
    addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));

test('every address class is recognised, in both families and in IPv4-mapped form', () => {
  const cases: Array<[string, string]> = [
    ['127.0.0.1', 'loopback'],
    ['127.255.0.9', 'loopback'],
    ['::1', 'loopback'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['100.64.0.1', 'private'],
    ['fc00::1', 'private'],
    ['fd12:3456::1', 'private'],
    ['169.254.169.254', 'link-local'],
    ['169.254.0.1', 'link-local'],
    ['fe80::1', 'link-local'],
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'unspecified'],
    ['::', 'unspecified'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['ff02::1', 'multicast'],
    ['255.255.255.255', 'reserved'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['::ffff:a9fe:a9fe', 'link-local'],
    ['::ffff:10.0.0.1', 'private'],
    ['64:ff9b::a9fe:a9fe', 'link-local'],
    ['2002:7f00:1::', 'loopback'],
    ['[::1]', 'loopback'],
    ['8.8.8.8', 'public'],
    ['172.32.0.1', 'public'],
    ['2606:4700::1111', 'public'],
    ['::ffff:8.8.8.8', 'public'],
  ];
  for (const [ip, cls] of cases) assert.equal(classifyAddress(ip), cls, ip);
  assert.equal(classifyAddress('example.com'), null);
});

test('IPv6 forms that carry an IPv4 address are judged by it, or refused whole; outside global unicast nothing is public', () => {
  const cases: Array<[string, string]> = [
    // IPv4-translated (::ffff:0:0:0/96, SIIT): the metadata address behind it, and a public one.
    ['::ffff:0:a9fe:a9fe', 'link-local'],
    ['::ffff:0:169.254.169.254', 'link-local'],
    ['::ffff:0:10.0.0.1', 'private'],
    ['::ffff:0:127.0.0.1', 'loopback'],
    ['::ffff:0:808:808', 'public'],
    // NAT64 well-known prefix (64:ff9b::/96).
    ['64:ff9b::169.254.169.254', 'link-local'],
    ['64:ff9b::192.168.0.1', 'private'],
    ['64:ff9b::7f00:1', 'loopback'],
    ['64:ff9b::8.8.8.8', 'public'],
    ['64:ff9b::1:0:0:1', 'reserved'], // 64:ff9b::/32 outside the /96
    // Local-use NAT64 (64:ff9b:1::/48): where the IPv4 address sits is the operator's choice, so the whole prefix.
    ['64:ff9b:1::a9fe:a9fe', 'private'],
    ['64:ff9b:1::8.8.8.8', 'private'],
    ['64:ff9b:1:a9fe:a9:fe00::', 'private'],
    // The discard prefix (100::/64) and the rest of the space outside 2000::/3.
    ['100::', 'reserved'],
    ['100::a9fe:a9fe', 'reserved'],
    ['100::ffff:a9fe:a9fe', 'reserved'],
    ['100:0:0:1::1', 'reserved'],
    ['::a9fe:a9fe', 'reserved'], // IPv4-compatible, deprecated
    ['4000::1', 'reserved'],
    // Teredo hides its IPv4 address; 6to4 carries one in the clear.
    ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'reserved'],
    ['2002:a9fe:a9fe::1', 'link-local'],
    ['2002:808:808::1', 'public'],
    ['2001:2::1', 'reserved'],
    ['3fff::1', 'reserved'],
    ['2a00:1450:4001::1', 'public'],
  ];
  for (const [ip, cls] of cases) assert.equal(classifyAddress(ip), cls, ip);
  // The same judgement on the URL text a save checks (WHATWG writes these hosts in hex).
  for (const url of [
    'http://[::ffff:0:a9fe:a9fe]/',
    'http://[::ffff:0:169.254.169.254]/',
    'http://[64:ff9b::a9fe:a9fe]/',
    'http://[64:ff9b:1::808:808]/',
    'http://[100::a9fe:a9fe]/',
  ])
    assert.ok('refused' in checkDestinationText(url, loose), url);
  assert.deepEqual(checkDestinationText('http://[64:ff9b::808:808]/', strict), { host: null });
  assert.deepEqual(checkDestinationText('http://[::ffff:0:808:808]/', strict), { host: null });
});

test('URL text: scheme, credentials and every spelling of a refused host', () => {
  const refused = [
    'ftp://example.com/h',
    'file:///etc/passwd',
    'gopher://example.com/',
    'http://user:pw@example.com/h',
    'https://token@example.com/h',
    'http://127.0.0.1:8080/h',
    'http://localhost/h',
    'http://localhost./h',
    'http://api.localhost/h',
    'http://[::1]/h',
    'http://2130706433/',
    'http://0x7f.1/',
    'http://017700000001/',
    'http://[::ffff:127.0.0.1]/',
    'http://0.0.0.0/',
    'http://0/',
    'http://10.0.0.5/',
    'http://172.20.1.1/',
    'http://192.168.0.10/',
    'http://[fd00::1]/',
    'http://169.254.169.254/latest/meta-data/',
    'http://2852039166/',
    'http://[fe80::1]/',
    'http://224.0.0.1/',
    'not a url',
  ];
  for (const url of refused) assert.ok('refused' in checkDestinationText(url, strict), url);
  assert.deepEqual(checkDestinationText('https://hooks.example.com/x', strict), { host: 'hooks.example.com' });
  assert.deepEqual(checkDestinationText('http://8.8.8.8/x', strict), { host: null });
});

test('the loopback switch opens loopback only: link-local, metadata and private stay refused', () => {
  for (const url of ['http://127.0.0.1:9/h', 'http://localhost/h', 'http://[::1]/h', 'http://2130706433/', 'http://[::ffff:127.0.0.1]/'])
    assert.ok(!('refused' in checkDestinationText(url, loose)), url);
  for (const url of ['http://169.254.169.254/', 'http://[fe80::1]/', 'http://10.0.0.1/', 'http://0.0.0.0/', 'http://u:p@127.0.0.1/'])
    assert.ok('refused' in checkDestinationText(url, loose), url);
});

test('saving refuses with a 422 on the named field, including a name that resolves to a refused address', async () => {
  const fieldOf = async (url: string, lookup: LookupAll) => {
    try {
      await assertDestinationAllowed(url, strict, 'target_url', lookup);
      return null;
    } catch (e) {
      assert.ok(e instanceof DomainError && e.kind === 'invalid');
      return Object.keys(e.detail.errors ?? {});
    }
  };
  assert.deepEqual(await fieldOf('http://u:p@example.com/', noDns), ['target_url']);
  assert.deepEqual(await fieldOf('http://internal.example/', resolvesTo('10.0.0.7')), ['target_url']);
  assert.deepEqual(await fieldOf('http://mixed.example/', resolvesTo('93.184.216.34', '127.0.0.1')), ['target_url']);
  assert.equal(await fieldOf('http://public.example/', resolvesTo('93.184.216.34')), null);
  assert.equal(await fieldOf('http://not-yet.example/', noDns), null, 'an unresolvable name is checked again at connect time');
});

test('the connect-time lookup refuses a name when any of its addresses is refused, and answers in both shapes', async () => {
  const look = (lookup: LookupAll, all: boolean) =>
    new Promise<{ err: Error | null; address: unknown }>((resolve) =>
      checkedLookup(strict, lookup)('h.example', { all }, (err, address) => resolve({ err, address })),
    );
  const bad = await look(resolvesTo('93.184.216.34', '169.254.169.254'), true);
  assert.ok(bad.err instanceof DestinationRefused);
  assert.equal(bad.err.message, 'destination not allowed');
  assert.deepEqual((await look(resolvesTo('93.184.216.34'), true)).address, [{ address: '93.184.216.34', family: 4 }]);
  assert.equal((await look(resolvesTo('93.184.216.34'), false)).address, '93.184.216.34');
});

const server = http.createServer((_req, res) => res.end('secret page'));
await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
const port = (server.address() as AddressInfo).port;
after(() => {
  server.closeAllConnections();
  server.close();
});

test('the dispatcher refuses at connect time: a name resolving to loopback, and an IP literal', async () => {
  // DNS answers a loopback address after the URL was saved under a public name.
  const agent = destinationAgent(strict, { lookupAll: resolvesTo('127.0.0.1') });
  const byName = await request(`http://rebinding.example:${port}/`, { dispatcher: agent }).catch((e: unknown) => e);
  assert.ok(isDestinationRefusal(byName), String(byName));
  const byLiteral = await request(`http://127.0.0.1:${port}/`, { dispatcher: agent }).catch((e: unknown) => e);
  assert.ok(isDestinationRefusal(byLiteral), String(byLiteral));
  const mapped = await request(`http://[::ffff:127.0.0.1]:${port}/`, { dispatcher: agent }).catch((e: unknown) => e);
  assert.ok(isDestinationRefusal(mapped), String(mapped));
  await agent.close();
});

test('connect time judges the translated forms as save time does: IP literals and names resolving to them', async () => {
  for (const address of ['::ffff:0:a9fe:a9fe', '64:ff9b::a9fe:a9fe', '64:ff9b:1::808:808', '100::a9fe:a9fe']) {
    // Even with the loopback switch: none of these is loopback.
    const agent = destinationAgent(loose, { lookupAll: resolvesTo(address) });
    const byName = await request(`http://translated.example:${port}/`, { dispatcher: agent }).catch((e: unknown) => e);
    assert.ok(isDestinationRefusal(byName), `${address} by name: ${String(byName)}`);
    const byLiteral = await request(`http://[${address}]:${port}/`, { dispatcher: agent }).catch((e: unknown) => e);
    assert.ok(isDestinationRefusal(byLiteral), `${address} literal: ${String(byLiteral)}`);
    await agent.close();
  }
  const look = (address: string) =>
    new Promise<Error | null>((resolve) => checkedLookup(strict, resolvesTo(address))('h.example', { all: true }, (err) => resolve(err)));
  assert.equal(await look('64:ff9b::808:808'), null, 'a public IPv4 address behind the well-known prefix is allowed');
  assert.equal(await look('::ffff:0:808:808'), null);
  assert.ok((await look('::ffff:0:a9fe:a9fe')) instanceof DestinationRefused);
});

test('with the loopback switch the same dispatcher connects (so the refusal above is the policy, not the network)', async () => {
  const agent = destinationAgent(loose, { lookupAll: resolvesTo('127.0.0.1') });
  const res = await request(`http://rebinding.example:${port}/`, { dispatcher: agent });
  assert.equal(await res.body.text(), 'secret page');
  const meta = destinationAgent(loose, { lookupAll: resolvesTo('169.254.169.254') });
  assert.ok(isDestinationRefusal(await request(`http://meta.example:${port}/`, { dispatcher: meta }).catch((e: unknown) => e)));
  await agent.close();
  await meta.close();
});
