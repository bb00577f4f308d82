import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Agent } from 'undici';
import { endpointRequest, postAttempt, type DeliveryRef, type Prepared } from '../../../activities/webhooks/webhook-delivery.js';
import { destinationAgent, DESTINATION_NOT_ALLOWED, type DestinationPolicy } from '../../../services/platform/destinations.js';
import { signV1, signV2 } from '../../../services/webhooks/signing.js';
import type { Logger } from '../../../logger.js';

// One webhook attempt (postAttempt, what sendWebhookAttempt and the batch dispatch both POST with)
// against a receiver on 127.0.0.1: every way a receiver can answer or fail becomes a result, never
// a throw, so the delivery's schedule decides about retries. The activities around it read the
// endpoint and event rows and log the attempt in SQL; those are tested against the real database
// in test/integration (webhooks, webhook-outbox, webhook-dispatch).

type Answer = (req: http.IncomingMessage, res: http.ServerResponse) => void;
const routes: Record<string, Answer> = {
  '/ok': (_q, s) => s.writeHead(200, { 'content-type': 'text/plain' }).end('thanks'),
  '/accepted': (_q, s) => s.writeHead(204).end(),
  '/gone': (_q, s) => s.writeHead(410).end('no such hook'),
  '/fail': (_q, s) => s.writeHead(500).end('é'.repeat(4000)),
  '/redirect': (_q, s) => s.writeHead(302, { location: '/ok' }).end(),
  '/slow': () => undefined,
};
const received: Array<{ path: string; headers: http.IncomingHttpHeaders; body: string }> = [];
const server = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    received.push({ path: req.url!, headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
    (routes[req.url!] ?? ((_q, s) => s.writeHead(404).end()))(req, res);
  });
});
let base = '';
const agents: Agent[] = [];

