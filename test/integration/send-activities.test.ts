import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { ApplicationFailure } from '@temporalio/activity';
import { MockActivityEnvironment } from '@temporalio/testing';
import { openOrm } from '../../entities/orm.js';
import { exec, many, one } from '../../entities/db.js';
import { createMessageActivities, ACCOUNT_SUSPENDED_ERROR, type MessageDeps } from '../../activities/messaging/messages.js';
import { createDispatchActivities, type ProviderBudgets } from '../../activities/messaging/dispatch.js';
import { newTenant, uniquePhone } from '../support/stack.js';
import { providerDoubles, providerFailure, providerOk, type SendAnswer } from '../support/provider-doubles.js';
import type { Logger } from '../../logger.js';

// The send activities in an activity context (MockActivityEnvironment) on the run's real database,
// with doubles for the provider port and the budgets only: the per-message send (dispatchMessage,
// pollDeliveryStatus) and the batch send (sendMessageBatch). Their rows are written here in
// `processing` under dispatch mode `workflow`, which nothing else in the stack picks up (the
// reconciler looks for queued rows, the dispatchers for queued or silent batch rows).
const orm = await openOrm(process.env.DATABASE_URL!, 2);
after(() => orm.close());

const quiet = { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error() {} };
const log = { warn() {}, info() {}, error() {}, debug() {} } as unknown as Logger;

function depsFor(
  answers: SendAnswer[],
  fetchStatus?: Array<Awaited<ReturnType<NonNullable<ReturnType<typeof providerDoubles>['sms']['fetchStatus']>>>>,
) {
  const p = providerDoubles(answers);
  const polled: string[] = [];
  if (fetchStatus)
    p.sms.fetchStatus = async (id) => {
      polled.push(id);
      return fetchStatus[Math.min(polled.length - 1, fetchStatus.length - 1)];
    };
  const counted: string[] = [];
  let paced = 0;
  const budgets: ProviderBudgets = {
    pace: { sms: async () => void paced++, whatsapp: async () => void paced++ },
    count: { sms: async () => undefined, whatsapp: async () => undefined },
  };
  const deps: MessageDeps = { orm, providers: p.registry, log, countProviderCall: (c) => void counted.push(c) };
  return { p, deps, budgets, counted, polled, paced: () => paced };
}

/** `n` outbound SMS of the account in processing; their ids and uids. */
async function messages(accountId: number, n: number, over: { status?: string; gatewayId?: string } = {}) {
  const rows: Array<{ id: number; uid: string }> = [];
  for (let i = 0; i < n; i++) {
    const r = await one<{ id: string; uid: string }>(
      orm.em.fork(),
      `insert into messages (uid, account_id, direction, channel_type, recipient, sender, body, status, dispatch_mode, gateway_message_id, sent_at, segments, encoding, created_at, updated_at)
       values (?, ?, 'outbound', 'sms', ?, 'ACME', 'unit', ?, 'workflow', ?, ${over.gatewayId ? 'now()' : 'null'}, 1, 'GSM-7', now(), now()) returning id, uid`,
      [
        `msg_act_${process.pid}_${Date.now()}_${i}_${Math.random().toString(36).slice(2, 8)}`,
        accountId,
        uniquePhone(),
        over.status ?? 'processing',
        over.gatewayId ?? null,
      ],
    );
    rows.push({ id: Number(r!.id), uid: r!.uid });
  }
  return rows;
}

const stored = (ids: number[]) =>
  many<{ id: string; status: string; gateway_message_id: string | null; error_message: string | null }>(
    orm.em.fork(),
    'select id, status, gateway_message_id, error_message from messages where id = any(?::bigint[]) order by id',
    [`{${ids.join(',')}}`],
  );

const activityEnv = () => {
  const env = new MockActivityEnvironment(undefined, { logger: quiet });
  const beats: unknown[] = [];
  env.on('heartbeat', (d: unknown) => beats.push(d));
  return { env, beats };
};

test(
  'dispatchMessage: the provider answer is stored; a second run of the activity does not call the provider again',
  { timeout: 60_000 },
  async () => {
    const t = await newTenant();
    const [m] = await messages(t.accountId, 1);
    const d = depsFor([providerOk('SM_act_1')]);
    const acts = createMessageActivities(d.deps);
    const { env } = activityEnv();
    assert.deepEqual(await env.run(() => acts.dispatchMessage({ messageId: m.id })), { status: 'sent', gatewayMessageId: 'SM_act_1' });
    assert.deepEqual(await env.run(() => acts.dispatchMessage({ messageId: m.id })), { status: 'sent', gatewayMessageId: 'SM_act_1' });
    assert.equal(d.p.sent.length, 1, 'the retry after a crash finds the message sent');
    assert.equal(d.p.sent[0].key, m.uid, 'the provider idempotency key is the uid');
    assert.deepEqual(d.counted, ['sms'], 'the call is counted in the shared budget');
    const [row] = await stored([m.id]);
    assert.deepEqual([row.status, row.gateway_message_id], ['sent', 'SM_act_1']);
  },
);

