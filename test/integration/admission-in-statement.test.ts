// Requests authenticated by their own statement (api/http/auth.ts admittedInStatement): a data record create
// of a token this API process admitted before counts the request in the key's window and writes the
// record in one statement, only while the key is admitted as exactly the principal it had then and
// the request fits the window. Every change authentication can see must win, nothing may be written
// for a refused request, and every request is counted once.
// @test-alone: it reads the API process's admission counters, which other files' creates would move.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { openOrm } from '../../entities/orm.js';
import { one } from '../../entities/db.js';
import { OPERATOR_TOKEN, admin, api, http, newTenant, type Tenant } from '../support/stack.js';
import { paymentsOf } from '../support/payments.js';

const orm = await openOrm(process.env.DATABASE_URL!, 2);
after(() => orm.close());

async function admissions(): Promise<Record<'admitted' | 'refused' | 'fallback', number>> {
  const text = (await http('GET', '/metrics', { token: OPERATOR_TOKEN })).text;
  const count = (outcome: string) =>
    Number(new RegExp(`^http_admissions_in_statement_total\\{outcome="${outcome}"\\} (\\d+)`, 'm').exec(text)?.[1] ?? 0);
  return { admitted: count('admitted'), refused: count('refused'), fallback: count('fallback') };
}
const delta = (a: Record<string, number>, b: Record<string, number>) => Object.fromEntries(Object.keys(a).map((k) => [k, b[k] - a[k]]));

/** Records and history entries of the table, counted in the database. */
async function written(tableId: string): Promise<{ records: number; history: number }> {
  const r = await one<{ records: string; history: string }>(
    orm.em.fork(),
    `select (select count(*) from data_records where table_id = ?::uuid)::text as records,
            (select count(*) from data_record_history where table_id = ?::uuid)::text as history`,
    [tableId, tableId],
  );
  return { records: Number(r!.records), history: Number(r!.history) };
}

async function tenantWithTable(): Promise<{ t: Tenant; table: string }> {
  const t = await newTenant();
  const made = await admin('POST', `/accounts/${t.accountUid}/data/tables`, {
    name: `Admission ${Date.now()}`,
    columns: [
      { key: 'name', type: 'text', required: true },
      { key: 'size', type: 'number' },
    ],
  });
  assert.equal(made.status, 201, made.text);
  return { t, table: (made.body.data ?? made.body).id };
}

const create = (t: Tenant, table: string, data: Record<string, unknown>) =>
  api('POST', `/api/v3/data/tables/${table}/records`, t.token, { data });
const remaining = (r: { headers: Headers }) => Number(r.headers.get('x-ratelimit-remaining'));

let t: Tenant;
let table: string;
before(async () => {
  ({ t, table } = await tenantWithTable());
});

test('a create of a known token is admitted and written by one statement, counted once', async () => {
  const first = await create(t, table, { name: 'first' });
  assert.equal(first.status, 201, first.text);
  const start = await admissions();
  let last = remaining(first);
  for (let i = 0; i < 5; i++) {
    const r = await create(t, table, { name: `n${i}`, size: i });
    assert.equal(r.status, 201, r.text);
    assert.equal(r.body.record.data.name, `n${i}`);
    assert.equal(remaining(r), last - 1, 'each request counted exactly once in the window');
    last = remaining(r);
  }
  assert.deepEqual(delta(start, await admissions()), { admitted: 5, refused: 0, fallback: 0 });
  assert.deepEqual(await written(table), { records: 6, history: 6 });

  // The write's own refusal (a required value missing) after a statement-less path: counted once, nothing written.
  const bad = await create(t, table, { size: 3 });
  assert.equal(bad.status, 422, bad.text);
  assert.equal(remaining(bad), last - 1);
  assert.deepEqual(await written(table), { records: 6, history: 6 });
});

test('a changed principal is written once, as the principal authentication reads now', async () => {
  assert.equal((await create(t, table, { name: 'before' })).status, 201);
  const { records } = await written(table);
  // The account's name is part of the principal: the statement admits nothing and counts nothing; the plain authentication does.
  assert.equal((await admin('PATCH', `/accounts/${t.accountId}`, { name: `Renamed ${Date.now()}` })).status, 200);
  const start = await admissions();
  const r = await create(t, table, { name: 'after the change' });
  assert.equal(r.status, 201, r.text);
  assert.deepEqual(delta(start, await admissions()), { admitted: 0, refused: 0, fallback: 1 });
  assert.equal((await written(table)).records, records + 1, 'one record, not two');
  // Remembered afresh: the next create is admitted in its statement again.
  const again = await create(t, table, { name: 'again' });
  assert.equal(again.status, 201);
  assert.equal(remaining(again), remaining(r) - 1);
  assert.equal(delta(start, await admissions()).admitted, 1);
});

