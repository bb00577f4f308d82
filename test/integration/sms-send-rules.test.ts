import { test } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { api, admin, newTenant, eventually, sim, http, uniquePhone } from '../support/stack.js';

const num = () => uniquePhone('2556');
const simSeen = async (to: string) => (await sim('GET', `/_sim/sms/messages?to=${encodeURIComponent(to)}`)).body.messages as any[];

test('rule 1: recipient and recipients merge, exact duplicates dropped, one record each in order', async () => {
  const t = await newTenant();
  const [a, b, c] = [num(), num(), num()];
  const r = await api('POST', '/api/v3/sms/send', t.token, { recipient: `${a}, ${b};${a}`, recipients: [`${c} ${b}`], message: 'hi' });
  assert.equal(r.status, 201);
  const msgs = r.body.data.messages;
  assert.deepEqual(
    msgs.map((m: any) => m.recipient),
    [a, b, c],
  );
  assert.ok(msgs[0].id < msgs[1].id && msgs[1].id < msgs[2].id, 'processed sequentially');
  assert.equal(new Set(msgs.map((m: any) => m.uid)).size, 3);
});

test('rule 3: 201 even when some records failed; rule 4: an empty message gets a generic body', async () => {
  const t = await newTenant();
  const good = num();
  const r = await api('POST', '/api/v3/sms/send', t.token, { recipients: ['not-a-number', good], message: '' });
  assert.equal(r.status, 201);
  const [bad, ok] = r.body.data.messages;
  assert.equal(bad.status, 'failed');
  assert.match(bad.error_message, /not a valid phone number/);
  assert.notEqual(ok.status, 'failed');
  assert.equal(ok.error_message, null);
  assert.ok(ok.body.length > 0);
});

test('a national number (leading 0) without a known country is a failed record naming why, never sent as +0…', async () => {
  const t = await newTenant();
  const good = num();
  const national = `0${good.slice(4)}`; // +255 6… written nationally: 06…
  const r = await api('POST', '/api/v3/sms/send', t.token, { recipients: [national, good], message: 'hello' });
  assert.equal(r.status, 201, r.text);
  const [bad, ok] = r.body.data.messages;
  assert.deepEqual([bad.recipient, bad.status], [national, 'failed']);
  assert.match(bad.error_message, /national number .*international format/);
  // The good one reaching the gateway shows the request went through; the national one never does.
  await eventually(
    () => simSeen(good),
    (seen) => seen.length === 1,
  );
  for (const to of [national, `+${national}`]) assert.deepEqual(await simSeen(to), [], `nothing sent to ${to}`);
  assert.equal((await api('GET', `/api/v3/sms/${bad.uid}`, t.token)).body.data.status, 'failed');
  assert.equal(ok.error_message, null);
});

test('message wins over body; message_type wins over type; unknown types are 422', async () => {
  const t = await newTenant();
  const r = await api('POST', '/api/v3/sms/send', t.token, {
    recipient: num(),
    message: 'from message',
    body: 'from body',
    message_type: 'sms',
    type: 'whatsapp',
  });
  assert.equal(r.status, 201);
  assert.equal(r.body.data.messages[0].body, 'from message');
  assert.equal(r.body.data.messages[0].channel_type, 'sms');
  const b = await api('POST', '/api/v3/sms/send', t.token, { recipient: num(), body: 'only body', type: 'plain' });
  assert.equal(b.body.data.messages[0].body, 'only body');
  const bad = await api('POST', '/api/v3/sms/send', t.token, { recipient: num(), message: 'x', message_type: 'fax' });
  assert.equal(bad.status, 422);
  assert.ok(bad.body.errors.message_type);
  const badType = await api('POST', '/api/v3/sms/send', t.token, { recipient: num(), message: 'x', type: 'carrier-pigeon' });
  assert.ok(badType.body.errors.type);
});

