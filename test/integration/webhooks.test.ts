import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { admin, api, newTenant, eventually, sim } from '../support/stack.js';
import { receiversOfThisFile } from '../support/receiver.js';
import { createEndpoint, deliveredEvent, runDelivery, closeTemporal } from '../support/webhooks.js';

let seq = 0;
const num = () => `+2556${String(process.pid % 1000).padStart(3, '0')}${String(Date.now() % 10000).padStart(4, '0')}${++seq % 10}`;
const receiver = receiversOfThisFile();
after(closeTemporal);

test('the operator creates, lists, updates, disables, re-enables, rotates and deletes endpoints; the secret is shown once', async () => {
  const t = await newTenant();
  const base = `/accounts/${t.accountId}/webhook-endpoints`;
  const made = await admin('POST', base, { url: 'http://127.0.0.1:9/hook', events: ['message.*', 'order.paid'], description: 'shop' });
  assert.equal(made.status, 201);
  assert.match(made.body.data.secret, /^whsec_/);
  const id = made.body.data.id;
  const list = await admin('GET', base);
  assert.equal(list.body.data.length, 1);
  assert.equal(list.body.data[0].secret, undefined, 'the secret never appears again');
  assert.equal(list.body.data[0].secret_hint, `${made.body.data.secret.slice(0, 10)}…`);
  assert.equal((await admin('POST', base, { url: 'http://x.test/h', events: ['message.nope'] })).status, 422);
  assert.equal((await admin('POST', base, { url: 'ftp://x.test/h' })).status, 422);
  const changed = await admin('PATCH', `${base}/${id}`, { events: ['message.delivered'], url: 'http://127.0.0.1:10/hook' });
  assert.deepEqual([changed.body.data.events, changed.body.data.url], [['message.delivered'], 'http://127.0.0.1:10/hook']);
  const off = await admin('PATCH', `${base}/${id}`, { status: 'disabled' });
  assert.deepEqual([off.body.data.status, off.body.data.disabled_reason], ['disabled', 'Disabled by the operator.']);
  const on = await admin('PATCH', `${base}/${id}`, { status: 'active' });
  assert.deepEqual([on.body.data.status, on.body.data.disabled_reason, on.body.data.consecutive_failures], ['active', null, 0]);
  const rotated = await admin('POST', `${base}/${id}/rotate-secret`, { overlap_hours: 2 });
  assert.notEqual(rotated.body.data.secret, made.body.data.secret);
  const overlapEnds = Date.parse(rotated.body.data.previous_secret_expires_at) - Date.now();
  assert.ok(overlapEnds > 7_100_000 && overlapEnds <= 7_200_000, String(overlapEnds));
  // A fractional overlap is a number of hours like any other (the fuzzer's 2.2250738585e-313 was a 500).
  const halfHour = await admin('POST', `${base}/${id}/rotate-secret`, { overlap_hours: 0.5 });
  assert.equal(halfHour.status, 200, JSON.stringify(halfHour.body));
  const halfEnds = Date.parse(halfHour.body.data.previous_secret_expires_at) - Date.now();
  assert.ok(halfEnds > 1_700_000 && halfEnds <= 1_800_000, String(halfEnds));
  const tiny = await admin('POST', `${base}/${id}/rotate-secret`, { overlap_hours: 2.2250738585e-313 });
  assert.equal(tiny.status, 200, JSON.stringify(tiny.body));
  assert.equal((await admin('DELETE', `${base}/${id}`)).status, 200);
  assert.equal((await admin('GET', `${base}/${id}`)).status, 404);
  assert.equal((await admin('DELETE', `${base}/${id}`)).status, 404);
  assert.equal((await api('GET', `/admin/v1${base}`, t.token)).status, 401, 'an account key never reaches Settings');
});