test(
  'dispatchMessage: a transient provider failure is a retryable ProviderTransient with the provider Retry-After; the row waits',
  { timeout: 60_000 },
  async () => {
    const t = await newTenant();
    const [m] = await messages(t.accountId, 1);
    const d = depsFor([providerFailure(false, '429', 'too many requests', 30), providerOk('SM_act_2')]);
    const acts = createMessageActivities(d.deps);
    const { env } = activityEnv();
    await assert.rejects(
      env.run(() => acts.dispatchMessage({ messageId: m.id })),
      (err: unknown) => {
        assert.ok(err instanceof ApplicationFailure);
        assert.equal(err.type, 'ProviderTransient');
        assert.equal(err.nonRetryable, false);
        assert.equal(err.message, 'too many requests (provider code 429)');
        assert.equal(err.nextRetryDelay, '30 seconds');
        return true;
      },
    );
    assert.equal((await stored([m.id]))[0].status, 'processing');
    // MockActivityEnvironment.run cannot infer its answer's type from the function: named here.
    const retried = (await env.run(() => acts.dispatchMessage({ messageId: m.id }))) as { status: string };
    assert.equal(retried.status, 'sent', 'the retry sends it');
    assert.deepEqual(
      d.p.sent.map((s) => s.key),
      [m.uid, m.uid],
    );
  },
);

test(
  'dispatchMessage: a permanent refusal fails the record with the provider reason; a missing message is non-retryable',
  { timeout: 60_000 },
  async () => {
    const t = await newTenant();
    const [m] = await messages(t.accountId, 1);
    const d = depsFor([providerFailure(true, '21211', 'invalid number')]);
    const acts = createMessageActivities(d.deps);
    const { env } = activityEnv();
    assert.deepEqual(await env.run(() => acts.dispatchMessage({ messageId: m.id })), { status: 'failed', gatewayMessageId: null });
    assert.equal((await stored([m.id]))[0].error_message, 'invalid number (provider code 21211)');
    await assert.rejects(
      env.run(() => acts.dispatchMessage({ messageId: 2 ** 50 })),
      (err: unknown) => err instanceof ApplicationFailure && err.nonRetryable && err.type === 'MessageMissing',
    );
  },
);

test('dispatchMessage: a suspended account’s message fails without a provider call', { timeout: 60_000 }, async () => {
  const t = await newTenant();
  const [m] = await messages(t.accountId, 1);
  await exec(orm.em.fork(), `update accounts set status = 'suspended' where id = ?`, [t.accountId]);
  const d = depsFor([providerOk('never')]);
  const { env } = activityEnv();
  assert.deepEqual(await env.run(() => createMessageActivities(d.deps).dispatchMessage({ messageId: m.id })), {
    status: 'failed',
    gatewayMessageId: null,
  });
  assert.equal((await stored([m.id]))[0].error_message, ACCOUNT_SUSPENDED_ERROR);
  assert.equal(d.p.sent.length, 0);
});

test(
  'pollDeliveryStatus: what the provider says is recorded; a transient failure is retryable; no provider id, no call',
  { timeout: 60_000 },
  async () => {
    const t = await newTenant();
    const [m] = await messages(t.accountId, 1, { status: 'checking_delivery', gatewayId: 'SM_poll_1' });
    const [bare] = await messages(t.accountId, 1);
    const d = depsFor(
      [],
      [
        { ok: false, permanent: false, code: '503', message: 'status service down' },
        { ok: true, value: { status: 'delivered' } },
      ],
    );
    const acts = createMessageActivities(d.deps);
    const { env } = activityEnv();
    await assert.rejects(
      env.run(() => acts.pollDeliveryStatus({ messageId: m.id })),
      (err: unknown) => err instanceof ApplicationFailure && !err.nonRetryable && err.type === 'ProviderTransient',
    );
    assert.equal(await env.run(() => acts.pollDeliveryStatus({ messageId: m.id })), 'delivered');
    assert.equal((await stored([m.id]))[0].status, 'delivered');
    assert.equal(await env.run(() => acts.pollDeliveryStatus({ messageId: bare.id })), 'processing');
    assert.deepEqual(d.polled, ['SM_poll_1', 'SM_poll_1']);
  },
);

