import { test } from 'node:test';
import assert from 'node:assert/strict';
import { admin, api, newTenant, eventually } from '../support/stack.js';
import { receiversOfThisFile } from '../support/receiver.js';
import { verifySvcSignature } from '../../services/webhooks/signing.js';

const receiver = receiversOfThisFile();
const defineOp = (accountId: number, body: Record<string, unknown>) => admin('POST', `/accounts/${accountId}/operations`, body);
const runOp = (token: string, name: string, input: unknown) => api('POST', `/api/v3/operations/${name}/run`, token, { input });
const waitRun = (token: string, id: string) =>
  eventually(
    () => api('GET', `/api/v3/operations/runs/${id}`, token),
    (r) => ['succeeded', 'failed'].includes(r.body.data?.status),
    30_000,
    200,
    `operation run ${id} succeeded or failed`,
  );

test(
  'an operation run emits a business event: logged, and sent to the subscription signed with X-Svc-Signature',
  { timeout: 60_000 },
  async () => {
    const t = await newTenant();
    const r = await receiver();
    const sub = await admin('POST', `/accounts/${t.accountId}/automation-subscriptions`, { event_type: 'order.*', target_url: r.url });
    assert.equal(sub.status, 201);
    assert.match(sub.body.data.secret, /^svcsec_/);
    await admin('POST', `/accounts/${t.accountId}/automation-subscriptions`, { event_type: 'payment.*', target_url: r.url });
    assert.equal(
      (await defineOp(t.accountId, { name: 'order-in', kind: 'emit_business_event', config: { type: 'order.received' } })).status,
      201,
    );
    assert.equal((await defineOp(t.accountId, { name: 'bad', kind: 'emit_business_event', config: { type: 'Not A Type' } })).status, 422);
    const run = await runOp(t.token, 'order-in', { data: { order_id: 7, total: 1500 } });
    assert.equal(run.status, 202);
    assert.equal(run.body.data.status, 'queued');
    const done = await waitRun(t.token, run.body.data.run_id);
    assert.equal(done.body.data.status, 'succeeded');
    await eventually(
      async () => r.got.length,
      (n) => n === 1,
    );
    const hook = r.got[0];
    assert.ok(verifySvcSignature(sub.body.data.secret, hook.body, String(hook.headers['x-svc-signature'])));
    assert.deepEqual(Object.keys(hook.json).sort(), ['account_id', 'data', 'id', 'live', 'occurred_at', 'source', 'type']);
    assert.deepEqual(
      [hook.json.type, hook.json.live, hook.json.account_id, hook.json.data],
      ['order.received', true, t.accountId, { order_id: 7, total: 1500 }],
    );
    assert.equal(hook.json.id, done.body.data.result.business_event_id);
    await defineOp(t.accountId, { name: 'paid', kind: 'emit_business_event', config: { type: 'payment.succeeded' } });
    await waitRun(t.token, (await runOp(t.token, 'paid', { data: { amount_minor: 100 } })).body.data.run_id);
    await eventually(
      async () => r.got.length,
      (n) => n === 2,
    );
    assert.deepEqual([r.got[1].json.type, r.got[1].json.live], ['payment.succeeded', false], 'payment events are declared live=false');
  },
);

