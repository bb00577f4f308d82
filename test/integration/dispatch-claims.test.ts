import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { openOrm } from '../../entities/orm.js';
import { many, one } from '../../entities/db.js';
import { newTenant, api, eventually, uniquePhone } from '../support/stack.js';
import { closeClaim, unclaim } from '../../services/messaging/store/dispatch.js';

// A claim left behind (its dispatcher run terminated or reset) goes back to the queue once it is
// well past any retry backoff, and the running dispatcher sends it; a fresh claim is left alone.
const orm = await openOrm(process.env.DATABASE_URL!, 2);
after(() => orm.close());

// A message in a dispatch batch claimed by a run that is gone: still queued, its batch tagged.
const claimed = async (accountId: number, minutesAgo: number, claim = 'outbound-dispatcher/sms-terminated:7') => {
  const em = orm.em.fork();
  const m = (await one<{ id: string; uid: string }>(
    em,
    `insert into messages (uid, account_id, direction, channel_type, recipient, body, status, dispatch_mode, segments, encoding, created_at, updated_at)
   values (?, ?, 'outbound', 'sms', ?, 'left behind', 'queued', 'batch', 1, 'GSM-7', now(), now())
   returning id, uid`,
    [`msg_stale_${Date.now()}_${minutesAgo}`, accountId, uniquePhone()],
  ))!;
  await em.execute(
    `insert into message_dispatch_batches (claim, channel_type, message_ids, queued_at, claimed_at)
     values (?, 'sms', array[?::bigint], now(), now() - make_interval(mins => ?))`,
    [claim, m.id, minutesAgo],
  );
  return m;
};

test('a stale claim is released and sent by the running dispatcher; a recent one is not touched', { timeout: 60_000 }, async () => {
  const t = await newTenant();
  const stale = (await claimed(t.accountId, 20)).uid;
  const recent = (await claimed(t.accountId, 1)).uid;
  const sent = await eventually(
    () => api('GET', `/api/v3/sms/${stale}`, t.token),
    (r) => r.body.data?.gateway_message_id != null,
    40_000,
    500,
  );
  assert.match(sent.body.data.gateway_message_id ?? JSON.stringify(sent.body), /^SM/);
  assert.ok(['sent', 'delivered'].includes(sent.body.data.status));
  const untouched = await api('GET', `/api/v3/sms/${recent}`, t.token);
  assert.deepEqual([untouched.body.data.status, untouched.body.data.gateway_message_id], ['queued', null]);
  const offered = await one<{ n: number }>(
    orm.em.fork(),
    `select count(*)::int as n from message_dispatch_batches b join messages m on m.id = any(b.message_ids) where m.uid = ? and b.claim is null`,
    [recent],
  );
  assert.equal(offered?.n, 0, 'a recent claim keeps its batch');
  // Not left claimed for later suites either.
  await orm.em.fork().execute(`update messages set status = 'failed', error_message = 'test cleanup' where uid = ?`, [recent]);
});

test('messages a dispatch hands back leave its claim and are sent from a batch of their own', { timeout: 60_000 }, async () => {
  const t = await newTenant();
  const claim = `outbound-dispatcher/sms-test:${process.pid}:${Date.now()}`;
  const m = await claimed(t.accountId, 0, claim);
  await unclaim(orm.em.fork(), claim, [Number(m.id)]);
  const kept = await one<{ ids: string[] }>(
    orm.em.fork(),
    `select message_ids::text[] as ids from message_dispatch_batches where claim = ?`,
    [claim],
  );
  assert.deepEqual(kept?.ids, [], 'no longer in the claim, so a stale claim offered again cannot offer it twice');
  const sent = await eventually(
    () => api('GET', `/api/v3/sms/${m.uid}`, t.token),
    (r) => r.body.data?.gateway_message_id != null,
    40_000,
    500,
  );
  assert.ok(['sent', 'delivered'].includes(sent.body.data.status));
});

test('a claim closes with its transient failures kept claimed in an open batch, for the stale-claim release', async () => {
  const t = await newTenant();
  const claim = `outbound-dispatcher/sms-test-retry:${process.pid}:${Date.now()}`;
  const m = await claimed(t.accountId, 0, claim);
  await closeClaim(orm.em.fork(), claim, 'sms', [Number(m.id)]);
  const batches = await many<{ ids: string[]; open: boolean }>(
    orm.em.fork(),
    `select message_ids::text[] as ids, sent_at is null as open from message_dispatch_batches where claim = ? order by id`,
    [claim],
  );
  assert.deepEqual(
    batches.map((b) => [b.ids, b.open]),
    [
      [[m.id], false],
      [[m.id], true],
    ],
    'the claim is closed for the silent sweep; the retrying message stays claimed',
  );
  await orm.em.fork().execute(`update messages set status = 'failed', error_message = 'test cleanup' where id = ?`, [m.id]);
});