test(
  'message status changes reach the receiver once each: flat payload, numeric message_id, V1 and V2 signatures; filters apply',
  { timeout: 60_000 },
  async () => {
    const t = await newTenant();
    const all = await receiver();
    const failedOnly = await receiver();
    const ep = await createEndpoint(t.accountId, all.url, ['message.*']);
    await createEndpoint(t.accountId, failedOnly.url, ['message.failed']);
    const refusedTo = num();
    await sim('POST', '/_sim/faults', { provider: 'sms', kind: 'error', code: 21211, to: refusedTo, count: 1 });
    const { message } = await deliveredEvent(t, num(), { listening: true });
    const refused = (await api('POST', '/api/v3/sms/send', t.token, { recipient: refusedTo, message: 'no' })).body.data.messages[0];
    const kinds = (m: { uid: string }) => all.got.filter((r) => r.json.uid === m.uid).map((r) => r.json.event);
    await eventually(
      async () => kinds(message),
      (k) => k.includes('message.delivered') && k.includes('message.sent'),
    );
    await eventually(
      async () => failedOnly.got.length,
      (n) => n === 1,
    );
    await new Promise((r) => setTimeout(r, 1500)); // anything duplicated or misrouted would arrive now
    assert.deepEqual(kinds(message).sort(), ['message.delivered', 'message.sent']);
    assert.deepEqual(kinds(refused), ['message.failed']);
    assert.equal(failedOnly.got.length, 1, 'the message.failed-only endpoint got the failure and nothing else');
    const hook = all.got.find((r) => r.json.uid === message.uid && r.json.event === 'message.delivered')!;
    assert.deepEqual(Object.keys(hook.json).slice(0, 3), ['event_id', 'event', 'occurred_at']);
    assert.equal(hook.json.message_id, message.id);
    assert.equal(typeof hook.json.message_id, 'number');
    assert.deepEqual([hook.json.status, hook.json.channel_type, hook.json.recipient], ['delivered', 'sms', message.recipient]);
    assert.match(hook.json.event_id, /^evt_/);
    assert.equal(hook.headers['webhook-id'], hook.json.event_id);
    assert.equal(hook.headers['x-signature'], crypto.createHmac('sha256', ep.secret).update(hook.body).digest('hex'));
    assert.equal(hook.headers['x-signature-v2'], hook.headers['webhook-signature']);
    assert.deepEqual(new Webhook(ep.secret).verify(hook.body, hook.headers as Record<string, string>), hook.json);
    assert.match(failedOnly.got[0].json.error_message, /21211/);
    const log = await admin('GET', `/accounts/${t.accountId}/webhook-deliveries?event_id=${hook.json.event_id}`);
    assert.equal(log.body.data.length, 1);
    assert.deepEqual([log.body.data[0].status, log.body.data[0].attempt_log[0].status_code], ['succeeded', 200]);
    assert.equal(typeof log.body.data[0].attempt_log[0].latency_ms, 'number');
  },
);

test(
  'a 500 is retried on schedule with the same webhook-id, every attempt is logged, and the operator can redeliver',
  { timeout: 60_000 },
  async () => {
    const t = await newTenant();
    const { event } = await deliveredEvent(t, num());
    const r = await receiver([500, 200]);
    const ep = await createEndpoint(t.accountId, r.url, ['order.paid']); // the relay sends it nothing by itself
    const result = await runDelivery({
      accountId: t.accountId,
      eventId: event.event_id,
      target: { type: 'endpoint', id: ep.id },
      retryDelaysSeconds: [1, 1],
    });
    assert.deepEqual([result.status, result.attempts], ['succeeded', 2]);
    assert.equal(r.got.length, 2);
    assert.ok(r.got[1].at - r.got[0].at >= 950, 'the retry waited for its timer');
    assert.deepEqual(
      r.got.map((g) => g.headers['webhook-id']),
      [event.event_id, event.event_id],
    );
    assert.equal(r.got[0].body, r.got[1].body, 'a retry sends the same payload');
    const log = await admin('GET', `/accounts/${t.accountId}/webhook-deliveries?endpoint_id=${ep.id}`);
    const attempts = log.body.data[0].attempt_log;
    assert.deepEqual(
      attempts.map((a: any) => [a.attempt, a.status_code, a.error]),
      [
        [1, 500, 'HTTP 500'],
        [2, 200, null],
      ],
    );
    assert.equal(attempts[0].response_excerpt, 'refused with 500');
    assert.ok(attempts.every((a: any) => typeof a.latency_ms === 'number' && a.attempted_at));
    const again = await admin('POST', `/accounts/${t.accountId}/events/${event.event_id}/redeliver`, { endpoint_id: ep.id });
    assert.equal(again.status, 202);
    assert.match(again.body.data.deliveries[0].workflow_id, new RegExp(`^webhook/${t.accountId}/${event.event_id}/${ep.id}/redeliver-1$`));
    await eventually(
      async () => r.got.length,
      (n) => n === 3,
    );
    assert.equal(r.got[2].headers['webhook-id'], event.event_id);
    assert.equal((await admin('POST', `/accounts/${t.accountId}/events/evt_missing/redeliver`, {})).status, 404);
  },
);

test('during a rotation overlap both secrets sign; after it only the new one does', { timeout: 60_000 }, async () => {
  const t = await newTenant();
  const { event } = await deliveredEvent(t, num());
  const r = await receiver();
  const ep = await createEndpoint(t.accountId, r.url, ['order.paid']);
  const rotated = await admin('POST', `/accounts/${t.accountId}/webhook-endpoints/${ep.id}/rotate-secret`, { overlap_hours: 1 });
  await runDelivery({ accountId: t.accountId, eventId: event.event_id, target: { type: 'endpoint', id: ep.id } });
  const h = r.got[0];
  assert.equal(String(h.headers['webhook-signature']).split(' ').length, 2);
  for (const secret of [ep.secret, rotated.body.data.secret])
    assert.doesNotThrow(() => new Webhook(secret).verify(h.body, h.headers as Record<string, string>));
  const noOverlap = await admin('POST', `/accounts/${t.accountId}/webhook-endpoints/${ep.id}/rotate-secret`, { overlap_hours: 0 });
  await runDelivery({ accountId: t.accountId, eventId: event.event_id, target: { type: 'endpoint', id: ep.id } });
  const h2 = r.got[1];
  assert.equal(String(h2.headers['webhook-signature']).split(' ').length, 1);
  assert.doesNotThrow(() => new Webhook(noOverlap.body.data.secret).verify(h2.body, h2.headers as Record<string, string>));
  assert.throws(() => new Webhook(rotated.body.data.secret).verify(h2.body, h2.headers as Record<string, string>));
});

