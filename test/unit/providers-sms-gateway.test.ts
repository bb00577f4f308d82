import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createSmsGateway } from '../../providers/sms-gateway/index.js';
import { signTwilio, verifyTwilioSignature } from '../../providers/sms-gateway/signature.js';
import { mapSmsGatewayStatus } from '../../providers/sms-gateway/status.js';
import { smsSendRequest, toE164, twilioMessageForm } from '../../providers/sms-gateway/payload.js';
import type { WebhookRequest } from '../../providers/types.js';

// The SMS gateway adapter against Twilio's documented shapes: signatures, status callbacks, inbound
// messages, the status vocabulary and the send request (spied on a local socket).

const TOKEN = 'test-auth-token';
const PUBLIC = 'https://api.example.com';

// The provider's HTTP peer: records what the adapter sends and answers like Twilio's Messages API.
const seen: Array<{ method: string; url: string; headers: http.IncomingHttpHeaders; body: string }> = [];
const server = http.createServer((req, res) => {
  let body = '';
  req.on('data', (c: Buffer) => (body += c.toString('utf8')));
  req.on('end', () => {
    seen.push({ method: req.method!, url: req.url!, headers: req.headers, body });
    res.writeHead(req.method === 'POST' ? 201 : 200, { 'content-type': 'application/json' });
    res.end(
      req.method === 'POST'
        ? JSON.stringify({ sid: 'SM0123456789abcdef0123456789abcdef', status: 'queued', num_segments: '1' })
        : JSON.stringify({ sid: 'SMx', status: 'undelivered', error_code: 30003 }),
    );
  });
});
await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
after(() => {
  server.closeAllConnections();
  server.close();
});
const gateway = createSmsGateway({
  baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
  accountSid: 'ACtest',
  authToken: TOKEN,
  messagingServiceSid: 'MGtest',
  publicBaseUrl: PUBLIC,
  timeoutMs: 2000,
});

/** A status callback exactly as Twilio posts it to our callback URL. */
function statusCallback(uid: string, status: string, extra: Record<string, string> = {}): WebhookRequest {
  const url = `/providers/sms/status?m=${encodeURIComponent(uid)}`;
  const params = {
    SmsSid: 'SM0123456789abcdef0123456789abcdef',
    SmsStatus: status,
    MessageStatus: status,
    To: '+255712345678',
    MessagingServiceSid: 'MGtest',
    MessageSid: 'SM0123456789abcdef0123456789abcdef',
    AccountSid: 'ACtest',
    From: '+15005550006',
    ApiVersion: '2010-04-01',
    ...extra,
  };
  return {
    url,
    rawBody: Buffer.from(new URLSearchParams(params).toString()),
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-twilio-signature': signTwilio(TOKEN, `${PUBLIC}${url}`, params) },
  };
}
const endpoint = (path: string) => gateway.webhooks.find((w) => w.path === path)!;

test("signTwilio matches Twilio's documented worked example; verification refuses tampering", () => {
  const params = { CallSid: 'CA1234567890ABCDE', Caller: '+12349013030', Digits: '1234', From: '+12349013030', To: '+18005551212' };
  const url = 'https://mycompany.com/myapp.php?foo=1&bar=2';
  assert.equal(signTwilio('12345', url, params), '0/KCTR6DLpKmkAf8muzZqo1nDgQ=');
  assert.ok(verifyTwilioSignature('12345', url, params, '0/KCTR6DLpKmkAf8muzZqo1nDgQ='));
  assert.ok(!verifyTwilioSignature('12345', url, { ...params, Digits: '1235' }, '0/KCTR6DLpKmkAf8muzZqo1nDgQ='));
  assert.ok(!verifyTwilioSignature('12345', `${url}&x=1`, params, '0/KCTR6DLpKmkAf8muzZqo1nDgQ='));
  assert.ok(!verifyTwilioSignature('54321', url, params, '0/KCTR6DLpKmkAf8muzZqo1nDgQ='));
  assert.ok(!verifyTwilioSignature('12345', url, params, undefined));
  assert.ok(!verifyTwilioSignature('12345', url, params, 'short'));
});

test('the adapter verifies a webhook over our public URL, the query and the form', () => {
  const ok = statusCallback('msg_abc', 'delivered');
  assert.ok(gateway.verifySignature(ok));
  const tampered = { ...ok, rawBody: Buffer.from(ok.rawBody.toString().replace('delivered', 'failed')) };
  assert.ok(!gateway.verifySignature(tampered), 'a changed parameter');
  assert.ok(!gateway.verifySignature({ ...ok, url: '/providers/sms/status?m=msg_other' }), 'another message named in the URL');
  assert.ok(!gateway.verifySignature({ ...ok, headers: {} }), 'no signature');
  assert.ok(!gateway.verifySignature({ ...ok, headers: { 'x-twilio-signature': ['a', 'b'] } }), 'a repeated header');
});

test('status callbacks become status updates in our vocabulary, naming our uid', () => {
  const parse = endpoint('/providers/sms/status').parse!;
  assert.deepEqual(parse(statusCallback('msg_abc', 'delivered')), [
    { type: 'status', status: 'delivered', uid: 'msg_abc', providerMessageId: 'SM0123456789abcdef0123456789abcdef' },
  ]);
  assert.deepEqual(parse(statusCallback('msg_abc', 'undelivered', { ErrorCode: '30003' })), [
    {
      type: 'status',
      status: 'failed',
      uid: 'msg_abc',
      providerMessageId: 'SM0123456789abcdef0123456789abcdef',
      errorMessage: 'Delivery failed (provider code 30003)',
    },
  ]);
  assert.deepEqual(parse(statusCallback('msg_abc', 'sending')), [], 'interim statuses change nothing');
  const noUid = { ...statusCallback('x', 'sent'), url: '/providers/sms/status' };
  assert.deepEqual(parse(noUid), [{ type: 'status', status: 'sent', providerMessageId: 'SM0123456789abcdef0123456789abcdef' }]);
  const nothing = { url: '/providers/sms/status', headers: {}, rawBody: Buffer.from('MessageStatus=delivered') };
  assert.deepEqual(parse(nothing), [], 'a callback naming no message');
});