test(
  'the business-event log pages backward with before; subscriptions and schedules are capped lists; automations.view is required',
  { timeout: 60_000 },
  async () => {
    const t = await newTenant();
    await defineOp(t.accountId, { name: 'ping', kind: 'emit_business_event', config: { type: 'contact.created' } });
    for (let i = 0; i < 5; i++) await waitRun(t.token, (await runOp(t.token, 'ping', { data: { i } })).body.data.run_id);
    const first = await api('GET', '/api/v3/automations/events?limit=2', t.token);
    assert.equal(first.status, 200);
    assert.deepEqual(
      first.body.data.events.map((e: any) => e.data.i),
      [4, 3],
    );
    assert.equal(first.body.data.has_more, true);
    const second = await api('GET', `/api/v3/automations/events?limit=2&before=${first.body.data.next_before}`, t.token);
    assert.deepEqual(
      second.body.data.events.map((e: any) => e.data.i),
      [2, 1],
    );
    const last = await api('GET', `/api/v3/automations/events?limit=2&before=${second.body.data.next_before}`, t.token);
    assert.deepEqual(
      [last.body.data.events.map((e: any) => e.data.i), last.body.data.has_more, last.body.data.next_before],
      [[0], false, null],
    );
    assert.equal((await api('GET', '/api/v3/automations/events?before=nope', t.token)).status, 422);

    for (let i = 0; i < 101; i++)
      await admin('POST', `/accounts/${t.accountId}/automation-subscriptions`, { event_type: '*', target_url: `http://127.0.0.1:9/s${i}` });
    const subs = await api('GET', '/api/v3/automations/subscriptions', t.token);
    assert.equal(subs.body.data.subscriptions.length, 100, 'fixed cap of 100');
    assert.equal(subs.body.data.subscriptions[0].secret, undefined);
    const sched = await admin('POST', `/accounts/${t.accountId}/schedules`, {
      name: 'every 2 s',
      operation: 'ping',
      input: { data: { from: 'schedule' } },
      every_seconds: 2,
    });
    assert.equal(sched.status, 201);
    const schedules = await api('GET', '/api/v3/automations/schedules', t.token);
    assert.deepEqual(
      schedules.body.data.schedules.map((s: any) => [s.id, s.operation, s.every_seconds]),
      [[sched.body.data.id, 'ping', 2]],
    );
    const ran = await eventually(
      () => admin('GET', `/accounts/${t.accountId}/operation-runs`),
      (x) => x.body.data.some((r: any) => r.source === `schedule:${sched.body.data.id}` && r.status === 'succeeded'),
      20_000,
    );
    assert.ok(
      ran.body.data.some((r: any) => r.source === `schedule:${sched.body.data.id}`),
      'the schedule ran the operation',
    );
    assert.equal((await admin('DELETE', `/accounts/${t.accountId}/schedules/${sched.body.data.id}`)).status, 200);

    const viewer = await newTenant({ permissions: ['contacts.view'] });
    for (const path of ['/api/v3/automations/events', '/api/v3/automations/subscriptions', '/api/v3/automations/schedules']) {
      const r = await api('GET', path, viewer.token);
      assert.deepEqual([r.status, r.body.reason], [403, 'permission_denied'], path);
      assert.equal((await api('GET', path, t.legacyToken)).body.reason, 'issuer_required');
    }
  },
);

test(
  'operations: only operator-defined names run (404 otherwise), input is checked, a send_sms run sends through the message workflow',
  { timeout: 60_000 },
  async () => {
    const t = await newTenant();
    assert.equal((await runOp(t.token, 'nothing-here', {})).status, 404);
    assert.equal(
      (await api('POST', '/api/v3/operations', t.token, { name: 'x', kind: 'send_sms', config: {} })).status,
      404,
      'no way to define one with a key',
    );
    await defineOp(t.accountId, { name: 'otp', kind: 'send_sms', config: { message: 'Your code is {{code}}{{missing}}' } });
    const bad = await runOp(t.token, 'otp', { vars: { code: '1234' } });
    assert.deepEqual([bad.status, Object.keys(bad.body.errors)], [422, ['to']]);
    assert.equal(
      (await api('POST', '/api/v3/operations/otp/run', t.legacyToken, { input: { to: '+255711000777' } })).body.reason,
      'issuer_required',
    );
    const run = await runOp(t.token, 'otp', { to: '+255711000777', vars: { code: '1234' } });
    const done = await waitRun(t.token, run.body.data.run_id);
    assert.equal(done.body.data.status, 'succeeded', JSON.stringify(done.body.data));
    const msg = await eventually(
      () => api('GET', `/api/v3/sms/${done.body.data.result.uid}`, t.token),
      (x) => x.body.data?.status === 'delivered',
      30_000,
    );
    assert.deepEqual(
      [msg.body.data.body, msg.body.data.recipient, msg.body.data.status],
      ['Your code is 1234', '+255711000777', 'delivered'],
    );
  },
);
