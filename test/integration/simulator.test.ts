// End-to-end checks of the provider simulator through the real adapters: if these pass, the
// adapters' wire format, error mapping and signature verification agree with the provider shapes.
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, beforeEach, describe, test } from 'node:test';
import { pino } from 'pino';
import { SmsGatewayClient } from '../../providers/sms-gateway/client.js';
import { signTwilio, verifyTwilioSignature } from '../../providers/sms-gateway/signature.js';
import { WhatsAppCloudClient } from '../../providers/whatsapp-cloud/client.js';
import { verifyMetaSignature } from '../../providers/whatsapp-cloud/signature.js';
import { createSimulator, type RunningSimulator, type Simulator } from '../../simulator/app.js';
import { segmentInfo } from '../../simulator/segments.js';

const SMS_SID = 'ACsimulator00000000000000000000000';
const SMS_TOKEN = 'sim-sms-auth-token';
const WA_TOKEN = 'sim-wa-access-token';
const WA_SECRET = 'sim-wa-app-secret';
const PHONE_ID = '106540352242922';

interface Captured {
  path: string;
  headers: IncomingMessage['headers'];
  raw: string;
}

/** Stand-in for our service's webhook endpoints; `answer` lets a test make it fail. */
class Receiver {
  captured: Captured[] = [];
  answer: (n: number) => number = () => 200;
  private server!: Server;
  base = '';

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      // Meta's subscription handshake: echo hub.challenge back.
      const challenge = new URL(req.url ?? '/', 'http://x').searchParams.get('hub.challenge');
      if (req.method === 'GET' && challenge) return void res.end(challenge);
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        this.captured.push({ path: req.url ?? '/', headers: req.headers, raw: Buffer.concat(chunks).toString('utf8') });
        res.statusCode = this.answer(this.captured.length);
        res.end('ok');
      });
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.base = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async waitFor(pred: (c: Captured[]) => boolean, timeoutMs = 3000): Promise<Captured[]> {
    const until = Date.now() + timeoutMs;
    while (!pred(this.captured)) {
      if (Date.now() > until) throw new Error(`receiver timed out; got ${JSON.stringify(this.captured.map((c) => c.path))}`);
      await new Promise((r) => setTimeout(r, 10));
    }
    return this.captured;
  }

  on(path: string): Captured[] {
    return this.captured.filter((c) => c.path.startsWith(path));
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((r) => this.server.close(() => r()));
  }
}

const form = (c: Captured): Record<string, string> => Object.fromEntries(new URLSearchParams(c.raw));
const waStatuses = (cs: Captured[]): Array<Record<string, any>> =>
  cs.flatMap((c) => JSON.parse(c.raw).entry[0].changes[0].value.statuses ?? []);

let sim: Simulator;
let running: RunningSimulator;
const receiver = new Receiver();
let sms: SmsGatewayClient;
let wa: WhatsAppCloudClient;

