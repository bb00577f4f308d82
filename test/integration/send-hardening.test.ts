import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { openOrm } from '../../entities/orm.js';
import { one } from '../../entities/db.js';
import { api, admin, http, newTenant, eventually, sim, uniquePhone, type Tenant } from '../support/stack.js';

// Issue 11, points 3–5: a send checks every recipient and pays from the prepaid wallet before it
// creates anything; a suspended account's queued work does not go out. Counts and statuses are read
// from the database where the API refuses a suspended account.
const orm = await openOrm(process.env.DATABASE_URL!, 2);
after(() => orm.close());

const num = () => uniquePhone('2558');
const smsSeen = async (to: string) => (await sim('GET', `/_sim/sms/messages?to=${encodeURIComponent(to)}&limit=0`)).body.count as number;
const waSeen = async (to: string) =>
  (await sim('GET', `/_sim/whatsapp/messages?to=${encodeURIComponent(to.replace('+', ''))}`)).body.messages.length as number;
const recordCount = async (accountId: number) =>
  Number((await one<{ n: string }>(orm.em.fork(), 'select count(*) as n from messages where account_id = ?', [accountId]))!.n);
const balanceOf = async (t: Tenant) => (await api('GET', '/api/v3/balance', t.token)).body.data.balance as number;
const setAccount = async (t: Tenant, patch: Record<string, unknown>) =>
  assert.equal((await admin('PATCH', `/accounts/${t.accountId}`, patch)).status, 200);

async function waTenant() {
  const t = await newTenant();
  await admin('POST', `/accounts/${t.accountId}/phone-numbers`, {
    number: `+2559${String(t.accountId).padStart(5, '0')}${String(Date.now() % 10000).padStart(4, '0')}`,
    capabilities: ['whatsapp'],
    // 64 characters: the chat record's channel code is `whatsapp:` + this id (73 characters).
    provider_phone_number_id: `${t.accountId}`.padEnd(64, '7'),
    business_account_id: `WABA${t.accountId}`,
  });
  return t;
}
const waTemplate = { message_type: 'template', template: { name: 'hello_world', language: 'en' } };

const SENDS = [
  { path: '/api/v3/sms/send', tenant: newTenant, extra: { message: 'hi' }, seen: smsSeen },
  { path: '/api/v3/whatsapp/send', tenant: waTenant, extra: waTemplate, seen: waSeen },
];

for (const s of SENDS) {
  test(`${s.path}: a recipient too long or unprintable refuses the whole request before anything is created or sent`, async () => {
    const t = await s.tenant();
    const [a, b] = [num(), num()];
    const long = '1'.repeat(192);
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ recipient: `${a},${long},${b}` }, 'recipient'],
      [{ recipients: [a, `${b} ${long}`] }, 'recipients.1'],
      [{ recipients: [a, `+2557\u0007${b.slice(5)}`, b] }, 'recipients.1'],
      [{ recipients: [a, `+2557\u202e${b.slice(5)}`, b] }, 'recipients.1'],
    ];
    for (const [body, field] of cases) {
      const r = await api('POST', s.path, t.token, { ...s.extra, ...body });
      assert.equal(r.status, 422, r.text);
      assert.ok(r.body.errors?.[field], `${field}: ${r.text}`);
    }
    assert.equal(await recordCount(t.accountId), 0, 'no record created');
    assert.equal(await balanceOf(t), 100, 'nothing charged');
    // The valid recipients of the refused requests never reached the provider; a later good send does.
    const ok = await api('POST', s.path, t.token, { ...s.extra, recipient: b });
    assert.equal(ok.status, 201, ok.text);
    assert.equal(ok.body.data.messages[0].channel_code.length > 64, s.path.includes('whatsapp'), 'long chat channel codes are stored');
    await eventually(
      () => s.seen(b),
      (n) => n === 1,
    );
    assert.equal(await s.seen(a), 0);
  });

  test(`${s.path}: more than 1,000 distinct recipients is 422 for the whole request`, async () => {
    const t = await s.tenant();
    const entries = Array.from({ length: 501 }, () => `${num()};${num()}`);
    const r = await api('POST', s.path, t.token, { ...s.extra, recipients: entries });
    assert.equal(r.status, 422, r.text);
    assert.match(r.body.errors.recipients[0], /1000/);
    const many = await api('POST', s.path, t.token, { ...s.extra, recipients: Array.from({ length: 1001 }, (_, i) => `+2557${i}`) });
    assert.equal(many.status, 422, many.text);
    assert.ok(many.body.errors.recipients, many.text);
    assert.equal(await recordCount(t.accountId), 0);
  });

  test(`${s.path}: a prepaid wallet that cannot cover the whole send refuses it with 402 insufficient_balance`, async () => {
    const t = await s.tenant();
    await setAccount(t, { wallet_balance: 0 });
    const to = num();
    const r = await api('POST', s.path, t.token, { ...s.extra, recipient: to });
    assert.equal(r.status, 402, r.text);
    assert.deepEqual([r.body.status, r.body.reason], ['error', 'insufficient_balance']);
    // Enough for two of three: refused whole.
    await setAccount(t, { wallet_balance: 0.02 });
    const three = [num(), num(), num()];
    const r3 = await api('POST', s.path, t.token, { ...s.extra, recipients: three });
    assert.equal(r3.status, 402, r3.text);
    assert.equal(await recordCount(t.accountId), 0, 'nothing created');
    assert.equal(await balanceOf(t), 0.02, 'nothing debited');
    for (const n of [to, ...three]) assert.equal(await s.seen(n), 0, `${n} never sent`);
  });
}