test('rule 5 and 7: tenant_channel_id is ignored and Idempotency-Key has no effect', async () => {
  const t = await newTenant();
  const to = num();
  const send = () =>
    http('POST', '/api/v3/sms/send', {
      token: t.token,
      body: { recipient: to, message: 'twice', tenant_channel_id: 999999 },
      headers: { 'idempotency-key': 'same-key' },
    });
  const [one, two] = [await send(), await send()];
  assert.equal(one.status, 201);
  assert.equal(two.status, 201);
  assert.notEqual(one.body.data.messages[0].uid, two.body.data.messages[0].uid);
  assert.notEqual(one.body.data.messages[0].tenant_channel_id, 999999);
  const seen = await eventually(
    () => simSeen(to),
    (l) => l.length === 2,
  );
  assert.equal(seen.length, 2);
});

test('every field limit answers 422 keyed by field', async () => {
  const t = await newTenant();
  const cases: Array<[Record<string, unknown>, string]> = [
    [{ recipient: 'x'.repeat(4001) }, 'recipient'],
    [{ recipients: ['1'.repeat(192)] }, 'recipients.0'],
    [{ sender_id: 's'.repeat(65) }, 'sender_id'],
    [{ message: 'm'.repeat(4097) }, 'message'],
    [{ body: 'b'.repeat(4097) }, 'body'],
    [{ message_type: 't'.repeat(61) }, 'message_type'],
    [{ type: 't'.repeat(61) }, 'type'],
    [{ schedule_time: '2'.repeat(101) }, 'schedule_time'],
    [{ media_url: 'u'.repeat(2049) }, 'media_url'],
    [{ media_type: 'm'.repeat(33) }, 'media_type'],
    [{ schedule_time: 'tomorrow at nine' }, 'schedule_time'],
    [{ schedule_time: '2026-12-01T09:00:00' }, 'schedule_time'],
  ];
  for (const [extra, field] of cases) {
    const r = await api('POST', '/api/v3/sms/send', t.token, { recipient: num(), message: 'ok', ...extra });
    assert.equal(r.status, 422, JSON.stringify(extra).slice(0, 80));
    assert.ok(r.body.errors[field], `${field}: ${JSON.stringify(r.body.errors)}`);
  }
});

test('segments are estimated per record; media_url asks the gateway for an MMS-style send', async () => {
  const t = await newTenant();
  const to = num();
  const r = await api('POST', '/api/v3/sms/send', t.token, {
    recipients: [to, num()],
    message: 'ж'.repeat(71),
    media_url: 'https://example.com/cat.jpg',
    media_type: 'image/jpeg',
  });
  const m = r.body.data.messages[0];
  assert.equal(m.segments, 2);
  assert.equal(m.encoding, 'UCS-2');
  assert.equal(m.media_url, 'https://example.com/cat.jpg');
  const seen = await eventually(
    () => simSeen(to),
    (l) => l.length === 1,
  );
  assert.deepEqual(seen[0].mediaUrls, ['https://example.com/cat.jpg']);
});

test('rule 6: sender_id resolves to exactly one usable identity, else a validation error', async () => {
  const t = await newTenant();
  const A = `/accounts/${t.accountId}`;
  await admin('POST', `${A}/sender-ids`, { value: 'ACME', approval_status: 'approved' });
  await admin('POST', `${A}/sender-ids`, { value: 'PENDING', approval_status: 'pending' });
  await admin('POST', `${A}/phone-numbers`, { number: '+255744000001', capabilities: ['sms'] });
  await admin('POST', `${A}/phone-numbers`, { number: '+255744000002', capabilities: ['sms'], released: true });
  await admin('POST', `${A}/phone-numbers`, { number: '+255744000003', capabilities: ['voice'] });
  await admin('POST', `${A}/short-codes`, { code: '15001', assignment_status: 'active' });
  await admin('POST', `${A}/short-codes`, { code: '15002', assignment_status: 'inactive' });
  await admin('POST', `${A}/sender-ids`, { value: '15001', approval_status: 'approved' });
  const send = (sender_id: string) => api('POST', '/api/v3/sms/send', t.token, { recipient: num(), message: 'x', sender_id });

  for (const ok of ['ACME', 'acme', '+255744000001', '255744000001']) {
    const r = await send(ok);
    assert.equal(r.status, 201, ok);
    assert.equal(r.body.data.messages[0].channel_code, 'system-sms');
    assert.equal(typeof r.body.data.messages[0].tenant_channel_id, 'number');
  }
  assert.equal((await send('ACME')).body.data.messages[0].sender, 'ACME');
  for (const bad of ['UNKNOWN', 'PENDING', '+255744000002', '+255744000003', '15002', '15001']) {
    const r = await send(bad);
    assert.equal(r.status, 422, bad);
    assert.ok(r.body.errors.sender_id, bad);
  }
});