test(
  'an endpoint failing without pause is disabled after 20 failed deliveries (410 Gone at once) and the account is told',
  { timeout: 60_000 },
  async () => {
    const t = await newTenant();
    const { event } = await deliveredEvent(t, num());
    const down = await receiver([500]);
    const ep = await createEndpoint(t.accountId, down.url, ['order.paid']);
    const ref = {
      accountId: t.accountId,
      eventId: event.event_id,
      target: { type: 'endpoint' as const, id: ep.id },
      retryDelaysSeconds: [],
    };
    const results = await Promise.all(Array.from({ length: 20 }, () => runDelivery(ref)));
    assert.ok(results.every((x) => x.status === 'failed'));
    const state = (await admin('GET', `/accounts/${t.accountId}/webhook-endpoints/${ep.id}`)).body.data;
    assert.equal(state.status, 'disabled');
    assert.match(state.disabled_reason, /20 deliveries in a row/);
    assert.ok(state.failing_since);
    const skipped = await runDelivery(ref);
    assert.deepEqual(
      [skipped.status, skipped.lastError, down.got.length],
      ['failed', 'endpoint disabled', 20],
      'nothing is sent to a disabled endpoint',
    );
    const gone = await receiver([410]);
    const ep2 = await createEndpoint(t.accountId, gone.url, ['order.paid']);
    await runDelivery({ ...ref, target: { type: 'endpoint', id: ep2.id }, retryDelaysSeconds: [60] });
    assert.equal((await admin('GET', `/accounts/${t.accountId}/webhook-endpoints/${ep2.id}`)).body.data.status, 'disabled');
    const told = await eventually(
      () => api('GET', '/api/v3/automations/events?type=webhook.endpoint_disabled', t.token),
      (x) => x.body.data.events.length === 2,
    );
    assert.deepEqual(told.body.data.events.map((e: any) => e.data.endpoint_id).sort(), [ep.id, ep2.id].sort());
    assert.match(told.body.data.events.find((e: any) => e.data.endpoint_id === ep2.id).data.reason, /410/);
  },
);

test('the admin CLI covers endpoints, rotation, the delivery log and redelivery', { timeout: 60_000 }, async () => {
  const { execFile } = await import('node:child_process');
  const cli = (...args: string[]) =>
    new Promise<any>((resolve, reject) =>
      execFile(
        process.execPath,
        ['--import', 'tsx', 'scripts/admin.ts', ...args],
        { env: { ...process.env, ADMIN_URL: process.env.API_URL }, encoding: 'utf8' },
        (err, stdout) => (err ? reject(new Error(`${args[0]}: ${stdout}`)) : resolve(JSON.parse(stdout))),
      ),
    );
  const t = await newTenant();
  const { event } = await deliveredEvent(t, num());
  const r = await receiver();
  const made = await cli('webhooks:create', '--account', String(t.accountId), '--url', r.url, '--events', 'order.paid');
  assert.match(made.data.secret, /^whsec_/);
  const id = String(made.data.id);
  const rotated = await cli('webhooks:rotate', '--account', String(t.accountId), '--endpoint', id, '--overlap-hours', '1');
  assert.notEqual(rotated.data.secret, made.data.secret);
  await cli('webhooks:redeliver', '--account', String(t.accountId), '--event', event.event_id, '--endpoint', id);
  await eventually(
    async () => r.got.length,
    (n) => n === 1,
  );
  const log = await eventually(
    () => cli('webhooks:deliveries', '--account', String(t.accountId), '--endpoint', id),
    (x) => x.data[0]?.status === 'succeeded',
  );
  assert.equal(log.data[0].attempt_log[0].status_code, 200);
  assert.equal((await cli('webhooks:disable', '--account', String(t.accountId), '--endpoint', id)).data.status, 'disabled');
  assert.equal((await cli('webhooks:delete', '--account', String(t.accountId), '--endpoint', id)).data.deleted, true);
});

test('a record refused before any send (malformed number) emits message.failed too', { timeout: 60_000 }, async () => {
  const t = await newTenant();
  const got = await receiver();
  await createEndpoint(t.accountId, got.url, ['message.failed']);
  const m = (await api('POST', '/api/v3/sms/send', t.token, { recipient: 'not-a-number', message: 'x' })).body.data.messages[0];
  assert.equal(m.status, 'failed');
  await eventually(
    async () => got.got.length,
    (n) => n === 1,
  );
  assert.deepEqual([got.got[0].json.event, got.got[0].json.message_id, got.got[0].json.status], ['message.failed', m.id, 'failed']);
});