test('a refused send that also holds a malformed number writes nothing: no record, no message.failed, no debit', async () => {
  // The records and the refused one's event are written before the wallet row is taken (last in the
  // transaction); the 402 rolls them all back.
  const t = await newTenant();
  await setAccount(t, { wallet_balance: 0.01 });
  const r = await api('POST', '/api/v3/sms/send', t.token, { recipients: [num(), num(), 'not-a-number'], message: 'two to pay for' });
  assert.equal(r.status, 402, r.text);
  assert.equal(r.body.reason, 'insufficient_balance');
  assert.equal(await recordCount(t.accountId), 0, 'nothing created');
  assert.equal(await balanceOf(t), 0.01, 'nothing debited');
  const events = await one<{ n: string }>(
    orm.em.fork(),
    `select count(*)::text as n from events where account_id = ? and kind = 'message.failed'`,
    [t.accountId],
  );
  assert.equal(Number(events?.n), 0, 'no message.failed event');
});

test('a send debits one price per segment of the records it will send, in the /balance the next request reads', async () => {
  const t = await newTenant();
  const r = await api('POST', '/api/v3/sms/send', t.token, { recipients: [num(), num(), 'not-a-number'], message: 'ж'.repeat(71) });
  assert.equal(r.status, 201, r.text);
  assert.deepEqual(
    r.body.data.messages.map((m: any) => m.segments),
    [2, 2, 2],
  );
  assert.equal(r.body.data.messages[2].status, 'failed');
  // Two sendable records of two segments at 0.01; the malformed number is not charged.
  assert.ok(Math.abs((await balanceOf(t)) - (100 - 4 * 0.01)) < 1e-9);

  const w = await waTenant();
  assert.equal((await api('POST', '/api/v3/whatsapp/send', w.token, { ...waTemplate, recipients: [num(), num()] })).status, 201);
  assert.ok(Math.abs((await balanceOf(w)) - (100 - 2 * 0.01)) < 1e-9, 'a chat message costs one segment');
});

test('concurrent sends never overdraw: the wallet pays for exactly the records created', async () => {
  const t = await newTenant();
  await setAccount(t, { wallet_balance: 0.05 });
  const results = await Promise.all(
    Array.from({ length: 12 }, () => api('POST', '/api/v3/sms/send', t.token, { recipient: num(), message: 'race' })),
  );
  const statuses = results.map((r) => r.status).sort();
  assert.deepEqual(statuses, [...Array(5).fill(201), ...Array(7).fill(402)], results.map((r) => r.text).join('\n'));
  assert.equal(await recordCount(t.accountId), 5);
  assert.equal(await balanceOf(t), 0, 'debited 5 × 0.01, never negative');
});