test('without sender_id the account default SMS channel is used, then the system default', async () => {
  const t = await newTenant();
  const sys = await api('POST', '/api/v3/sms/send', t.token, { recipient: num(), message: 'x' });
  assert.equal(sys.body.data.messages[0].channel_code, 'system-sms');
  const ch = await admin('POST', `/accounts/${t.accountId}/channels`, { channel_type: 'sms', code: 'acme-route', is_default: true });
  const own = await api('POST', '/api/v3/sms/send', t.token, { recipient: num(), message: 'x' });
  assert.equal(own.body.data.messages[0].channel_code, 'acme-route');
  assert.equal(own.body.data.messages[0].tenant_channel_id, ch.body.data.id);
  const senders = await api('GET', '/api/v3/sms/senders', t.token);
  assert.equal(senders.status, 200);
  assert.equal(senders.body.data.default_channel.channel_code, 'acme-route');
});

test('with no route at all (no default of its own, no system default) a send without sender_id is a 422 that debits and writes nothing', async () => {
  const t = await newTenant();
  const db = new pg.Client({ connectionString: process.env.DATABASE_URL });
  await db.connect();
  const balance = async () => (await api('GET', '/api/v3/balance', t.token)).body.data.balance;
  const before = await balance();
  const count = async () => Number((await db.query('select count(*) as n from messages where account_id = $1', [t.accountId])).rows[0].n);
  // The system default is every account's: taken away only for this test, and given back whatever happens.
  await db.query(`update channels set active = false where account_id is null and channel_type = 'sms' and code = 'system-sms'`);
  try {
    for (const body of [
      { recipient: num(), message: 'no route' }, // the one statement (debit and records together)
      { recipients: ['not-a-number', num()], message: 'no route' }, // the transaction (a record refused up front)
    ]) {
      const r = await api('POST', '/api/v3/sms/send', t.token, body);
      assert.equal(r.status, 422, r.text);
      assert.deepEqual(r.body.errors.sender_id, ['No SMS route is configured for this account.']);
    }
    assert.equal(await count(), 0, 'no record written');
    assert.equal(await balance(), before, 'nothing debited');
  } finally {
    await db.query(`update channels set active = true where account_id is null and channel_type = 'sms' and code = 'system-sms'`);
    await db.end();
  }
  const sent = await api('POST', '/api/v3/sms/send', t.token, { recipient: num(), message: 'route back' });
  assert.equal(sent.status, 201);
  assert.equal(sent.body.data.messages[0].channel_code, 'system-sms');
});

test('immediate sends answer their first outcome: sent with a gateway id, or failed with the provider refusal', async () => {
  const t = await newTenant();
  const ok = await api('POST', '/api/v3/sms/send', t.token, { recipient: num(), message: 'now' });
  const m = ok.body.data.messages[0];
  assert.ok(['sent', 'delivered'].includes(m.status), m.status);
  assert.match(m.gateway_message_id, /^SM/);
  assert.ok(m.sent_at);
  const optedOut = num();
  await sim('POST', '/_sim/config', { optOuts: [optedOut] });
  const refused = await api('POST', '/api/v3/sms/send', t.token, { recipient: optedOut, message: 'no' });
  assert.equal(refused.status, 201);
  assert.equal(refused.body.data.messages[0].status, 'failed');
  assert.match(refused.body.data.messages[0].error_message, /21610/);
});

test('a slow provider never blocks the request: the record answers queued and the workflow carries on', async () => {
  const t = await newTenant();
  const to = num();
  await sim('POST', '/_sim/faults', { provider: 'sms', kind: 'timeout', to, count: 1 });
  const started = Date.now();
  const r = await api('POST', '/api/v3/sms/send', t.token, { recipient: to, message: 'slow' });
  const took = Date.now() - started;
  assert.equal(r.status, 201);
  assert.ok(['queued', 'processing'].includes(r.body.data.messages[0].status), r.body.data.messages[0].status);
  assert.ok(took < 5000, `answered in ${took} ms`);
});
