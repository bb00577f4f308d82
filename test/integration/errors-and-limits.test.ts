import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import net from 'node:net';
import { api, http, newTenant, API_URL } from '../support/stack.js';
import { waitForPort } from '../../temporal/dev-server.js';

const noLeak = (text: string) => {
  assert.doesNotMatch(text, /\bat .+\.(ts|js):\d+/, 'no stack trace');
  assert.doesNotMatch(text, /select |insert into|relation "|syntax error at/i, 'no SQL');
};

test('unknown paths are 404 and wrong methods 405, both in the v3 envelope', async () => {
  const t = await newTenant();
  const missing = await api('GET', '/api/v3/no-such-thing', t.token);
  assert.equal(missing.status, 404);
  assert.equal(missing.body.status, 'error');
  const wrong = await api('DELETE', '/api/v3/me', t.token);
  assert.equal(wrong.status, 405);
  assert.equal(wrong.body.status, 'error');
  assert.match(wrong.headers.get('allow') ?? '', /GET/);
  const root = await http('PUT', '/');
  assert.equal(root.status, 404);
  assert.equal(root.body.status, 'error');
});

test('malformed JSON is 400, a non-object body 400, an oversized body 413, never a 500', async () => {
  const t = await newTenant();
  const bad = await http('POST', '/api/v3/sms/send', {
    token: t.token,
    raw: '{"recipient": ',
    headers: { 'content-type': 'application/json' },
  });
  assert.equal(bad.status, 400);
  assert.equal(bad.body.status, 'error');
  noLeak(bad.text);
  const arr = await http('POST', '/api/v3/sms/send', { token: t.token, raw: '[1,2]', headers: { 'content-type': 'application/json' } });
  assert.equal(arr.status, 400);
  const big = await http('POST', '/api/v3/sms/send', {
    token: t.token,
    raw: JSON.stringify({ message: 'x'.repeat(2 * 1024 * 1024) }),
    headers: { 'content-type': 'application/json' },
  });
  assert.equal(big.status, 413);
  assert.equal(big.body.status, 'error');
});

test('validation errors are 422 with errors keyed by field', async () => {
  const t = await newTenant();
  const r = await api('POST', '/api/v3/sms/send', t.token, {
    recipient: 'x'.repeat(4001),
    message: 'y'.repeat(4097),
    sender_id: 'z'.repeat(65),
    recipients: ['1'.repeat(192)],
  });
  assert.equal(r.status, 422);
  assert.equal(r.body.status, 'error');
  assert.ok(r.body.errors.recipient);
  assert.ok(r.body.errors.message);
  assert.ok(r.body.errors.sender_id);
  assert.ok(r.body.errors['recipients.0']);
  const none = await api('POST', '/api/v3/sms/send', t.token, { recipient: ' ,; ', message: 'hi' });
  assert.equal(none.status, 422);
  assert.ok(none.body.errors.recipient);
  const wrongType = await api('POST', '/api/v3/sms/send', t.token, { recipient: 5, message: 'hi' });
  assert.equal(wrongType.status, 422);
  noLeak(wrongType.text);
});

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const p = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(p));
    });
  });
}

test('120 requests per minute per token, counted across two API processes', async () => {
  const port = await freePort();
  const second = spawn(process.execPath, ['--import', 'tsx', 'api/main.ts'], {
    env: { ...process.env, PORT: String(port), LOG_LEVEL: 'error' },
    stdio: 'ignore',
  });
  try {
    await waitForPort(port, 120_000, second);
    const other = `http://127.0.0.1:${port}`;
    const t = await newTenant();
    const bystander = await newTenant();
    // Start at the top of a fresh minute so the window cannot roll over mid-test.
    const intoMinute = Date.now() % 60_000;
    if (intoMinute > 45_000) await new Promise((r) => setTimeout(r, 60_000 - intoMinute + 100));
    let last: Awaited<ReturnType<typeof http>> | null = null;
    for (let i = 0; i < 120; i++) {
      last = await http('GET', `${i % 2 ? other : API_URL}/api/v3/me`, { token: t.token });
      assert.equal(last.status, 200, `request ${i + 1}`);
      assert.equal(last.headers.get('x-ratelimit-limit'), '120');
    }
    assert.equal(last!.headers.get('x-ratelimit-remaining'), '0');
    for (const base of [API_URL, other]) {
      const refused = await http('GET', `${base}/api/v3/me`, { token: t.token });
      assert.equal(refused.status, 429);
      assert.equal(refused.body.status, 'error');
      assert.ok(Number(refused.headers.get('retry-after')) >= 1);
      assert.ok(Number(refused.headers.get('x-ratelimit-reset')) > Date.now() / 1000);
    }
    const fine = await http('GET', `${other}/api/v3/me`, { token: bystander.token });
    assert.equal(fine.status, 200, 'another token has its own budget');
    assert.equal(fine.headers.get('x-ratelimit-remaining'), '119');
  } finally {
    second.kill('SIGTERM');
  }
});