test('postpaid accounts are not debited and never refused for the balance', async () => {
  const t = await newTenant();
  await setAccount(t, { wallet_balance: 0, billing_mode: 'postpaid' });
  const r = await api('POST', '/api/v3/sms/send', t.token, { recipients: [num(), num()], message: 'on account' });
  assert.equal(r.status, 201, r.text);
  assert.equal(await balanceOf(t), 0);
});

const messageRow = (uid: string) =>
  one<{ status: string; error_message: string | null }>(orm.em.fork(), 'select status, error_message from messages where uid = ?', [uid]);

test('a scheduled send of an account suspended before it is due fails with the reason and is not sent after reactivation', async () => {
  const t = await newTenant();
  const to = num();
  const due = new Date(Date.now() + 8000).toISOString();
  const r = await api('POST', '/api/v3/sms/send', t.token, { recipient: to, message: 'later', schedule_time: due });
  assert.equal(r.status, 201, r.text);
  const uid = r.body.data.messages[0].uid;
  assert.equal(r.body.data.messages[0].status, 'queued');
  await setAccount(t, { status: 'suspended' });

  const row = await eventually(
    () => messageRow(uid),
    (m) => m?.status === 'failed',
    30_000,
    500,
  );
  assert.deepEqual(row, { status: 'failed', error_message: 'Not sent: the account is suspended.' });
  await setAccount(t, { status: 'active' });
  const view = await api('GET', `/api/v3/sms/${uid}`, t.token);
  assert.deepEqual([view.body.data.status, view.body.data.error_message], ['failed', 'Not sent: the account is suspended.']);
  assert.equal(await smsSeen(to), 0, 'the simulator never saw it');
});

test('a queued batch message of a suspended account is failed by the dispatcher, not sent', async () => {
  const t = await newTenant();
  await setAccount(t, { status: 'suspended' });
  const to = num();
  const uid = `msg_suspended_${Date.now()}`;
  await orm.em.fork().execute(
    `with m as (insert into messages (uid, account_id, direction, channel_type, recipient, body, status, dispatch_mode, segments, encoding, created_at, updated_at)
     values (?, ?, 'outbound', 'sms', ?, 'queued before suspension', 'queued', 'batch', 1, 'GSM-7', now(), now()) returning id)
     insert into message_dispatch_batches (channel_type, message_ids, queued_at) select 'sms', array[id], now() from m`,
    [uid, t.accountId, to],
  );
  const row = await eventually(
    () => messageRow(uid),
    (m) => m?.status === 'failed',
    30_000,
    500,
  );
  assert.equal(row?.error_message, 'Not sent: the account is suspended.');
  assert.equal(await smsSeen(to), 0);
});

test('a campaign of a suspended account pauses before it sends; resumed after reactivation it completes', async () => {
  const t = await newTenant();
  const g = await http('POST', '/api/v3/contact-groups', { token: t.token, body: { name: 'Suspended audience' } });
  const to = num();
  assert.equal((await api('POST', `/api/v3/contacts/${g.body.data.id}/store`, t.legacyToken, { PHONE: to })).status, 201);
  const c = await api('POST', '/api/v3/sms/campaign', t.legacyToken, {
    contact_list_id: String(g.body.data.id),
    message: 'not while suspended',
    schedule_time: new Date(Date.now() + 8000).toISOString(),
  });
  assert.equal(c.status, 201, c.text);
  const uid = c.body.data.campaigns[0].uid;
  await setAccount(t, { status: 'suspended' });
  const campaign = () =>
    one<{ status: string; total_recipients: number }>(orm.em.fork(), 'select status, total_recipients from campaigns where uid = ?', [uid]);
  const paused = await eventually(campaign, (x) => x?.status === 'paused', 30_000, 500);
  assert.deepEqual(paused, { status: 'paused', total_recipients: 0 });
  assert.equal(await recordCount(t.accountId), 0);

  await setAccount(t, { status: 'active' });
  assert.equal(
    (await api('GET', `/api/v3/campaign/${uid}/view`, t.legacyToken)).body.data.status,
    'paused',
    'reactivation alone does not resume it',
  );
  assert.equal((await api('POST', `/api/v3/campaign/${uid}/resume`, t.legacyToken)).status, 200);
  await eventually(campaign, (x) => x?.status === 'completed', 30_000, 500);
  await eventually(
    () => smsSeen(to),
    (n) => n === 1,
  );
  assert.equal(await smsSeen(to), 1);
});
