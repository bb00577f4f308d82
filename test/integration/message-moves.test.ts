import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { openOrm } from '../../entities/orm.js';
import { many, one } from '../../entities/db.js';
import { moveMessage, moveMessages } from '../../services/messaging/store/moves.js';
import { emitEvent } from '../../services/webhooks/events.js';
import { eventPayloadSql } from '../../services/webhooks/store/outbox.js';
import { applyParkedStatuses } from '../../services/messaging/inbound.js';
import { newTenant } from '../support/stack.js';
import { startReceiver } from '../support/receiver.js';
import { createEndpoint } from '../support/webhooks.js';

// The one-statement status moves against the real database: forward only, stamps, and exactly one
// callback event per move that changed something, with the flat payload receivers get.
const orm = await openOrm(process.env.DATABASE_URL!, 2);
after(() => orm.close());

async function message(accountId: number, status: string, channelType: 'sms' | 'whatsapp' = 'sms') {
  const row = await one<{ id: string; uid: string }>(
    orm.em.fork(),
    `insert into messages (uid, account_id, direction, channel_type, recipient, body, status, dispatch_mode, created_at, updated_at)
     values (?, ?, 'outbound', ?, '+255700000009', 'hi', ?, 'batch', now(), now()) returning id, uid`,
    [`msg_moves_${Date.now()}_${Math.random().toString(36).slice(2)}`, accountId, channelType, status],
  );
  return { id: Number(row!.id), uid: row!.uid };
}

/** An endpoint hearing every message event of the account: its delivery progress is recorded only when heard. */
async function listening(accountId: number) {
  const receiver = await startReceiver();
  await createEndpoint(accountId, receiver.url, ['message.*']);
  after(() => receiver.close());
}

// The payload as receivers get it: a status move stores its message fields compactly (a JSON array).
const eventsOf = (accountId: number) =>
  many<{ kind: string; payload: Record<string, any>; stored: unknown }>(
    orm.em.fork(),
    `select e.kind, ${eventPayloadSql('e')} as payload, e.payload as stored from events e where e.account_id = ? order by e.id`,
    [accountId],
  );

