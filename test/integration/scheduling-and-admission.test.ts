import { test } from 'node:test';
import assert from 'node:assert/strict';
import { http, newTenant, eventually, sim, uniquePhone } from '../support/stack.js';
import { privateStack } from '../support/private-stack.js';

const num = () => uniquePhone('2555');

test(
  'a future schedule_time answers queued and the durable timer sends it when due, across a worker crash',
  { timeout: 120_000 },
  async () => {
    const stack = await privateStack();
    try {
      const t = await newTenant();
      const due = new Date(Date.now() + 6000);
      const offset = due.toISOString().replace('Z', '+00:00');
      const r = await http('POST', `${stack.apiUrl}/api/v3/sms/send`, {
        token: t.token,
        body: { recipient: num(), message: 'later', schedule_time: offset },
      });
      assert.equal(r.status, 201);
      const m = r.body.data.messages[0];
      assert.equal(m.status, 'queued');
      await stack.killWorker();
      await new Promise((res) => setTimeout(res, 8000));
      const waiting = await http('GET', `${stack.apiUrl}/api/v3/sms/${m.uid}`, { token: t.token });
      assert.equal(waiting.body.data.status, 'queued', 'nothing sends while no worker runs');
      stack.startWorker();
      const done = await eventually(
        () => http('GET', `${stack.apiUrl}/api/v3/sms/${m.uid}`, { token: t.token }),
        (x) => x.body.data.status === 'delivered',
        60_000,
      );
      assert.equal(done.body.data.status, 'delivered');
      assert.ok(new Date(done.body.data.sent_at).getTime() >= due.getTime() - 50);
    } finally {
      await stack.stop();
    }
  },
);

test('a past schedule_time sends at once', async () => {
  const t = await newTenant();
  const r = await http('POST', '/api/v3/sms/send', {
    token: t.token,
    body: { recipient: num(), message: 'past', schedule_time: '2020-01-01T00:00:00+03:00' },
  });
  assert.equal(r.status, 201);
  // Not held as scheduled. Whether the answer waited for the first outcome (sent) or was queued for the
  // batch dispatcher depends on how busy the shared API is (other test files run beside this one).
  const m = r.body.data.messages[0];
  assert.ok(['queued', 'sent', 'delivered'].includes(m.status), m.status);
  const done = await eventually(
    () => http('GET', `/api/v3/sms/${m.uid}`, { token: t.token }),
    (x) => ['sent', 'delivered'].includes(x.body.data.status),
    10_000,
  );
  assert.ok(['sent', 'delivered'].includes(done.body.data.status));
});

test('admission control: past the channel throughput the rest answer queued and drain', { timeout: 120_000 }, async () => {
  const stack = await privateStack({ SMS_MAX_PER_SECOND: '2', FIRST_OUTCOME_WAIT_MS: '1500' });
  try {
    const t = await newTenant();
    // Enough recipients that the first-outcome wait runs out whatever burst the provider queue's rate
    // limiter lets through at first (seen: seven of eight dispatched inside the 1.5 s wait).
    const recipients = Array.from({ length: 20 }, num);
    const r = await http('POST', `${stack.apiUrl}/api/v3/sms/send`, { token: t.token, body: { recipients, message: 'burst' } });
    assert.equal(r.status, 201);
    const statuses = r.body.data.messages.map((m: any) => m.status);
    assert.ok(statuses.filter((s: string) => s === 'queued').length >= 3, statuses.join(','));
    const all = await eventually(
      () => http('GET', `${stack.apiUrl}/api/v3/messages?per_page=100`, { token: t.token }),
      (x) => x.body.data?.messages.every((m: any) => m.status === 'delivered'),
      60_000,
      1000,
    );
    assert.deepEqual(
      all.body.data.messages.map((m: any) => m.status),
      Array(recipients.length).fill('delivered'),
    );
    for (const to of recipients) {
      const seen = await sim('GET', `/_sim/sms/messages?to=${encodeURIComponent(to)}`);
      assert.equal(seen.body.messages.length, 1);
    }
  } finally {
    await stack.stop();
  }
});

test(
  'under load immediate sends skip their own workflow: answered queued at once, sent exactly once by the batch dispatcher',
  { timeout: 120_000 },
  async () => {
    const stack = await privateStack({ FIRST_OUTCOME_CONCURRENCY: '0' });
    try {
      const t = await newTenant();
      const recipients = Array.from({ length: 20 }, num);
      const started = Date.now();
      const r = await http('POST', `${stack.apiUrl}/api/v3/sms/send`, { token: t.token, body: { recipients, message: 'batched' } });
      assert.equal(r.status, 201);
      assert.ok(Date.now() - started < 2000);
      assert.deepEqual([...new Set(r.body.data.messages.map((m: any) => m.status))], ['queued']);
      const all = await eventually(
        () => http('GET', `${stack.apiUrl}/api/v3/messages?per_page=100`, { token: t.token }),
        (x) => x.body.data?.messages.every((m: any) => m.status === 'delivered'),
        60_000,
        1000,
      );
      assert.equal(all.body.data.messages.filter((m: any) => m.status === 'delivered').length, 20);
      assert.ok(all.body.data.messages.every((m: any) => /^SM/.test(m.gateway_message_id)));
      for (const to of recipients)
        assert.equal((await sim('GET', `/_sim/sms/messages?to=${encodeURIComponent(to)}`)).body.messages.length, 1);
    } finally {
      await stack.stop();
    }
  },
);