before(async () => {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(async () => {
  await Promise.all(agents.map((a) => a.destroy()));
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

const warnings: unknown[] = [];
const log = { warn: (o: unknown) => warnings.push(o) } as unknown as Logger;
const ref: DeliveryRef = { accountId: 1, eventId: 'evt_unit', target: { type: 'endpoint', id: 3 } };
const TIMEOUT_MS = 300;

/** One attempt at `url` under `policy` (loopback allowed unless said), through a fresh checked agent. */
async function attempt(url: string, o: { policy?: DestinationPolicy; resolve?: string } = {}) {
  const policy = o.policy ?? { allowLoopbackDestinations: true };
  const lookupAll = o.resolve ? async () => [{ address: o.resolve!, family: 4 }] : undefined;
  const agent = destinationAgent(policy, { timeoutMs: TIMEOUT_MS, lookupAll });
  agents.push(agent);
  const req: Prepared = {
    url,
    body: '{"event":"message.sent"}',
    headers: { 'content-type': 'application/json', 'webhook-id': 'evt_unit' },
  };
  const now = new Date('2026-05-01T10:00:00Z');
  return postAttempt({ log, destinations: policy }, agent, TIMEOUT_MS, ref, req, now);
}

test('a 2xx is a success; the receiver gets the prepared body and headers, the log keeps the start of its answer', async () => {
  const before = received.length;
  const r = await attempt(`${base}/ok`);
  assert.equal(r.outcome, 'succeeded');
  assert.equal(r.statusCode, 200);
  assert.equal(r.error, null);
  assert.equal(r.responseExcerpt, 'thanks');
  assert.equal(r.attemptedAt, '2026-05-01T10:00:00.000Z');
  assert.ok(r.latencyMs >= 0);
  const got = received.slice(before);
  assert.equal(got.length, 1);
  assert.equal(got[0].body, '{"event":"message.sent"}');
  assert.equal(got[0].headers['webhook-id'], 'evt_unit');
  const empty = await attempt(`${base}/accepted`);
  assert.deepEqual([empty.outcome, empty.statusCode, empty.responseExcerpt], ['succeeded', 204, null]);
});

test('410 Gone is its own outcome (the endpoint is disabled for it); other refusals are failures', async () => {
  const gone = await attempt(`${base}/gone`);
  assert.deepEqual([gone.outcome, gone.statusCode, gone.error, gone.responseExcerpt], ['gone', 410, 'HTTP 410', 'no such hook']);
  const failed = await attempt(`${base}/fail`);
  assert.deepEqual([failed.outcome, failed.statusCode, failed.error], ['failed', 500, 'HTTP 500']);
  // The log keeps 256 characters of at most the first 1024 bytes, however long the answer.
  assert.equal(failed.responseExcerpt, 'é'.repeat(256));
});

test('a redirect is an answer, never followed', async () => {
  const before = received.length;
  const r = await attempt(`${base}/redirect`);
  assert.deepEqual([r.outcome, r.statusCode, r.error], ['failed', 302, 'HTTP 302']);
  assert.deepEqual(
    received.slice(before).map((g) => g.path),
    ['/redirect'],
  );
});

test('a receiver that does not answer in time, or cannot be reached, is a failed result, not a throw', async () => {
  const slow = await attempt(`${base}/slow`);
  assert.deepEqual([slow.outcome, slow.statusCode, slow.error], ['failed', null, `timed out after ${TIMEOUT_MS} ms`]);
  assert.ok(slow.latencyMs >= TIMEOUT_MS - 50, `gave up after ${slow.latencyMs} ms`);
  const closed = http.createServer();
  await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
  const port = (closed.address() as AddressInfo).port;
  await new Promise((r) => closed.close(r));
  const refused = await attempt(`http://127.0.0.1:${port}/ok`);
  assert.deepEqual([refused.outcome, refused.statusCode, refused.error], ['failed', null, 'connection failed (ECONNREFUSED)']);
});

test('a destination the policy forbids is refused without a connection, whether written as an address or resolved to one', async () => {
  const before = received.length;
  const strict = { allowLoopbackDestinations: false };
  const literal = await attempt(`${base}/ok`, { policy: strict });
  assert.deepEqual([literal.outcome, literal.statusCode, literal.error, literal.latencyMs], ['failed', null, DESTINATION_NOT_ALLOWED, 0]);
  // A name saved when it pointed elsewhere and now resolving to loopback: refused when connecting.
  const port = new URL(base).port;
  const rebound = await attempt(`http://hooks.customer.example:${port}/ok`, { policy: strict, resolve: '127.0.0.1' });
  assert.deepEqual([rebound.outcome, rebound.statusCode, rebound.error], ['failed', null, DESTINATION_NOT_ALLOWED]);
  assert.equal(received.length, before, 'the receiver saw nothing');
  assert.ok(warnings.length >= 2, 'each refusal is logged');
  // The same name is reached when the policy allows loopback (local development, the test stack).
  const allowed = await attempt(`http://hooks.customer.example:${port}/ok`, { resolve: '127.0.0.1' });
  assert.equal(allowed.outcome, 'succeeded');
});

test('a communication callback is signed with every secret while a rotation overlaps, then the new one alone', () => {
  const ep = { url: `${base}/ok`, secret: 'whsec_new', previous_secret: 'whsec_old', previous_secret_expires_at: '2026-05-02T00:00:00Z' };
  const payload = { data: { uid: 'msg_1' }, occurred_at: '2026-05-01T09:59:59Z', event: 'message.sent', event_id: 'evt_unit' };
  const during = endpointRequest(ep, 'evt_unit', payload, new Date('2026-05-01T10:00:00Z'));
  assert.equal(during.url, ep.url);
  assert.equal(
    during.body,
    '{"event_id":"evt_unit","event":"message.sent","occurred_at":"2026-05-01T09:59:59Z","data":{"uid":"msg_1"}}',
    'the envelope fields first',
  );
  const ts = Date.parse('2026-05-01T10:00:00Z') / 1000;
  assert.equal(during.headers['x-signature'], `${signV1('whsec_new', during.body)} ${signV1('whsec_old', during.body)}`);
  assert.equal(
    during.headers['webhook-signature'],
    `${signV2('whsec_new', 'evt_unit', ts, during.body)} ${signV2('whsec_old', 'evt_unit', ts, during.body)}`,
  );
  assert.equal(during.headers['webhook-timestamp'], String(ts));
  const later = endpointRequest(ep, 'evt_unit', payload, new Date('2026-05-02T00:00:01Z'));
  assert.equal(later.headers['x-signature'], signV1('whsec_new', later.body));
  assert.equal(later.headers['webhook-id'], 'evt_unit', 'a retry keeps the webhook-id receivers dedupe on');
});
