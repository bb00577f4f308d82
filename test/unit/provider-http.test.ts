import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { httpRequest } from '../../providers/http.js';

// The provider transport on a local socket: every way a call goes wrong becomes a retryable failure.
const server = http.createServer((req, res) => {
  if (req.url === '/json') {
    res.writeHead(429, { 'content-type': 'application/json', 'Retry-After': '7' });
    res.end('{"code":20429}');
    return;
  }
  if (req.url === '/stall-headers') return; // never answers
  if (req.url === '/stall-body') {
    res.writeHead(200);
    res.write('{"partial":');
    return;
  } // never finishes
  res.writeHead(200);
  res.end('plain');
});
await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
after(() => {
  server.closeAllConnections();
  server.close();
});

test('a reply carries status, headers read case-insensitively and the parsed body', async () => {
  const r = await httpRequest(`${base}/json`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
  assert.ok(r.ok);
  assert.equal(r.reply.status, 429);
  assert.equal(r.reply.headers.get('Retry-After'), '7');
  assert.equal(r.reply.headers.get('x-missing'), null);
  assert.deepEqual(r.reply.json, { code: 20429 });
});

test('no answer, a stall mid-body and a refused connection are retryable failures', async () => {
  // Side by side: undici runs these timers at about one second of resolution, so each stall costs
  // a second whatever the timeout, and one after the other they were the unit phase's longest wait.
  const stalls = ['/stall-headers', '/stall-body'];
  const stalled = await Promise.all(stalls.map((path) => httpRequest(`${base}${path}`, { method: 'GET', headers: {} }, 300)));
  for (const [i, r] of stalled.entries()) {
    assert.ok(!r.ok);
    assert.deepEqual([r.failure.code, r.failure.permanent], ['timeout', false], stalls[i]);
  }
  const closed = http.createServer();
  await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
  const port = (closed.address() as AddressInfo).port;
  await new Promise((r) => closed.close(r));
  const refused = await httpRequest(`http://127.0.0.1:${port}/`, { method: 'GET', headers: {} });
  assert.ok(!refused.ok);
  assert.deepEqual([refused.failure.code, refused.failure.permanent], ['network_error', false]);
  assert.match(refused.failure.message, /ECONNREFUSED/);
});