/** GET without a body, POST with one. */
async function control(path: string, body?: unknown): Promise<any> {
  const res = await fetch(`${running.url}/_sim${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return res.json();
}

before(async () => {
  await receiver.start();
  // A hung gateway must outlast the client's timeout, whose timer has about a second of resolution (undici's fast timers).
  sim = createSimulator({ logger: pino({ level: 'silent' }), receiptDelayMs: 20, timeoutFaultMs: 2500 });
  running = await sim.listen(0);
  sms = new SmsGatewayClient({ baseUrl: `${running.url}/sms`, accountSid: SMS_SID, authToken: SMS_TOKEN, timeoutMs: 2000 });
  wa = new WhatsAppCloudClient({ baseUrl: `${running.url}/whatsapp/v21.0`, accessToken: WA_TOKEN, timeoutMs: 2000 });
});

after(async () => {
  await running.close();
  await receiver.close();
});

beforeEach(async () => {
  await control('/reset', {});
  await control('/config', { receiptDelayMs: 20, smsInboundUrl: `${receiver.base}/sms/inbound`, waWebhookUrl: `${receiver.base}/wa` });
  receiver.captured = [];
  receiver.answer = () => 200;
});

describe('SMS gateway', () => {
  test('send → signed sent/delivered receipts that verifyTwilioSignature accepts', async () => {
    const callback = `${receiver.base}/sms/status?tenant=7`;
    const res = await sms.send({ to: '255 700 111 222', from: 'ACME', body: 'hello', statusCallback: callback, idempotencyKey: 'k-1' });
    assert.ok(res.ok, JSON.stringify(res));
    assert.match(res.value.providerMessageId, /^SM[0-9a-f]{32}$/);
    assert.equal(res.value.status, 'queued');
    assert.equal(res.value.segments, 1);

    await receiver.waitFor(() => receiver.on('/sms/status').length === 2);
    await sim.idle();
    const receipts = receiver.on('/sms/status');
    // Exactly two: Twilio sends no callback for the initial queued status.
    assert.deepEqual(
      receipts.map((c) => form(c).MessageStatus),
      ['sent', 'delivered'],
    );
    for (const r of receipts) {
      const params = form(r);
      assert.equal(params.MessageSid, res.value.providerMessageId);
      assert.equal(params.To, '+255700111222');
      const sig = r.headers['x-twilio-signature'] as string;
      assert.ok(verifyTwilioSignature(SMS_TOKEN, `${receiver.base}${r.path}`, params, sig));
      assert.equal(verifyTwilioSignature(SMS_TOKEN, `${receiver.base}${r.path}`, { ...params, MessageStatus: 'failed' }, sig), false);
      assert.equal(verifyTwilioSignature('other-token', `${receiver.base}${r.path}`, params, sig), false);
      assert.equal(verifyTwilioSignature(SMS_TOKEN, `${receiver.base}${r.path}`, params, undefined), false);
    }
    const status = await sms.fetchStatus(res.value.providerMessageId);
    assert.deepEqual(status, { ok: true, value: { status: 'delivered', errorCode: null } });
  });

  test('a repeated idempotency token returns the same message and is not a second send', async () => {
    const req = { to: '+255700111223', from: '+15005550006', body: 'once', idempotencyKey: 'same-key' };
    const a = await sms.send(req);
    const b = await sms.send(req);
    assert.ok(a.ok && b.ok);
    assert.equal(b.value.providerMessageId, a.value.providerMessageId);
    const list = await control('/sms/messages?to=255700111223');
    assert.equal(list.count, 1);
    assert.equal(list.messages[0].duplicates, 1);
    assert.equal(list.messages[0].request.headers['i-twilio-idempotency-token'], 'same-key');
  });

  test('numbers ending 0000 end undelivered with 30003', async () => {
    const res = await sms.send({ to: '+255700110000', from: 'ACME', body: 'x', statusCallback: `${receiver.base}/s`, idempotencyKey: 'u' });
    assert.ok(res.ok);
    await receiver.waitFor((c) => c.length === 2);
    const last = form(receiver.captured[1]!);
    assert.equal(last.MessageStatus, 'undelivered');
    assert.equal(last.ErrorCode, '30003');
    assert.deepEqual(await sms.fetchStatus(res.value.providerMessageId), {
      ok: true,
      value: { status: 'undelivered', errorCode: '30003' },
    });
  });

  test('invalid number, opt-out and bad credentials are permanent failures', async () => {
    const bad = await sms.send({ to: '12345', from: 'ACME', body: 'x', idempotencyKey: 'a' });
    assert.ok(!bad.ok);
    assert.equal(bad.code, '21211');
    assert.equal(bad.permanent, true);

    await control('/config', { optOuts: ['+255700999888'] });
    const optedOut = await sms.send({ to: '255700999888', from: 'ACME', body: 'x', idempotencyKey: 'b' });
    assert.ok(!optedOut.ok);
    assert.equal(optedOut.code, '21610');
    assert.equal(optedOut.permanent, true);

    const wrong = new SmsGatewayClient({ baseUrl: `${running.url}/sms`, accountSid: SMS_SID, authToken: 'nope' });
    const denied = await wrong.send({ to: '+255700111222', from: 'ACME', body: 'x', idempotencyKey: 'c' });
    assert.ok(!denied.ok);
    assert.deepEqual([denied.code, denied.httpStatus, denied.permanent], ['20003', 401, true]);
  });

  test('http_500 fault fails once, then the retry with the same key succeeds', async () => {
    await control('/faults', { provider: 'sms', kind: 'http_500' });
    const req = { to: '+255700111224', from: 'ACME', body: 'retry me', idempotencyKey: 'r-1' };
    const first = await sms.send(req);
    assert.ok(!first.ok);
    assert.deepEqual([first.permanent, first.httpStatus], [false, 500]);
    const second = await sms.send(req);
    assert.ok(second.ok);
    const list = await control('/sms/messages');
    assert.equal(list.count, 1);
    const rejections = await control('/rejections?provider=sms');
    assert.equal(rejections.rejections[0].fault, 'http_500');
  });

  test('http_429 maps to retryable with retryAfterSeconds; a hanging gateway times out retryably', async () => {
    await control('/faults', { provider: 'sms', kind: 'http_429', retryAfter: 7 });
    const limited = await sms.send({ to: '+255700111225', from: 'ACME', body: 'x', idempotencyKey: 't' });
    assert.ok(!limited.ok);
    assert.deepEqual([limited.permanent, limited.retryAfterSeconds, limited.code], [false, 7, '20429']);

    await control('/faults', { provider: 'sms', kind: 'timeout', to: '+255700111226' });
    const impatient = new SmsGatewayClient({ baseUrl: `${running.url}/sms`, accountSid: SMS_SID, authToken: SMS_TOKEN, timeoutMs: 100 });
    const hung = await impatient.send({ to: '+255700111226', from: 'ACME', body: 'x', idempotencyKey: 'h' });
    assert.ok(!hung.ok);
    assert.deepEqual([hung.code, hung.permanent], ['timeout', false]);
  });

  test('no_receipt keeps the message at sent with no callbacks; unknown sid is permanent', async () => {
    await control('/faults', { provider: 'sms', kind: 'no_receipt' });
    const res = await sms.send({ to: '+255700111227', from: 'ACME', body: 'x', statusCallback: `${receiver.base}/s`, idempotencyKey: 'n' });
    assert.ok(res.ok);
    await new Promise((r) => setTimeout(r, 120));
    assert.deepEqual(await sms.fetchStatus(res.value.providerMessageId), { ok: true, value: { status: 'sent', errorCode: null } });
    assert.equal(receiver.captured.length, 0);
    const missing = await sms.fetchStatus('SM00000000000000000000000000000000');
    assert.ok(!missing.ok);
    assert.deepEqual([missing.code, missing.permanent], ['20404', true]);
  });

  test('receipts are retried while the receiver answers 5xx', async () => {
    receiver.answer = (n) => (n === 1 ? 503 : 200);
    const res = await sms.send({
      to: '+255700111228',
      from: 'ACME',
      body: 'x',
      statusCallback: `${receiver.base}/s`,
      idempotencyKey: 'cb',
    });
    assert.ok(res.ok);
    await receiver.waitFor((c) => c.length === 3);
    await sim.idle();
    const { callbacks } = await control(`/callbacks?messageId=${res.value.providerMessageId}`);
    assert.deepEqual(
      callbacks.map((c: any) => [c.body.MessageStatus, c.attempts.length, c.delivered]),
      [
        ['sent', 2, true],
        ['delivered', 1, true],
      ],
    );
  });

  test('inbound SMS is signed; STOP opts the sender out', async () => {
    const out = await control('/sms/inbound', { from: '+255700555666', to: '+15005550006', body: 'STOP' });
    assert.equal(out.delivered, true);
    const [hook] = await receiver.waitFor((c) => c.length === 1);
    const params = form(hook!);
    assert.equal(params.Body, 'STOP');
    assert.equal(params.OptOutType, 'STOP');
    assert.ok(verifyTwilioSignature(SMS_TOKEN, `${receiver.base}/sms/inbound`, params, hook!.headers['x-twilio-signature'] as string));
    const blocked = await sms.send({ to: '+255700555666', from: '+15005550006', body: 'hi', idempotencyKey: 's' });
    assert.ok(!blocked.ok);
    assert.equal(blocked.code, '21610');
  });

  test('network failure is retryable', async () => {
    const nowhere = new SmsGatewayClient({ baseUrl: 'http://127.0.0.1:9/sms', accountSid: SMS_SID, authToken: SMS_TOKEN, timeoutMs: 1000 });
    const res = await nowhere.send({ to: '+255700111229', from: 'ACME', body: 'x', idempotencyKey: 'net' });
    assert.ok(!res.ok);
    assert.equal(res.permanent, false);
  });

  test("signTwilio matches Twilio's documented worked example", () => {
    const params = { CallSid: 'CA1234567890ABCDE', Caller: '+12349013030', Digits: '1234', From: '+12349013030', To: '+18005551212' };
    assert.equal(signTwilio('12345', 'https://mycompany.com/myapp.php?foo=1&bar=2', params), '0/KCTR6DLpKmkAf8muzZqo1nDgQ=');
  });

  test('segment counting follows GSM-7 and UCS-2 rules', () => {
    assert.equal(segmentInfo('a'.repeat(160)).segments, 1);
    assert.equal(segmentInfo('a'.repeat(161)).segments, 2);
    assert.equal(segmentInfo('€'.repeat(80)).segments, 1);
    assert.equal(segmentInfo('€'.repeat(81)).segments, 2);
    assert.deepEqual(segmentInfo('ü'.repeat(70)), { encoding: 'GSM-7', units: 70, segments: 1 });
    assert.equal(segmentInfo('ł'.repeat(70)).segments, 1);
    assert.equal(segmentInfo('ł'.repeat(71)).segments, 2);
    assert.deepEqual(segmentInfo('😀'.repeat(35)), { encoding: 'UCS-2', units: 70, segments: 1 });
  });
});

describe('WhatsApp Cloud API', () => {
  const text = (to: string, body = 'hi'): object => ({ messaging_product: 'whatsapp', to, type: 'text', text: { body } });

  test('free-form outside the 24 h window: wamid, then a signed failed 131047 webhook', async () => {
    const res = await wa.send(PHONE_ID, text('+255700222001'), 'w-1');
    assert.ok(res.ok, JSON.stringify(res));
    assert.match(res.value.providerMessageId, /^wamid\./);
    assert.equal(res.value.waId, '255700222001');
    const [hook] = await receiver.waitFor((c) => c.length === 1);
    const sig = hook!.headers['x-hub-signature-256'] as string;
    assert.ok(verifyMetaSignature(WA_SECRET, hook!.raw, sig));
    assert.ok(verifyMetaSignature(WA_SECRET, Buffer.from(hook!.raw), sig));
    assert.equal(verifyMetaSignature(WA_SECRET, hook!.raw.replace('failed', 'read'), sig), false);
    assert.equal(verifyMetaSignature('wrong', hook!.raw, sig), false);
    const payload = JSON.parse(hook!.raw);
    assert.equal(payload.object, 'whatsapp_business_account');
    const [status] = waStatuses([hook!]);
    assert.equal(status!.id, res.value.providerMessageId);
    assert.equal(status!.status, 'failed');
    assert.equal(status!.recipient_id, '255700222001');
    assert.equal(status!.errors[0].code, 131047);
    await sim.idle();
    assert.equal(receiver.captured.length, 1, 'a failed message gets no further statuses');
  });

  test('after an inbound message the window is open: sent → delivered → read', async () => {
    const inbound = await control('/whatsapp/inbound', { from: '+255700222002', phone_number_id: PHONE_ID, text: 'hello' });
    assert.equal(inbound.delivered, true);
    const [hook] = await receiver.waitFor((c) => c.length === 1);
    assert.ok(verifyMetaSignature(WA_SECRET, hook!.raw, hook!.headers['x-hub-signature-256'] as string));
    const value = JSON.parse(hook!.raw).entry[0].changes[0].value;
    assert.deepEqual(value.messages[0].text, { body: 'hello' });
    assert.equal(value.metadata.phone_number_id, PHONE_ID);

    const res = await wa.send(PHONE_ID, { ...text('255700222002'), context: { message_id: inbound.wamid } }, 'w-2');
    assert.ok(res.ok);
    await receiver.waitFor((c) => c.length === 4);
    const statuses = waStatuses(receiver.captured.slice(1));
    assert.deepEqual(
      statuses.map((s) => s.status),
      ['sent', 'delivered', 'read'],
    );
    assert.ok(statuses.every((s) => s.id === res.value.providerMessageId));
  });

  test('templates are allowed outside the window', async () => {
    const res = await wa.send(
      PHONE_ID,
      {
        messaging_product: 'whatsapp',
        to: '255700222003',
        type: 'template',
        template: { name: 'order_update', language: { code: 'en_US' } },
      },
      'w-3',
    );
    assert.ok(res.ok);
    await receiver.waitFor((c) => c.length === 3);
    assert.deepEqual(
      waStatuses(receiver.captured).map((s) => s.status),
      ['sent', 'delivered', 'read'],
    );
  });

  test('invalid bodies are rejected synchronously with Graph codes', async () => {
    const button = (title: string): object => ({
      messaging_product: 'whatsapp',
      to: '255700222004',
      type: 'interactive',
      interactive: { type: 'button', body: { text: 'Pick' }, action: { buttons: [{ type: 'reply', reply: { id: 'a', title } }] } },
    });
    const tooLong = await wa.send(PHONE_ID, button('x'.repeat(21)), 'v-1');
    assert.ok(!tooLong.ok);
    assert.deepEqual([tooLong.code, tooLong.httpStatus, tooLong.permanent], ['131009', 400, true]);
    assert.ok((await wa.send(PHONE_ID, button('x'.repeat(20)), 'v-2')).ok);

    const noBody = await wa.send(PHONE_ID, { messaging_product: 'whatsapp', to: '255700222004', type: 'text', text: {} }, 'v-3');
    assert.ok(!noBody.ok);
    assert.equal(noBody.code, '131008');
    const badType = await wa.send(PHONE_ID, { messaging_product: 'whatsapp', to: '255700222004', type: 'poll', poll: {} }, 'v-4');
    assert.ok(!badType.ok);
    assert.equal(badType.code, '100');
    const list = await control('/whatsapp/messages?to=255700222004');
    assert.equal(list.count, 1, 'rejected sends are not recorded as messages');
  });

  test('registered templates enforce language (132001) and parameter count (132000)', async () => {
    await control('/config', { waTemplates: [{ name: 'otp', languages: ['en'], bodyParams: 1 }] });
    const tpl = (code: string, params: number): object => ({
      messaging_product: 'whatsapp',
      to: '255700222005',
      type: 'template',
      template: {
        name: 'otp',
        language: { code },
        components: [{ type: 'body', parameters: Array.from({ length: params }, () => ({ type: 'text', text: '1' })) }],
      },
    });
    const lang = await wa.send(PHONE_ID, tpl('fr', 1), 't-1');
    assert.ok(!lang.ok);
    assert.deepEqual([lang.code, lang.httpStatus], ['132001', 404]);
    const count = await wa.send(PHONE_ID, tpl('en', 2), 't-2');
    assert.ok(!count.ok);
    assert.equal(count.code, '132000');
    assert.ok((await wa.send(PHONE_ID, tpl('en', 1), 't-3')).ok);
  });

  test('bad token is a permanent 190; throttles and 5xx are retryable', async () => {
    const wrong = new WhatsAppCloudClient({ baseUrl: `${running.url}/whatsapp/v21.0`, accessToken: 'nope' });
    const denied = await wrong.send(PHONE_ID, text('255700222006'), 'a-1');
    assert.ok(!denied.ok);
    assert.deepEqual([denied.code, denied.httpStatus, denied.permanent], ['190', 401, true]);

    await control('/faults', { provider: 'whatsapp', kind: 'http_429', code: 131056 });
    const pair = await wa.send(PHONE_ID, text('255700222006'), 'a-2');
    assert.ok(!pair.ok);
    assert.deepEqual([pair.code, pair.permanent, pair.retryAfterSeconds], ['131056', false, 6]);

    await control('/faults', { provider: 'whatsapp', kind: 'http_500' });
    const down = await wa.send(PHONE_ID, text('255700222006'), 'a-3');
    assert.ok(!down.ok);
    assert.deepEqual([down.code, down.httpStatus, down.permanent], ['131000', 500, false]);

    await control('/config', { waPairBurst: 1, waPairIntervalMs: 60_000 });
    assert.ok((await wa.send(PHONE_ID, text('255700222007'), 'a-4')).ok);
    const burst = await wa.send(PHONE_ID, text('255700222007'), 'a-5');
    assert.ok(!burst.ok);
    assert.deepEqual([burst.code, burst.permanent], ['131056', false]);
    await control('/config', { waPairBurst: 45, waPairIntervalMs: 6000 });
  });

  test('non-WhatsApp numbers fail asynchronously with 131026 even inside the window', async () => {
    await control('/whatsapp/window', { from: '255700220000', phone_number_id: PHONE_ID });
    const res = await wa.send(PHONE_ID, text('255700220000'), 'u-1');
    assert.ok(res.ok);
    await receiver.waitFor((c) => c.length === 1);
    const [status] = waStatuses(receiver.captured);
    assert.deepEqual([status!.status, status!.errors[0].code], ['failed', 131026]);
  });

  test('a repeated idempotency key is flagged as a real second send', async () => {
    const a = await wa.send(
      PHONE_ID,
      { messaging_product: 'whatsapp', to: '255700222008', type: 'template', template: { name: 'x', language: { code: 'en' } } },
      'dup',
    );
    const b = await wa.send(
      PHONE_ID,
      { messaging_product: 'whatsapp', to: '255700222008', type: 'template', template: { name: 'x', language: { code: 'en' } } },
      'dup',
    );
    assert.ok(a.ok && b.ok);
    assert.notEqual(a.value.providerMessageId, b.value.providerMessageId);
    const { messages } = await control('/whatsapp/messages');
    assert.deepEqual(
      messages.map((m: any) => [m.duplicates, m.duplicateOf]),
      [
        [1, null],
        [0, a.value.providerMessageId],
      ],
    );
  });

  test('reset cancels receipts still pending', async () => {
    await control('/config', { receiptDelayMs: 80 });
    assert.ok((await wa.send(PHONE_ID, text('255700222009'), 'z')).ok);
    await control('/reset', {});
    await new Promise((r) => setTimeout(r, 150));
    assert.equal(receiver.captured.length, 0);
  });

  test('out_of_order status mode sends read before delivered; recorded status never downgrades', async () => {
    await control('/config', { waStatusMode: 'out_of_order' });
    await control('/whatsapp/window', { from: '255700222010', phone_number_id: PHONE_ID });
    const res = await wa.send(PHONE_ID, text('255700222010'), 'o');
    assert.ok(res.ok);
    await receiver.waitFor((c) => c.length === 3);
    assert.deepEqual(
      waStatuses(receiver.captured).map((s) => s.status),
      ['sent', 'read', 'delivered'],
    );
    const { messages } = await control('/whatsapp/messages?to=255700222010');
    assert.equal(messages[0].status, 'read');
  });

  test('webhook verification handshake', async () => {
    const out = await control('/whatsapp/verify', { verify_token: 'tok' });
    assert.equal(out.echoed, true);
    assert.match(out.url, /hub\.verify_token=tok/);
  });
});

describe('inspection and background work', () => {
  test('?limit caps the listed records while count stays the total; a bad limit is a 400', async () => {
    for (const i of [1, 2, 3])
      assert.ok((await sms.send({ to: `+25570011130${i}`, from: 'ACME', body: 'x', idempotencyKey: `l-${i}` })).ok);
    const all = await control('/sms/messages');
    assert.equal(all.count, 3);
    assert.equal(all.messages.length, 3);
    assert.deepEqual(await control('/sms/messages?limit=0'), { count: 3, messages: [] });
    const one = await control('/sms/messages?limit=1');
    assert.deepEqual([one.count, one.messages.map((m: any) => m.sid)], [3, [all.messages[0].sid]]);
    assert.equal((await control('/sms/messages?limit=0&to=255700111302')).count, 1);
    assert.deepEqual((await control('/callbacks?limit=0')).callbacks, []);
    const res = await fetch(`${running.url}/_sim/sms/messages?limit=-1`);
    assert.equal(res.status, 400);
  });

  test('the callback log keeps only the newest records (callbackLogLimit)', async () => {
    const small = createSimulator({ logger: pino({ level: 'silent' }), receiptDelayMs: 5, callbackLogLimit: 4 });
    const up = await small.listen(0);
    try {
      const client = new SmsGatewayClient({ baseUrl: `${up.url}/sms`, accountSid: SMS_SID, authToken: SMS_TOKEN, timeoutMs: 2000 });
      // One message at a time, each one's receipts finished before the next send: receipts of
      // messages in flight together race (a message's delivered receipt waits for its sent receipt's
      // POST, so a slow POST for n=5 logs its delivery after n=6's), and which of them is "newest"
      // would then be the scheduler's choice. Sequential, the log's order is the sends' order.
      for (const i of [1, 2, 3, 4, 5, 6]) {
        assert.ok(
          (
            await client.send({
              to: `+25570011140${i}`,
              from: 'ACME',
              body: 'x',
              statusCallback: `${receiver.base}/sms/status?n=${i}`,
              idempotencyKey: `cap-${i}`,
            })
          ).ok,
        );
        await small.idle();
      }
      // 12 records with a limit of 4: trimmed to the newest 4 whenever the log passes 5 (4 + a quarter).
      assert.deepEqual(
        small.state.callbacks.map((c) => `${c.url.replace(receiver.base, '')} ${(c.body as Record<string, string>).MessageStatus}`),
        ['/sms/status?n=5 sent', '/sms/status?n=5 delivered', '/sms/status?n=6 sent', '/sms/status?n=6 delivered'],
      );
      assert.ok(small.state.callbacks.every((c) => c.delivered));
      assert.equal(receiver.on('/sms/status').length, 12, 'every receipt was still posted');
    } finally {
      await up.close();
    }
  });

  // undici's headers/body timers tick about once a second, so a 150 ms limit ends an attempt within ~1 s.
  test('a hanging receiver costs one timed-out attempt per try; reset cancels what is pending', async () => {
    // Accepts the connection and never answers.
    const hung = createServer(() => {});
    await new Promise<void>((r) => hung.listen(0, '127.0.0.1', r));
    const hungUrl = `http://127.0.0.1:${(hung.address() as AddressInfo).port}/s`;
    const local = createSimulator({ logger: pino({ level: 'silent' }), receiptDelayMs: 10, callbackTimeoutMs: 150, callbackRetries: 0 });
    const up = await local.listen(0);
    try {
      const client = new SmsGatewayClient({ baseUrl: `${up.url}/sms`, accountSid: SMS_SID, authToken: SMS_TOKEN });
      const res = await client.send({ to: '+255700111310', from: 'ACME', body: 'x', statusCallback: hungUrl, idempotencyKey: 'hang' });
      assert.ok(res.ok);
      const started = Date.now();
      await local.idle();
      // sent, then delivered: one attempt each (no retries configured), each ended by the timeout.
      const [sent, delivered] = local.state.callbacks;
      for (const cb of [sent!, delivered!]) {
        assert.equal(cb.delivered, false);
        assert.equal(cb.attempts.length, 1);
        assert.ok(
          cb.attempts.every((a) => a.statusCode === null && /timeout/i.test(a.error ?? '')),
          JSON.stringify(cb.attempts),
        );
      }
      assert.ok(Date.now() - started >= 2 * 150, 'each attempt waited for its timeout');

      // Now a reset while an attempt is in flight: it ends at once and nothing is retried later.
      const again = await client.send({ to: '+255700111311', from: 'ACME', body: 'x', statusCallback: hungUrl, idempotencyKey: 'hang-2' });
      assert.ok(again.ok);
      while (!local.state.callbacks.some((c) => c.messageId === again.value.providerMessageId)) await new Promise((r) => setTimeout(r, 5));
      const t0 = Date.now();
      local.state.reset();
      await local.idle();
      assert.ok(Date.now() - t0 < 100, `idle after reset took ${Date.now() - t0} ms`);
      await new Promise((r) => setTimeout(r, 200));
      assert.equal(local.state.callbacks.length, 0);
      assert.equal(local.state.sms.messages.length, 0);
    } finally {
      await up.close();
      hung.closeAllConnections();
      await new Promise((r) => hung.close(() => r(undefined)));
    }
  });

  test('a receiver that is down is retried with backoff and the refusal recorded', async () => {
    const res = await sms.send({
      to: '+255700111312',
      from: 'ACME',
      body: 'x',
      statusCallback: 'http://127.0.0.1:9/s',
      idempotencyKey: 'down',
    });
    assert.ok(res.ok);
    await sim.idle();
    const { callbacks } = await control(`/callbacks?messageId=${res.value.providerMessageId}`);
    assert.equal(callbacks.length, 2);
    for (const cb of callbacks) {
      assert.equal(cb.delivered, false);
      assert.equal(cb.attempts.length, 4, 'first try plus callbackRetries (3)');
      assert.ok(
        cb.attempts.every((a: any) => a.statusCode === null && a.error === 'ECONNREFUSED'),
        JSON.stringify(cb.attempts),
      );
    }
  });
});
