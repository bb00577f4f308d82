import { test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import {
  communicationHeaders,
  newWebhookSecret,
  signV1,
  signV2,
  svcSignature,
  verifySvcSignature,
} from '../../services/webhooks/signing.js';

const body = JSON.stringify({ event_id: 'evt_abc', event: 'message.delivered', occurred_at: '2026-11-22T00:00:00.000Z', message_id: 42 });

test('X-Signature-V2 and the webhook-* headers verify with the standardwebhooks library', () => {
  const secret = newWebhookSecret();
  assert.match(secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
  const headers = communicationHeaders([secret], 'evt_abc', body);
  assert.equal(headers['x-signature-v2'], headers['webhook-signature']);
  assert.deepEqual(new Webhook(secret).verify(body, headers), JSON.parse(body));
  // Same signature as the library's own signer for the same id and time.
  const ts = Number(headers['webhook-timestamp']);
  assert.equal(headers['webhook-signature'], new Webhook(secret).sign('evt_abc', new Date(ts * 1000), body));
});

test('a tampered body, another secret or a stale timestamp fail verification', () => {
  const secret = newWebhookSecret();
  const headers = communicationHeaders([secret], 'evt_abc', body);
  assert.throws(() => new Webhook(secret).verify(body.replace('42', '43'), headers));
  assert.throws(() => new Webhook(newWebhookSecret()).verify(body, headers));
  const old = communicationHeaders([secret], 'evt_abc', body, new Date(Date.now() - 10 * 60_000));
  assert.throws(() => new Webhook(secret).verify(body, old), /timestamp/i);
});

test('during a rotation overlap both secrets sign, and a receiver holding either one verifies', () => {
  const current = newWebhookSecret();
  const previous = newWebhookSecret();
  const headers = communicationHeaders([current, previous], 'evt_abc', body);
  assert.equal(headers['webhook-signature'].split(' ').length, 2);
  assert.equal(headers['x-signature'].split(' ').length, 2);
  assert.doesNotThrow(() => new Webhook(current).verify(body, headers));
  assert.doesNotThrow(() => new Webhook(previous).verify(body, headers));
  assert.ok(headers['x-signature'].split(' ').includes(signV1(previous, body)));
});

test('X-Signature (V1) is the hex HMAC-SHA256 of the raw body keyed with the secret string', () => {
  const secret = 'whsec_dGVzdA==';
  assert.equal(signV1(secret, body), crypto.createHmac('sha256', secret).update(body).digest('hex'));
  assert.match(signV1(secret, body), /^[0-9a-f]{64}$/);
  assert.match(signV2(secret, 'evt_1', 1700000000, body), /^v1,[A-Za-z0-9+/]+=*$/);
});

test('X-Svc-Signature is t=<unix>,v1=<hex HMAC of "t.body"> and verifies within 5 minutes only', () => {
  const now = new Date('2026-11-22T10:00:00Z');
  const header = svcSignature('svcsec_x', body, now);
  const t = Math.floor(now.getTime() / 1000);
  assert.equal(header, `t=${t},v1=${crypto.createHmac('sha256', 'svcsec_x').update(`${t}.${body}`).digest('hex')}`);
  assert.ok(verifySvcSignature('svcsec_x', body, header, 300, now));
  assert.ok(!verifySvcSignature('svcsec_x', `${body} `, header, 300, now));
  assert.ok(!verifySvcSignature('svcsec_y', body, header, 300, now));
  assert.ok(!verifySvcSignature('svcsec_x', body, header, 300, new Date(now.getTime() + 301_000)));
});