test('permissions, issuer, suspension and revocation refuse the create, and nothing is written', async () => {
  const { t, table } = await tenantWithTable();
  assert.equal((await create(t, table, { name: 'known' })).status, 201);
  const base = await written(table);

  assert.equal((await admin('PATCH', `/accounts/${t.accountId}/users/${t.userId}`, { permissions: ['data.view'] })).status, 200);
  const denied = await create(t, table, { name: 'no permission' });
  assert.equal(denied.status, 403, denied.text);
  assert.equal((await admin('PATCH', `/accounts/${t.accountId}/users/${t.userId}`, { permissions: ['*'] })).status, 200);
  assert.equal((await create(t, table, { name: 'allowed again' })).status, 201);

  assert.equal((await admin('PATCH', `/accounts/${t.accountId}/users/${t.userId}`, { active: false })).status, 200);
  assert.equal((await create(t, table, { name: 'issuer inactive' })).status, 403);
  assert.equal((await admin('PATCH', `/accounts/${t.accountId}/users/${t.userId}`, { active: true })).status, 200);
  assert.equal((await create(t, table, { name: 'issuer active' })).status, 201);

  assert.equal((await admin('PATCH', `/accounts/${t.accountId}`, { status: 'suspended' })).status, 200);
  const suspended = await create(t, table, { name: 'suspended' });
  assert.equal(suspended.status, 403, suspended.text);
  assert.equal((await admin('PATCH', `/accounts/${t.accountId}`, { status: 'active' })).status, 200);
  assert.equal((await create(t, table, { name: 'active' })).status, 201);

  const keys = await admin('GET', `/accounts/${t.accountId}/keys`);
  const key = keys.body.data.find((k: { user_id: number | null }) => k.user_id === t.userId);
  assert.equal((await admin('DELETE', `/accounts/${t.accountId}/keys/${key.id}`)).status, 200);
  const revoked = await create(t, table, { name: 'revoked' });
  assert.equal(revoked.status, 401);
  assert.equal(revoked.body.message, 'API token has been revoked.');

  const now = await written(table);
  assert.deepEqual(now, { records: base.records + 3, history: base.history + 3 }, 'only the three admitted creates');
  const names = await one<{ names: string[] }>(
    orm.em.fork(),
    `select array_agg(data->>'name' order by seq) as names from data_records where table_id = ?::uuid`,
    [table],
  );
  assert.deepEqual(names!.names, ['known', 'allowed again', 'issuer active', 'active']);
});

test('over the window the statement refuses with 429 and writes nothing', async () => {
  const { t, table } = await tenantWithTable();
  const start = await admissions();
  let created = 0;
  let refusal: Awaited<ReturnType<typeof create>> | null = null;
  // The stack allows 120 requests a minute per key: the refusal comes within a few more.
  for (let i = 0; i < 130 && !refusal; i++) {
    const r = await create(t, table, { name: `r${i}` });
    if (r.status === 201) created++;
    else refusal = r;
  }
  assert.ok(refusal, 'refused within 130 requests');
  assert.equal(refusal.status, 429, refusal.text);
  assert.ok(Number(refusal.headers.get('retry-after')) >= 1);
  assert.equal(remaining(refusal), 0);
  assert.ok(created >= 110, `${created} admitted before the refusal`);
  const again = await create(t, table, { name: 'still over' });
  assert.equal(again.status, 429);
  assert.deepEqual(await written(table), { records: created, history: created }, 'nothing written for the refused requests');
  const d = delta(start, await admissions());
  assert.equal(d.refused, 2, 'both refusals decided by the write statement');
  assert.equal(d.admitted, created - 1, 'every create after the first (which made the token known) admitted in its statement');
});

// SMS sends: the send statement (wallet debit and records) makes the request's admission too. The
// wallet's balance is left out of the principal's digest, or every send would make the next one a
// different principal.
const send = (t: Tenant, token = t.token) =>
  api('POST', '/api/v3/sms/send', token, { recipient: `+2557${String(Date.now()).slice(-8)}`, message: 'admitted' });

async function sends(accountId: number): Promise<{ messages: number; balance: number }> {
  const r = await one<{ messages: string; balance: string }>(
    orm.em.fork(),
    `select (select count(*) from messages where account_id = ?)::text as messages, (select wallet_balance from accounts where id = ?)::text as balance`,
    [accountId, accountId],
  );
  return { messages: Number(r!.messages), balance: Number(r!.balance) };
}