test(
  'sendMessageBatch: sent, failed for good and to-retry are told apart; a rerun sends only what still waits',
  { timeout: 60_000 },
  async () => {
    const t = await newTenant();
    const ms = await messages(t.accountId, 3);
    const d = depsFor([
      providerOk('SM_b1'),
      providerFailure(true, '21211', 'invalid number'),
      providerFailure(false, '503', 'unavailable'),
    ]);
    const acts = createDispatchActivities({ ...d.deps, budgets: d.budgets });
    const { env } = activityEnv();
    const ids = ms.map((m) => m.id);
    const first = await env.run(() => acts.sendMessageBatch({ ids, concurrency: 1, channelType: 'sms' }));
    assert.deepEqual(first, { sent: 2, retry: [ids[2]], lastError: 'unavailable (provider code 503)' });
    assert.deepEqual(
      (await stored(ids)).map((r) => [r.status, r.gateway_message_id, r.error_message]),
      [
        ['sent', 'SM_b1', null],
        ['failed', null, 'invalid number (provider code 21211)'],
        ['processing', null, null],
      ],
    );
    assert.equal(d.paced(), 3, 'every provider call waits for the shared budget');
    // The workflow sends the same batch again: only the message still waiting is sent.
    const again = await env.run(() => acts.sendMessageBatch({ ids, concurrency: 1, channelType: 'sms' }));
    assert.deepEqual(again, { sent: 0, retry: [ids[2]], lastError: 'unavailable (provider code 503)' });
    assert.deepEqual(
      d.p.sent.map((s) => s.key),
      [ms[0].uid, ms[1].uid, ms[2].uid, ms[2].uid],
    );
  },
);

test(
  'sendMessageBatch: a message no retry can send (a chat message without its request) fails alone; the batch goes on',
  { timeout: 60_000 },
  async () => {
    const t = await newTenant();
    const [a, b] = await messages(t.accountId, 2);
    const bad = await one<{ id: string; uid: string }>(
      orm.em.fork(),
      `insert into messages (uid, account_id, direction, channel_type, recipient, body, status, dispatch_mode, segments, encoding, created_at, updated_at)
       values (?, ?, 'outbound', 'whatsapp', ?, 'bare', 'processing', 'workflow', 1, 'GSM-7', now(), now()) returning id, uid`,
      [`msg_act_bare_${process.pid}_${Date.now()}`, t.accountId, uniquePhone()],
    );
    const d = depsFor([providerOk('SM_ok')]);
    const acts = createDispatchActivities({ ...d.deps, budgets: d.budgets });
    const { env } = activityEnv();
    const ids = [a.id, Number(bad!.id), b.id];
    const r = await env.run(() => acts.sendMessageBatch({ ids, concurrency: 1, channelType: 'sms' }));
    assert.deepEqual(r, { sent: 3, retry: [], lastError: null }, 'all three settled: two sent, one failed for good');
    assert.deepEqual(
      (await stored(ids)).map((m) => [m.status, m.error_message]),
      [
        ['sent', null],
        ['sent', null],
        ['failed', `message ${bad!.uid} has no provider request`], // written last: the highest id
      ],
    );
    assert.deepEqual(
      d.p.sent.map((s) => s.key),
      [a.uid, b.uid],
      'the bad message reached no provider',
    );
  },
);

test(
  'sendMessageBatch: a suspended account’s messages fail unsent; progress is heartbeated every 50 messages',
  { timeout: 60_000 },
  async () => {
    const t = await newTenant();
    const ms = await messages(t.accountId, 105);
    const d = depsFor([providerOk('SM_many')]);
    const acts = createDispatchActivities({ ...d.deps, budgets: d.budgets });
    const { env, beats } = activityEnv();
    const r = await env.run(() => acts.sendMessageBatch({ ids: ms.map((m) => m.id), concurrency: 8, channelType: 'sms' }));
    assert.deepEqual(r, { sent: 105, retry: [], lastError: null });
    assert.deepEqual(beats, [50, 100]);
    const s = await newTenant();
    const held = await messages(s.accountId, 2);
    await exec(orm.em.fork(), `update accounts set status = 'suspended' where id = ?`, [s.accountId]);
    const before = d.p.sent.length;
    await env.run(() => acts.sendMessageBatch({ ids: held.map((m) => m.id), concurrency: 2, channelType: 'sms' }));
    assert.equal(d.p.sent.length, before, 'no provider call');
    assert.deepEqual(
      (await stored(held.map((m) => m.id))).map((r) => [r.status, r.error_message]),
      [
        ['failed', ACCOUNT_SUSPENDED_ERROR],
        ['failed', ACCOUNT_SUSPENDED_ERROR],
      ],
    );
  },
);
