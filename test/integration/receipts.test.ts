import { test } from 'node:test';
import nodeHttp from 'node:http';
import assert from 'node:assert/strict';
import { api, http, newTenant, eventually, sim, uniquePhone } from '../support/stack.js';
import { signTwilio } from '../../providers/sms-gateway/signature.js';
import { loadConfig } from '../../config.js';

const num = () => uniquePhone('2554');
const config = loadConfig();
const read = (t: { token: string }, uid: string) => api('GET', `/api/v3/sms/${uid}`, t.token);

async function postReceipt(uid: string, params: Record<string, string>, sign = true) {
  const url = `${process.env.API_URL}/providers/sms/status?m=${encodeURIComponent(uid)}`;
  const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' };
  if (sign) headers['x-twilio-signature'] = signTwilio(config.smsGatewayAuthToken, url, params);
  return http('POST', url, { raw: new URLSearchParams(params).toString(), headers });
}

/**
 * A POST read the way a provider's HTTP client does: the answer is taken when it arrives, even when
 * the server answers (413) and closes before the whole body is sent. fetch (undici) may instead
 * report "other side closed" for such an early answer, depending on timing: a flaky test.
 */
function postEarlyAnswer(url: string, body: string): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    let answered = false;
    const req = nodeHttp.request(
      url,
      { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', 'content-length': Buffer.byteLength(body) } },
      (res) => {
        answered = true;
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
        res.on('error', reject);
      },
    );
    // Writing after the server closed fails (EPIPE, reset); that is expected once it has answered.
    req.on('error', (err) => (answered ? undefined : reject(err)));
    req.end(body);
  });
}

test('receipts: unsigned or tampered receipts are refused; duplicates and late ones never move a status back', async () => {
  const t = await newTenant();
  const sent = await api('POST', '/api/v3/sms/send', t.token, { recipient: num(), message: 'r' });
  const m = sent.body.data.messages[0];
  const delivered = await eventually(
    () => read(t, m.uid),
    (r) => r.body.data.status === 'delivered',
  );
  assert.equal(delivered.body.data.status, 'delivered');
  const params = { MessageSid: delivered.body.data.gateway_message_id, MessageStatus: 'sent' };
  const unsigned = await postReceipt(m.uid, { ...params, MessageStatus: 'failed' }, false);
  assert.equal(unsigned.status, 403);
  const late = await postReceipt(m.uid, params);
  assert.equal(late.status, 204);
  const again = await postReceipt(m.uid, { ...params, MessageStatus: 'delivered' });
  assert.equal(again.status, 204);
  const failedLate = await postReceipt(m.uid, { ...params, MessageStatus: 'undelivered', ErrorCode: '30003' });
  assert.equal(failedLate.status, 204);
  const after = await read(t, m.uid);
  assert.equal(after.body.data.status, 'delivered');
  assert.equal(after.body.data.delivered_at, delivered.body.data.delivered_at, 'a duplicate keeps the first delivered_at');
  assert.equal(after.body.data.error_message, null);
});

test('an undeliverable number ends failed with the provider error', async () => {
  const t = await newTenant();
  const sent = await api('POST', '/api/v3/sms/send', t.token, { recipient: `${num().slice(0, -4)}0000`, message: 'x' });
  const m = sent.body.data.messages[0];
  const r = await eventually(
    () => read(t, m.uid),
    (x) => x.body.data.status === 'failed',
  );
  assert.equal(r.body.data.status, 'failed');
  assert.match(r.body.data.error_message, /30003/);
});

test('no receipt: the message goes to checking_delivery and the workflow polls the gateway', async () => {
  const t = await newTenant();
  const to = num();
  await sim('POST', '/_sim/faults', { provider: 'sms', kind: 'no_receipt', to });
  const sent = await api('POST', '/api/v3/sms/send', t.token, { recipient: to, message: 'quiet' });
  const m = sent.body.data.messages[0];
  // Sent at once, the message's own workflow moves it after RECEIPT_TIMEOUT_SECONDS (5 s here). Sent by
  // the batch dispatcher (admission under the suite's load), the dispatcher's sweep does, which runs
  // between its streaming activities (up to 30 s each): polled once a second, below the key's
  // 120 requests a minute, for up to 60 s.
  const r = await eventually(
    () => read(t, m.uid),
    (x) => x.body.data?.status === 'checking_delivery',
    60_000,
    1000,
  );
  assert.equal(r.body.data?.status, 'checking_delivery', JSON.stringify(r.body));
  const polls = await eventually(
    async () => (await sim('GET', `/_sim/callbacks?provider=sms`)).body,
    () => true,
  );
  assert.ok(polls);
});

test('transient provider errors are retried with backoff and the message goes out once', async () => {
  const t = await newTenant();
  const to = num();
  await sim('POST', '/_sim/faults', { provider: 'sms', kind: 'http_500', to, count: 2 });
  const sent = await api('POST', '/api/v3/sms/send', t.token, { recipient: to, message: 'retry me' });
  const m = sent.body.data.messages[0];
  const r = await eventually(
    () => read(t, m.uid),
    (x) => x.body.data.status === 'delivered',
    30_000,
  );
  assert.equal(r.body.data.status, 'delivered');
  const seen = await sim('GET', `/_sim/sms/messages?to=${encodeURIComponent(to)}`);
  assert.equal(seen.body.messages.length, 1);
  const rejected = await sim('GET', `/_sim/rejections?provider=sms&to=${encodeURIComponent(to)}`);
  assert.equal(rejected.body.rejections.length, 2);
});

test('a permanent provider refusal is not retried', async () => {
  const t = await newTenant();
  const to = num();
  await sim('POST', '/_sim/faults', { provider: 'sms', kind: 'error', code: 21211, to, count: 5 });
  const sent = await api('POST', '/api/v3/sms/send', t.token, { recipient: to, message: 'no' });
  assert.equal(sent.body.data.messages[0].status, 'failed');
  const rejected = await sim('GET', `/_sim/rejections?provider=sms&to=${encodeURIComponent(to)}`);
  assert.equal(rejected.body.rejections.length, 1, 'tried once');
});

test('the receipt path answers its refusals in the v3 envelope: bad signature 403, oversized 413, wrong method 405', async () => {
  const bad = await postReceipt('msg_unknown', { MessageSid: 'SMnope', MessageStatus: 'delivered' }, false);
  assert.equal(bad.status, 403);
  assert.deepEqual(bad.body, { status: 'error', message: 'Invalid provider signature.' });

  const huge = { MessageSid: 'SMbig', MessageStatus: 'delivered', Body: 'x'.repeat(config.bodyLimitBytes + 10) };
  const big = await postEarlyAnswer(`${process.env.API_URL}/providers/sms/status?m=msg_unknown`, new URLSearchParams(huge).toString());
  assert.equal(big.status, 413);
  assert.equal(big.body.status, 'error');
  assert.match(big.body.message, /may not be larger than/);

  const get = await http('GET', `${process.env.API_URL}/providers/sms/status?m=x`);
  assert.equal(get.status, 405);
  assert.equal(get.body.status, 'error');

  // A receipt for a message we don't know is acknowledged, so the provider stops retrying.
  const unknown = await postReceipt('msg_unknown', { MessageSid: 'SMunknown', MessageStatus: 'delivered' });
  assert.equal(unknown.status, 204);
});