test('a send of a known token is admitted and written by one statement, counted once, though each send moves the balance', async () => {
  const t = await newTenant();
  const first = await send(t);
  assert.equal(first.status, 201, first.text);
  const start = await admissions();
  let last = remaining(first);
  for (let i = 0; i < 4; i++) {
    const r = await send(t);
    assert.equal(r.status, 201, r.text);
    assert.equal(r.body.data.messages.length, 1);
    assert.equal(remaining(r), last - 1, 'each send counted exactly once in the window');
    last = remaining(r);
  }
  assert.deepEqual(delta(start, await admissions()), { admitted: 4, refused: 0, fallback: 0 });
  assert.deepEqual(await sends(t.accountId), { messages: 5, balance: 99.95 });

  // A number refused up front takes the transaction's path (its message.failed event commits with
  // the records): the admission is made on its own first, the request still counted once.
  const mixed = await api('POST', '/api/v3/sms/send', t.token, { recipients: ['not-a-number', '+255712345678'], message: 'mixed' });
  assert.equal(mixed.status, 201, mixed.text);
  assert.deepEqual(
    mixed.body.data.messages.map((m: { status: string }) => m.status === 'failed'),
    [true, false],
  );
  assert.equal(remaining(mixed), last - 1);
  assert.deepEqual(delta(start, await admissions()), { admitted: 5, refused: 0, fallback: 0 });
  assert.deepEqual(await sends(t.accountId), { messages: 7, balance: 99.94 });
});

test('a send its statement refuses writes and debits nothing: an empty wallet (402, counted), over the window (429), a revoked key (401)', async () => {
  const t = await newTenant();
  assert.equal((await send(t)).status, 201);
  const start = await admissions();

  assert.equal((await admin('PATCH', `/accounts/${t.accountId}`, { wallet_balance: 0 })).status, 200);
  const before = remaining(await http('GET', '/api/v3/sms/senders', { token: t.token }));
  const broke = await send(t);
  assert.equal(broke.status, 402, broke.text);
  assert.deepEqual([broke.body.status, broke.body.reason], ['error', 'insufficient_balance']);
  assert.equal(remaining(broke), before - 1, 'admitted and counted by the statement, then refused by the wallet');
  assert.deepEqual(await sends(t.accountId), { messages: 1, balance: 0 });
  assert.deepEqual(delta(start, await admissions()), { admitted: 1, refused: 0, fallback: 0 });

  assert.equal((await admin('PATCH', `/accounts/${t.accountId}`, { wallet_balance: 100 })).status, 200);
  // The key's window filled by reads (counted by the plain authentication); the send is then refused by its statement.
  for (let i = 0; i < 130; i++) if ((await http('GET', '/api/v3/sms/senders', { token: t.token })).status === 429) break;
  const over = await send(t);
  assert.equal(over.status, 429, over.text);
  assert.deepEqual(delta(start, await admissions()), { admitted: 1, refused: 1, fallback: 0 });
  assert.deepEqual(await sends(t.accountId), { messages: 1, balance: 100 });

  const keys = await admin('GET', `/accounts/${t.accountId}/keys`);
  const key = keys.body.data.find((k: { user_id: number | null }) => k.user_id === t.userId);
  assert.equal((await admin('DELETE', `/accounts/${t.accountId}/keys/${key.id}`)).status, 200);
  const revoked = await send(t);
  assert.equal(revoked.status, 401, revoked.text);
  assert.equal(revoked.body.message, 'API token has been revoked.');
  assert.deepEqual(await sends(t.accountId), { messages: 1, balance: 100 });
});

// Reads too: a payments page by subject_id is one statement planned once per connection, which
// makes the request's admission as well (services/payments/store.ts); nothing is read for a refused
// request, and a request without subject_id starts beside its authentication as other reads do.
const payments = paymentsOf(orm);
const bySubject = (t: Tenant, subject: string, token = t.token) =>
  api('GET', `/api/v3/payments?subject_id=${encodeURIComponent(subject)}`, token);

test('a payments page by subject_id is admitted by its own statement: the same answer, counted once', async () => {
  const t = await newTenant();
  const other = await newTenant();
  const a = await payments.request(t.accountId, { subjectId: 'order-7', subjectType: 'order' });
  const b = await payments.request(t.accountId, { subjectId: 'order-7', subjectType: 'order' });
  await payments.request(t.accountId, { subjectId: 'order-8', subjectType: 'order' });
  await payments.request(other.accountId, { subjectId: 'order-7', subjectType: 'order' });

  const first = await bySubject(t, 'order-7');
  assert.equal(first.status, 200, first.text);
  const start = await admissions();
  let last = remaining(first);
  for (let i = 0; i < 3; i++) {
    const r = await bySubject(t, 'order-7');
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(
      r.body.data.map((p: { id: string }) => p.id),
      [b.id, a.id],
      'the account’s two, newest first; not the other account’s',
    );
    assert.deepEqual(r.body.meta, { current_page: 1, per_page: 25, total: 2, last_page: 1 });
    assert.equal(remaining(r), last - 1, 'each request counted exactly once in the window');
    last = remaining(r);
  }
  const past = await api('GET', '/api/v3/payments?subject_id=order-7&page=2&per_page=2', t.token);
  assert.equal(past.status, 200, past.text);
  assert.deepEqual(past.body.data, []);
  assert.equal(past.body.meta.total, 2, 'a page past the end still has the total');
  const open = await api('GET', '/api/v3/payments?subject_id=order-7&state=paid', t.token);
  assert.equal(open.body.meta.total, 0);
  assert.deepEqual(delta(start, await admissions()), { admitted: 5, refused: 0, fallback: 0 });

  // The whole list (no subject_id) is not made by one statement: no admission in it.
  assert.equal((await api('GET', '/api/v3/payments', t.token)).status, 200);
  assert.deepEqual(delta(start, await admissions()), { admitted: 5, refused: 0, fallback: 0 });

  // A bad query after the admission path: refused as the query's refusal, counted once.
  const bad = await api('GET', '/api/v3/payments?subject_id=order-7&page=0', t.token);
  assert.equal(bad.status, 422, bad.text);
});