test('an inbound SMS (with one media item) becomes an inbound message', () => {
  const params = {
    ToCountry: 'TZ',
    SmsMessageSid: 'SMin0001',
    NumMedia: '1',
    SmsSid: 'SMin0001',
    SmsStatus: 'received',
    Body: 'Habari',
    FromCountry: 'TZ',
    To: '+255700000001',
    NumSegments: '1',
    MessageSid: 'SMin0001',
    AccountSid: 'ACtest',
    From: '+255712345678',
    ApiVersion: '2010-04-01',
    MediaUrl0: 'https://api.twilio.com/2010-04-01/Accounts/ACtest/Messages/SMin0001/Media/ME1',
    MediaContentType0: 'image/jpeg',
  };
  const req: WebhookRequest = {
    url: '/providers/sms/inbound',
    rawBody: Buffer.from(new URLSearchParams(params).toString()),
    headers: { 'x-twilio-signature': signTwilio(TOKEN, `${PUBLIC}/providers/sms/inbound`, params) },
  };
  assert.ok(gateway.verifySignature(req));
  const inbound = endpoint('/providers/sms/inbound');
  assert.deepEqual(inbound.parse!(req), [
    {
      type: 'inbound',
      channelType: 'sms',
      businessNumber: { number: '+255700000001' },
      from: '+255712345678',
      body: 'Habari',
      providerMessageId: 'SMin0001',
      mediaUrl: params.MediaUrl0,
      mediaType: 'image/jpeg',
    },
  ]);
  assert.equal(inbound.answer.status, 200);
  assert.equal(inbound.answer.contentType, 'text/xml');
  assert.equal(inbound.answer.body, '<?xml version="1.0" encoding="UTF-8"?><Response></Response>');
  assert.equal(endpoint('/providers/sms/status').answer.status, 204);
});

test('status map: final statuses map, interim ones change nothing', () => {
  assert.equal(gateway.mapStatus, mapSmsGatewayStatus);
  const cases: Record<string, string | null> = {
    queued: null,
    accepted: null,
    sending: null,
    scheduled: null,
    receiving: null,
    sent: 'sent',
    delivered: 'delivered',
    read: 'read',
    undelivered: 'failed',
    failed: 'failed',
    canceled: 'failed',
    '': null,
  };
  for (const [twilio, ours] of Object.entries(cases)) assert.equal(mapSmsGatewayStatus(twilio), ours, twilio);
});

test('payload: E.164 numbers, sender ids untouched, messaging service without a sender, no empty Body', () => {
  assert.equal(toE164('255 712-345-678'), '+255712345678');
  assert.equal(toE164('INFO'), 'INFO');
  assert.equal(toE164('15555'), '15555', 'short codes stay as they are');
  const req = smsSendRequest({ uid: 'msg_a/b', to: '255712345678', from: null, body: '', mediaUrl: 'https://x.test/a.jpg' }, PUBLIC);
  assert.equal(req.statusCallback, `${PUBLIC}/providers/sms/status?m=msg_a%2Fb`);
  assert.equal(req.idempotencyKey, 'msg_a/b');
  const form = twilioMessageForm(req, 'MGtest');
  assert.deepEqual(Object.fromEntries(form), {
    To: '+255712345678',
    MessagingServiceSid: 'MGtest',
    MediaUrl: 'https://x.test/a.jpg',
    StatusCallback: `${PUBLIC}/providers/sms/status?m=msg_a%2Fb`,
  });
  assert.equal(twilioMessageForm({ ...req, from: 'ACME', body: 'Hi' }, 'MGtest').get('From'), 'ACME');
  assert.equal(twilioMessageForm({ ...req, from: 'ACME', body: 'Hi' }, 'MGtest').get('MessagingServiceSid'), null);
});

test('send posts the form with the uid as idempotency token; fetchStatus answers in our vocabulary', async () => {
  seen.length = 0;
  const r = await gateway.send({ uid: 'msg_1', to: '+255712345678', from: 'ACME', body: 'Hello', mediaUrl: null });
  assert.deepEqual(r, { ok: true, value: { providerMessageId: 'SM0123456789abcdef0123456789abcdef', status: 'queued', segments: 1 } });
  assert.equal(seen[0].url, '/2010-04-01/Accounts/ACtest/Messages.json');
  assert.equal(seen[0].headers['i-twilio-idempotency-token'], 'msg_1');
  assert.equal(seen[0].headers.authorization, `Basic ${Buffer.from(`ACtest:${TOKEN}`).toString('base64')}`);
  assert.deepEqual(Object.fromEntries(new URLSearchParams(seen[0].body)), {
    To: '+255712345678',
    From: 'ACME',
    Body: 'Hello',
    StatusCallback: `${PUBLIC}/providers/sms/status?m=msg_1`,
  });
  const s = await gateway.fetchStatus!('SMx');
  assert.deepEqual(s, { ok: true, value: { status: 'failed', errorMessage: 'Delivery failed (provider code 30003)' } });
});