test('moveMessages applies many moves in one call, forward only, one event per real change', async () => {
  const t = await newTenant();
  await listening(t.accountId);
  const a = await message(t.accountId, 'processing');
  const b = await message(t.accountId, 'processing');
  const c = await message(t.accountId, 'delivered');
  const moved = await moveMessages(orm.em.fork(), [
    { id: a.id, to: 'sent', gatewayMessageId: 'SMa' },
    { id: b.id, to: 'delivered', gatewayMessageId: 'SMb' },
    { id: b.id, to: 'read' },
    { id: c.id, to: 'failed', errorMessage: 'late failure' }, // never overwrites delivered
    { id: a.id, to: 'processing' }, // backwards: ignored
  ]);
  assert.deepEqual(
    moved.map((m) => [m.id, m.status]).sort(),
    [
      [a.id, 'sent'],
      [b.id, 'delivered'],
      [b.id, 'read'],
    ].sort(),
  );

  const rows = await many<Record<string, any>>(
    orm.em.fork(),
    'select id, status, gateway_message_id, error_message, sent_at, delivered_at, read_at from messages where id in (?, ?, ?) order by id',
    [a.id, b.id, c.id],
  );
  const [ra, rb, rcRow] = rows;
  assert.equal(ra.status, 'sent');
  assert.equal(ra.gateway_message_id, 'SMa');
  assert.ok(ra.sent_at && !ra.delivered_at);
  assert.equal(rb.status, 'read');
  assert.ok(rb.sent_at && rb.delivered_at && rb.read_at, 'a receipt that overtook the send still stamps every step');
  assert.equal(rcRow.status, 'delivered');
  assert.equal(rcRow.error_message, null);

  const events = await eventsOf(t.accountId);
  assert.deepEqual(
    events.map((e) => e.kind),
    ['message.sent', 'message.delivered', 'message.read'],
  );
  const sent = events[0].payload;
  assert.deepEqual(
    Object.keys(sent).sort(),
    [
      'account_id',
      'channel_type',
      'direction',
      'error_message',
      'event',
      'event_id',
      'gateway_message_id',
      'message_id',
      'occurred_at',
      'recipient',
      'sender',
      'status',
      'uid',
    ].sort(),
  );
  assert.equal(sent.message_id, a.id);
  assert.equal(typeof sent.message_id, 'number');
  assert.equal(sent.uid, a.uid);
  assert.equal(sent.status, 'sent');
  assert.equal(sent.gateway_message_id, 'SMa');
  assert.match(sent.event_id, /^evt_/);
  assert.match(sent.occurred_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  assert.ok(Array.isArray(events[0].stored), 'stored without its field names');
});

test('an SMS provider id finds no message: its receipts name our uid, and the send moves the message in place', async () => {
  const t = await newTenant();
  const m = await message(t.accountId, 'processing');
  await moveMessage(orm.em.fork(), { id: m.id }, { to: 'sent', gatewayMessageId: `SM${m.id}` });
  assert.equal(await moveMessage(orm.em.fork(), { gatewayMessageId: `SM${m.id}` }, { to: 'delivered' }), null);
  const byUid = await moveMessage(orm.em.fork(), { uid: m.uid }, { to: 'delivered', gatewayMessageId: `SM${m.id}` });
  assert.deepEqual([byUid?.status, byUid?.moved], ['delivered', true]);
});

test('moveMessage finds a message by uid or provider id and reports where it stands when nothing moved', async () => {
  const t = await newTenant();
  await listening(t.accountId);
  // A chat message: its statuses name the provider's id alone (an SMS receipt names our uid).
  const m = await message(t.accountId, 'processing', 'whatsapp');
  const byUid = await moveMessage(orm.em.fork(), { uid: m.uid }, { to: 'sent', gatewayMessageId: `SM${m.id}` });
  assert.deepEqual([byUid?.status, byUid?.moved, byUid?.accountId, byUid?.dispatchMode], ['sent', true, t.accountId, 'batch']);
  const again = await moveMessage(orm.em.fork(), { gatewayMessageId: `SM${m.id}` }, { to: 'sent' });
  assert.deepEqual([again?.id, again?.status, again?.moved], [m.id, 'sent', false]);
  assert.equal(await moveMessage(orm.em.fork(), { uid: 'msg_nobody' }, { to: 'delivered' }), null);
  const failed = await moveMessage(orm.em.fork(), { id: m.id }, { to: 'failed', errorMessage: 'Delivery failed (provider code 30003)' });
  assert.deepEqual([failed?.status, failed?.moved], ['failed', true]);
  const events = await eventsOf(t.accountId);
  assert.deepEqual(
    events.map((e) => [e.kind, e.payload.error_message]),
    [
      ['message.sent', null],
      ['message.failed', 'Delivery failed (provider code 30003)'],
    ],
  );
});

test('delivery progress nobody hears is not recorded, other events nobody hears are recorded settled, heard ones wait for the relay', async () => {
  const t = await newTenant();
  const em = orm.em.fork();
  const endpoint = async (events: string[], status = 'active') =>
    (await one<{ id: number }>(
      em,
      `insert into webhook_endpoints (account_id, url, events, secret, status, created_at, updated_at)
     values (?, 'http://127.0.0.1:9/unused', ?::jsonb, 'whsec_test', ?, now(), now()) returning id`,
      [t.accountId, JSON.stringify(events), status],
    ))!.id;
  // Each round runs in one transaction the relay cannot see, so it can't mark anything first.
  const round = (work: (tx: typeof em) => Promise<unknown>, kinds: string[]) =>
    em.transactional(async (tx) => {
      await work(tx);
      const rows = await many<{ kind: string; settled: boolean }>(
        tx,
        'select kind, dispatched_at is not null as settled from events where account_id = ? order by id',
        [t.accountId],
      );
      await tx.execute('delete from events where account_id = ?', [t.accountId]);
      return Object.fromEntries(rows.filter((r) => kinds.includes(r.kind)).map((r) => [r.kind, r.settled]));
    });
  const sentAndDelivered = async (tx: typeof em) => {
    const m = await message(t.accountId, 'processing', 'whatsapp');
    await moveMessage(tx, { id: m.id }, { to: 'sent', gatewayMessageId: `SM${m.id}` });
    await moveMessage(tx, { gatewayMessageId: `SM${m.id}` }, { to: 'delivered' });
    await moveMessage(tx, { id: (await message(t.accountId, 'processing')).id }, { to: 'failed', errorMessage: 'refused' });
  };
  const kinds = ['message.sent', 'message.delivered', 'message.failed'];
  assert.deepEqual(
    await round(sentAndDelivered, kinds),
    { 'message.failed': true },
    'no endpoint at all: the progress is on the message alone, the failure recorded settled',
  );

  const disabled = await endpoint(['*'], 'disabled');
  const exact = await endpoint(['message.delivered']);
  assert.deepEqual(
    await round(sentAndDelivered, kinds),
    { 'message.delivered': false, 'message.failed': true },
    'exact kind; a disabled endpoint does not count',
  );

  await em.execute('delete from webhook_endpoints where id in (?, ?)', [disabled, exact]);
  const prefix = await endpoint(['group.*', 'message.*']);
  const all = async (tx: typeof em) => {
    await emitEvent(tx, t.accountId, 'lead.created', { lead_id: 1 });
    await sentAndDelivered(tx);
  };
  assert.deepEqual(
    await round(all, [...kinds, 'lead.created']),
    { 'message.sent': false, 'message.delivered': false, 'message.failed': false, 'lead.created': true },
    'prefix filters, through emitEvent too',
  );
  await em.execute('delete from webhook_endpoints where id = ?', [prefix]);
});

test('a status parked before its message carries the provider id is applied by whichever side comes second, once', async () => {
  const t = await newTenant();
  const em = orm.em.fork();
  const wamid = `wamid.parked_${Date.now()}_${Math.random().toString(36).slice(2)}`;
  const m = await message(t.accountId, 'processing', 'whatsapp');
  await em.execute('insert into pending_receipts (provider_message_id, status, error_message, received_at) values (?, ?, null, now())', [
    wamid,
    'delivered',
  ]);

  // No message carries the id yet: nothing applied, the status stays parked.
  assert.equal(await applyParkedStatuses(em, wamid), null);
  assert.equal(
    (await one<{ n: number }>(em, 'select count(*)::int as n from pending_receipts where provider_message_id = ?', [wamid]))!.n,
    1,
  );

  // The send's outcome stores the id; the next caller (either side) applies the parked status once.
  await moveMessage(em, { id: m.id }, { to: 'sent', gatewayMessageId: wamid });
  const applied = await applyParkedStatuses(em, wamid);
  assert.equal(applied?.status, 'delivered');
  assert.equal(await applyParkedStatuses(em, wamid), null, 'the other side finds nothing left');
  assert.equal((await one<{ status: string }>(em, 'select status from messages where id = ?', [m.id]))!.status, 'delivered');
  assert.equal(
    (await one<{ n: number }>(em, 'select count(*)::int as n from pending_receipts where provider_message_id = ?', [wamid]))!.n,
    0,
  );
});