test('a payments page by subject_id: the account, permissions, issuer, suspension and revocation win at the next request', async () => {
  const t = await newTenant();
  await payments.request(t.accountId, { subjectId: 'order-1', subjectType: 'order' });
  assert.equal((await bySubject(t, 'order-1')).status, 200);

  // The account's name is part of the principal (its balance is not): the statement reads and counts nothing; the plain authentication does.
  let start = await admissions();
  assert.equal((await admin('PATCH', `/accounts/${t.accountId}`, { name: `Renamed ${Date.now()}` })).status, 200);
  const changed = await bySubject(t, 'order-1');
  assert.equal(changed.status, 200, changed.text);
  assert.equal(changed.body.meta.total, 1);
  assert.deepEqual(delta(start, await admissions()), { admitted: 0, refused: 0, fallback: 1 });

  assert.equal((await admin('PATCH', `/accounts/${t.accountId}/users/${t.userId}`, { permissions: ['data.view'] })).status, 200);
  const denied = await bySubject(t, 'order-1');
  assert.equal(denied.status, 403, denied.text);
  assert.ok(!('data' in denied.body), 'no rows leave with a refusal');
  assert.equal((await admin('PATCH', `/accounts/${t.accountId}/users/${t.userId}`, { permissions: ['payments.view'] })).status, 200);
  assert.equal((await bySubject(t, 'order-1')).status, 200);

  assert.equal((await admin('PATCH', `/accounts/${t.accountId}/users/${t.userId}`, { active: false })).status, 200);
  assert.equal((await bySubject(t, 'order-1')).status, 403);
  assert.equal((await admin('PATCH', `/accounts/${t.accountId}/users/${t.userId}`, { active: true })).status, 200);
  assert.equal((await bySubject(t, 'order-1')).status, 200);

  assert.equal((await admin('PATCH', `/accounts/${t.accountId}`, { status: 'suspended' })).status, 200);
  const suspended = await bySubject(t, 'order-1');
  assert.equal(suspended.status, 403, suspended.text);
  assert.deepEqual(suspended.body, { status: 'error', message: 'This account is suspended.', reason: 'account_suspended' });
  assert.equal((await admin('PATCH', `/accounts/${t.accountId}`, { status: 'active' })).status, 200);
  assert.equal((await bySubject(t, 'order-1')).status, 200);

  const keys = await admin('GET', `/accounts/${t.accountId}/keys`);
  const key = keys.body.data.find((k: { user_id: number | null }) => k.user_id === t.userId);
  assert.equal((await admin('DELETE', `/accounts/${t.accountId}/keys/${key.id}`)).status, 200);
  start = await admissions();
  const revoked = await bySubject(t, 'order-1');
  assert.equal(revoked.status, 401);
  assert.equal(revoked.body.message, 'API token has been revoked.');
  assert.deepEqual(
    delta(start, await admissions()),
    { admitted: 0, refused: 0, fallback: 1 },
    'the revoked key was tried in the statement first',
  );
});

test('a payments page by subject_id over the window is refused 429 by its statement', async () => {
  const t = await newTenant();
  const start = await admissions();
  let served = 0;
  let refusal: Awaited<ReturnType<typeof bySubject>> | null = null;
  for (let i = 0; i < 130 && !refusal; i++) {
    const r = await bySubject(t, `order-${i}`);
    if (r.status === 200) served++;
    else refusal = r;
  }
  assert.ok(refusal, 'refused within 130 requests');
  assert.equal(refusal.status, 429, refusal.text);
  assert.ok(!('data' in refusal.body));
  assert.ok(served >= 110, `${served} served before the refusal`);
  const d = delta(start, await admissions());
  assert.equal(d.refused, 1, 'the refusal decided by the page statement');
  assert.equal(d.admitted, served - 1, 'every page after the first (which made the token known) admitted in its statement');
});
