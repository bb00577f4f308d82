import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { openOrm } from '../../entities/orm.js';
import { one } from '../../entities/db.js';
import { admin, api, newTenant, type Tenant } from '../support/stack.js';

// Record writes, history and masks (issue 14, points 4, 5, 6 and the write side of 10): every field
// type coerced and stored as the field value rules say, required/unique/status/size/quota refusals
// that leave nothing behind, soft delete, history paging, masks per caller, other accounts' ids.
// Tables are made through the operator API, as an operator would.

const orm = await openOrm(process.env.DATABASE_URL!, 4);
after(() => orm.close());
const em = () => orm.em.fork();

const T = (table: string) => `/api/v3/data/tables/${table}/records`;

async function makeTable(t: Tenant, body: Record<string, unknown>): Promise<{ id: string; columns: { key: string }[] }> {
  const r = await admin('POST', `/accounts/${t.accountUid}/data/tables`, body);
  assert.equal(r.status, 201, r.text);
  return r.body.data ?? r.body;
}

/** A user of the tenant's account holding only `permissions`, and a key it issued. */
async function limitedKey(t: Tenant, permissions: string[]): Promise<string> {
  const user = await admin('POST', `/accounts/${t.accountId}/users`, {
    email: `limited-${Date.now()}-${Math.random().toString(36).slice(2)}@example.com`,
    name: 'Limited',
    permissions,
  });
  assert.equal(user.status, 201, user.text);
  const key = await admin('POST', `/accounts/${t.accountId}/keys`, { name: 'limited key', user_id: user.body.data.id });
  assert.equal(key.status, 201, key.text);
  return key.body.data.token;
}

/** A key of the tenant's full user for one test: the API limits requests per key and minute. */
async function freshKey(t: Tenant): Promise<string> {
  const key = await admin('POST', `/accounts/${t.accountId}/keys`, { name: 'test key', user_id: t.userId });
  assert.equal(key.status, 201, key.text);
  return key.body.data.token;
}

/** What a refusal must leave as it was: the table's counters and its history rows. */
async function footprint(tableId: string) {
  return one<{ records_count: number; storage_bytes: string; history: string; records: string; guards: string }>(
    em(),
    `select records_count, storage_bytes::text as storage_bytes,
            (select count(*) from data_record_history where table_id = t.id)::text as history,
            (select count(*) from data_records where table_id = t.id)::text as records,
            (select count(*) from data_unique_values where table_id = t.id)::text as guards
       from data_tables t where id = ?::uuid`,
    [tableId],
  );
}

let tenant: Tenant;
let other: Tenant;
let people: { id: string };
let kinds: { id: string };
let personId: string;
before(async () => {
  [tenant, other] = await Promise.all([newTenant(), newTenant()]);
  people = await makeTable(tenant, {
    name: 'People',
    title_column: 'name',
    masks: [{ column: 'name', unless_permission: 'data.grants.pii', style: 'full' }],
    columns: [
      { key: 'name', type: 'text', required: true },
      { key: 'code', type: 'text', unique: true },
    ],
  });
  const p = await api('POST', T(people.id), tenant.token, { data: { name: 'Asha Juma' } });
  assert.equal(p.status, 201, p.text);
  personId = p.body.record.id;
  kinds = await makeTable(tenant, {
    name: 'Every kind',
    columns: [
      { key: 'title', type: 'text', required: true },
      { key: 'body', type: 'long_text' },
      { key: 'qty', type: 'number', config: { precision: 2, min: 0, max: 1000 } },
      { key: 'price', type: 'currency' },
      { key: 'ok', type: 'boolean' },
      { key: 'day', type: 'date' },
      { key: 'at', type: 'datetime' },
      { key: 'phone', type: 'phone' },
      { key: 'ke_phone', type: 'phone', config: { region: 'KE' } },
      { key: 'mail', type: 'email' },
      {
        key: 'color',
        type: 'select',
        config: {
          options: [
            { key: 'red', label: 'Red' },
            { key: 'blue', label: 'Blue' },
          ],
        },
      },
      {
        key: 'tags',
        type: 'multi_select',
        config: {
          options: [
            { key: 'a', label: 'A' },
            { key: 'b', label: 'B' },
            { key: 'c', label: 'C' },
          ],
        },
      },
      { key: 'person', type: 'relation', config: { table_id: people.id } },
      { key: 'doc', type: 'file' },
      { key: 'docs', type: 'file', config: { multiple: true } },
      { key: 'no', type: 'auto_number' },
      { key: 'size', type: 'text', config: { default: 'M' } },
      { key: 'legacy', type: 'unknown', stored_type: 'formula' },
    ],
  });
});

test('every field type is coerced and stored as the field value rules say; auto_number issued 1, 2, 3; source api', async () => {
  const token = await freshKey(tenant);
  const sent = {
    title: 'First',
    body: 'Long\ntext',
    qty: '12.345',
    price: 1500.5,
    ok: false,
    day: '2024-02-29',
    at: '2024-05-01T13:00:00+03:00',
    phone: '0712 345 678',
    ke_phone: '0712 345678',
    mail: 'Jane@Example.COM',
    color: 'blue',
    tags: ['c', 'a'],
    person: { id: personId.toUpperCase() },
    doc: { name: 'a.pdf', url: 'https://files.example/a.pdf', size: 10, mime: 'application/pdf' },
    docs: { name: 'one.png' },
  };
  const c = await api('POST', T(kinds.id), token, { data: sent });
  assert.equal(c.status, 201, c.text);
  const want = {
    title: 'First',
    body: 'Long\ntext',
    qty: 12.35,
    price: 1501,
    ok: false,
    day: '2024-02-29',
    at: '2024-05-01T10:00:00.000Z',
    phone: '+255712345678',
    ke_phone: '+254712345678',
    mail: 'Jane@example.com',
    color: 'blue',
    tags: ['a', 'c'],
    person: personId,
    doc: { name: 'a.pdf', url: 'https://files.example/a.pdf', size: 10, mime: 'application/pdf' },
    docs: [{ name: 'one.png' }],
    no: 1,
    size: 'M',
  };
  assert.deepEqual(c.body.record.data, want);
  assert.equal(c.body.record.source, 'api');
  assert.equal(c.body.record.title, 'First');
  assert.deepEqual(c.body.record.titles, { [personId]: 'Asha Juma' });
  // Data keys come back in column order.
  assert.deepEqual(Object.keys(c.body.record.data), Object.keys(want));

  const g = await api('GET', `${T(kinds.id)}/${c.body.record.id}`, token);
  assert.equal(g.status, 200, g.text);
  assert.deepEqual(g.body.record, c.body.record);

  const second = await api('POST', T(kinds.id), token, { data: { title: 'Second', qty: 0 } });
  const third = await api('POST', T(kinds.id), token, { data: { title: 'Third', size: null } });
  assert.equal(second.body.record.data.no, 2);
  assert.equal(third.body.record.data.no, 3);
  assert.ok(!('size' in third.body.record.data), 'null on create: no default');
  // source never changes, not even when a PATCH names it (it is not a column: refused).
  const p = await api('PATCH', `${T(kinds.id)}/${second.body.record.id}`, token, { data: { source: 'import' } });
  assert.equal(p.status, 422, p.text);
  assert.deepEqual(Object.keys(p.body.errors), ['source']);
});

test('refused values: every problem named at once, unknown keys, auto_number and unknown columns; nothing written', async () => {
  const token = await freshKey(tenant);
  const beforeCounts = await footprint(kinds.id);
  const r = await api('POST', T(kinds.id), token, {
    data: {
      qty: 1000.01,
      price: 'TZS 5',
      ok: 'yes',
      day: '2023-02-29',
      at: '2024-05-01T10:00:00',
      phone: '0212345678',
      mail: 'not-an-address',
      color: 'Blue',
      tags: ['a', 'a'],
      person: 'nope',
      doc: [{ name: 'x' }],
      no: 7,
      legacy: 'x',
      bogus: 1,
      "name'); drop table data_records; --": 1,
    },
  });
  assert.equal(r.status, 422, r.text);
  assert.equal(r.body.error.code, 'validation_error');
  assert.equal(r.body.code, 'validation_error');
  assert.equal(r.body.error.retryable, false);
  assert.deepEqual(
    Object.keys(r.body.errors).sort(),
    [
      'title',
      'qty',
      'price',
      'ok',
      'day',
      'at',
      'phone',
      'mail',
      'color',
      'tags',
      'person',
      'doc',
      'no',
      'legacy',
      'bogus',
      "name'); drop table data_records; --",
    ].sort(),
  );
  assert.match(r.body.errors.no[0], /written by the service/);
  assert.deepEqual(await footprint(kinds.id), beforeCounts);

  // A body key other than data, or no data at all, is refused by the schema.
  assert.equal((await api('POST', T(kinds.id), token, { data: { title: 'x' }, extra: 1 })).status, 422);
  assert.equal((await api('POST', T(kinds.id), token, { title: 'x' })).status, 422);
  assert.equal((await api('POST', T(kinds.id), token, { data: [] })).status, 422);
  assert.deepEqual(await footprint(kinds.id), beforeCounts);
});

test('relations must name a live record of the related table', async () => {
  const token = await freshKey(tenant);
  const stranger = await api('POST', T(kinds.id), token, { data: { title: 'x', person: crypto.randomUUID() } });
  assert.equal(stranger.status, 422);
  assert.ok(stranger.body.errors.person);
  // A record of another table (this one) is not a person.
  const own = await api('POST', T(kinds.id), token, { data: { title: 'x' } });
  const wrongTable = await api('POST', T(kinds.id), token, { data: { title: 'x', person: own.body.record.id } });
  assert.equal(wrongTable.status, 422);
  const gone = await api('POST', T(people.id), token, { data: { name: 'Gone' } });
  assert.equal((await api('DELETE', `${T(people.id)}/${gone.body.record.id}`, token)).status, 200);
  const toDeleted = await api('POST', T(kinds.id), token, { data: { title: 'x', person: gone.body.record.id } });
  assert.equal(toDeleted.status, 422);
  // Another account's record is never found, whatever its table.
  const theirs = await makeTable(other, { name: 'Theirs', columns: [{ key: 'name', type: 'text' }] });
  const theirRecord = await api('POST', T(theirs.id), other.token, { data: { name: 'T' } });
  const cross = await api('POST', T(kinds.id), token, { data: { title: 'x', person: theirRecord.body.record.id } });
  assert.equal(cross.status, 422);
});

test('required on create and on PATCH; null clears an optional value; PATCH merges and answers the full record', async () => {
  const token = await freshKey(tenant);
  const missing = await api('POST', T(kinds.id), token, { data: { body: 'no title' } });
  assert.equal(missing.status, 422);
  assert.deepEqual(Object.keys(missing.body.errors), ['title']);
  const blank = await api('POST', T(kinds.id), token, { data: { title: '  ' } });
  assert.equal(blank.status, 422);

  const c = await api('POST', T(kinds.id), token, { data: { title: 'Keep', body: 'b', qty: 3 } });
  const url = `${T(kinds.id)}/${c.body.record.id}`;
  const before = await footprint(kinds.id);
  const clear = await api('PATCH', url, token, { data: { title: null } });
  assert.equal(clear.status, 422);
  assert.deepEqual(Object.keys(clear.body.errors), ['title']);
  assert.deepEqual(await footprint(kinds.id), before);

  const merged = await api('PATCH', url, token, { data: { body: null, qty: '4.5' } });
  assert.equal(merged.status, 200, merged.text);
  assert.deepEqual(merged.body.record.data, { title: 'Keep', qty: 4.5, no: c.body.record.data.no, size: 'M' });
  assert.ok(merged.body.record.updated_at > c.body.record.updated_at);
  assert.equal(merged.body.record.created_at, c.body.record.created_at);
  const read = await api('GET', url, token);
  assert.deepEqual(read.body.record, merged.body.record);

  // auto_number cannot be rewritten either.
  const renumber = await api('PATCH', url, token, { data: { no: 99 } });
  assert.equal(renumber.status, 422);
  assert.match(renumber.body.errors.no[0], /written by the service/);
});

test('unique values: a duplicate is 422 naming the column; a deleted record frees its value; a race answers one 201', async () => {
  const token = await freshKey(tenant);
  const first = await api('POST', T(people.id), token, { data: { name: 'U1', code: 'A-1' } });
  assert.equal(first.status, 201, first.text);
  const before = await footprint(people.id);
  const dup = await api('POST', T(people.id), token, { data: { name: 'U2', code: 'A-1' } });
  assert.equal(dup.status, 422, dup.text);
  assert.equal(dup.body.error.code, 'validation_error');
  assert.deepEqual(Object.keys(dup.body.errors), ['code']);
  assert.deepEqual(await footprint(people.id), before);

  const other = await api('POST', T(people.id), token, { data: { name: 'U3', code: 'B-1' } });
  const patchDup = await api('PATCH', `${T(people.id)}/${other.body.record.id}`, token, { data: { code: 'A-1' } });
  assert.equal(patchDup.status, 422);

  assert.equal((await api('DELETE', `${T(people.id)}/${first.body.record.id}`, token)).status, 200);
  const reuse = await api('POST', T(people.id), token, { data: { name: 'U4', code: 'A-1' } });
  assert.equal(reuse.status, 201, reuse.text);

  for (let i = 0; i < 5; i++) {
    const code = `RACE-${i}-${Date.now()}`;
    const both = await Promise.all([
      api('POST', T(people.id), token, { data: { name: 'R1', code } }),
      api('POST', T(people.id), token, { data: { name: 'R2', code } }),
    ]);
    const statuses = both.map((b) => b.status).sort();
    assert.equal(statuses[0], 201, JSON.stringify(both.map((b) => b.body)));
    assert.ok([409, 422].includes(statuses[1]), `round ${i}: ${statuses}`);
    const loser = both.find((b) => b.status !== 201)!;
    assert.equal(loser.body.error.code, loser.status === 409 ? 'conflict' : 'validation_error');
  }
});

test('status fields: initial states, illegal moves 409, missing permission 403, transitions in history', async () => {
  const token = await freshKey(tenant);
  const states = ['new', 'open', 'done', 'cancelled'].map((key) => ({ key, label: key }));
  const tickets = await makeTable(tenant, {
    name: `Tickets ${Date.now()}`,
    columns: [
      { key: 'subject', type: 'text' },
      { key: 'status', type: 'select', config: { options: states } },
    ],
    status_fields: [
      {
        column: 'status',
        label: 'Status',
        required: true,
        strict: true,
        initial: ['new'],
        moves: [
          { from: 'new', to: 'open' },
          { from: 'open', to: 'done', permission: 'data.grants.closer' },
          { from: '*', to: 'cancelled' },
        ],
      },
    ],
  });
  const limited = await limitedKey(tenant, ['data.view', 'data.records.edit']);
  const before = await footprint(tickets.id);
  assert.equal((await api('POST', T(tickets.id), token, { data: { subject: 's' } })).status, 422);
  const wrongStart = await api('POST', T(tickets.id), token, { data: { status: 'open' } });
  assert.equal(wrongStart.status, 422);
  assert.ok(wrongStart.body.errors.status);
  assert.deepEqual(await footprint(tickets.id), before);

  const c = await api('POST', T(tickets.id), limited, { data: { subject: 's', status: 'new' } });
  assert.equal(c.status, 201, c.text);
  const url = `${T(tickets.id)}/${c.body.record.id}`;
  const mid = await footprint(tickets.id);
  const jump = await api('PATCH', url, token, { data: { status: 'done' } });
  assert.equal(jump.status, 409, jump.text);
  assert.equal(jump.body.error.code, 'conflict');
  assert.deepEqual(await footprint(tickets.id), mid);

  assert.equal((await api('PATCH', url, limited, { data: { status: 'open' } })).status, 200);
  const afterOpen = await footprint(tickets.id);
  const denied = await api('PATCH', url, limited, { data: { status: 'done', subject: 'changed' } });
  assert.equal(denied.status, 403, denied.text);
  assert.equal(denied.body.error.code, 'permission_denied');
  assert.deepEqual(await footprint(tickets.id), afterOpen);
  assert.equal((await api('GET', url, token)).body.record.data.subject, 's');

  const done = await api('PATCH', url, token, { data: { status: 'done' } });
  assert.equal(done.status, 200, done.text);
  assert.equal((await api('PATCH', url, limited, { data: { status: 'cancelled' } })).status, 200);
  const h = await api('GET', `${url}/history`, token);
  assert.deepEqual(
    h.body.entries.map((e: { action: string }) => e.action),
    ['status_transition', 'status_transition', 'status_transition', 'create'],
  );
  assert.deepEqual(h.body.entries[1].before, { status: 'open' });
  assert.deepEqual(h.body.entries[1].after, { status: 'done' });
  assert.deepEqual(h.body.entries[1].changed, ['status']);
});

test('a record is at most 8,192 bytes serialized: 8,192 accepted, 8,193 refused on create and on PATCH', async () => {
  const token = await freshKey(tenant);
  const notes = await makeTable(tenant, { name: `Notes ${Date.now()}`, columns: [{ key: 'note', type: 'long_text' }] });
  // {"note":"…"} is 11 bytes around the text.
  const exact = await api('POST', T(notes.id), token, { data: { note: 'x'.repeat(8181) } });
  assert.equal(exact.status, 201, exact.text);
  const before = await footprint(notes.id);
  assert.equal(before!.storage_bytes, '8192');
  const over = await api('POST', T(notes.id), token, { data: { note: 'x'.repeat(8182) } });
  assert.equal(over.status, 422, over.text);
  assert.equal(over.body.error.field, 'data');
  // A two-byte character counts as two.
  const wide = await api('POST', T(notes.id), token, { data: { note: `é${'x'.repeat(8180)}` } });
  assert.equal(wide.status, 422);
  const grow = await api('PATCH', `${T(notes.id)}/${exact.body.record.id}`, token, { data: { note: 'y'.repeat(8182) } });
  assert.equal(grow.status, 422);
  assert.deepEqual(await footprint(notes.id), before);
});

test('quotas: records and storage answer 402 with quota, limit and used; a delete frees both', async () => {
  const token = await freshKey(tenant);
  const small = await makeTable(tenant, {
    name: `Small ${Date.now()}`,
    quotas: { records: 2 },
    columns: [{ key: 'v', type: 'text' }],
  });
  const a = await api('POST', T(small.id), token, { data: { v: 'a' } });
  assert.equal(a.status, 201, a.text);
  assert.equal((await api('POST', T(small.id), token, { data: { v: 'b' } })).status, 201);
  const before = await footprint(small.id);
  const full = await api('POST', T(small.id), token, { data: { v: 'c' } });
  assert.equal(full.status, 402, full.text);
  assert.equal(full.body.error.code, 'quota_exceeded');
  assert.deepEqual(full.body.error.details, { quota: 'records', limit: 2, used: 2 });
  assert.deepEqual(await footprint(small.id), before);
  assert.equal((await api('DELETE', `${T(small.id)}/${a.body.record.id}`, token)).status, 200);
  assert.equal((await api('POST', T(small.id), token, { data: { v: 'c' } })).status, 201);

  const tiny = await makeTable(tenant, {
    name: `Tiny ${Date.now()}`,
    quotas: { storage_bytes: 40 },
    columns: [{ key: 'v', type: 'text' }],
  });
  const first = await api('POST', T(tiny.id), token, { data: { v: 'x'.repeat(14) } }); // 22 bytes
  assert.equal(first.status, 201, first.text);
  const beforeTiny = await footprint(tiny.id);
  const second = await api('POST', T(tiny.id), token, { data: { v: 'y'.repeat(14) } });
  assert.equal(second.status, 402, second.text);
  assert.deepEqual(second.body.error.details, { quota: 'storage_bytes', limit: 40, used: 22 });
  const grow = await api('PATCH', `${T(tiny.id)}/${first.body.record.id}`, token, { data: { v: 'z'.repeat(40) } });
  assert.equal(grow.status, 402);
  assert.deepEqual(await footprint(tiny.id), beforeTiny);
  const shrink = await api('PATCH', `${T(tiny.id)}/${first.body.record.id}`, token, { data: { v: 'z' } });
  assert.equal(shrink.status, 200);
  assert.equal((await footprint(tiny.id))!.storage_bytes, '9');
  assert.equal((await api('DELETE', `${T(tiny.id)}/${first.body.record.id}`, token)).status, 200);
  const freed = await footprint(tiny.id);
  assert.equal(freed!.storage_bytes, '0');
  assert.equal(freed!.records_count, 0);
});

test('delete: soft, a repeat and any read or write after it are 404; history stays readable and pages newest first', async () => {
  const token = await freshKey(tenant);
  const c = await api('POST', T(kinds.id), token, { data: { title: 'h0' } });
  const url = `${T(kinds.id)}/${c.body.record.id}`;
  for (let i = 1; i <= 55; i++) assert.equal((await api('PATCH', url, token, { data: { title: `h${i}` } })).status, 200);
  const d = await api('DELETE', url, token);
  assert.equal(d.status, 200, d.text);
  assert.deepEqual(d.body, { ok: true, deleted: 1 });
  for (const [method, body] of [
    ['DELETE', undefined],
    ['GET', undefined],
    ['PATCH', { data: { title: 'back' } }],
  ] as const) {
    const r = await api(method, url, token, body);
    assert.equal(r.status, 404, `${method}: ${r.text}`);
    assert.equal(r.body.error.code, 'not_found');
  }

  const page1 = await api('GET', `${url}/history`, token);
  assert.equal(page1.status, 200, page1.text);
  assert.equal(page1.body.entries.length, 50);
  assert.equal(page1.body.has_more, true);
  assert.equal(page1.body.entries[0].action, 'delete');
  assert.equal(page1.body.entries[0].before.title, 'h55');
  assert.equal(page1.body.entries[0].after.title, null);
  assert.equal(page1.body.entries[1].action, 'update');
  assert.deepEqual(page1.body.entries[1].changed, ['title']);
  assert.deepEqual(page1.body.entries[1].before, { title: 'h54' });
  assert.deepEqual(page1.body.entries[1].after, { title: 'h55' });
  assert.equal(page1.body.entries[1].source, 'api');
  assert.equal(page1.body.entries[1].record, c.body.record.id);
  assert.equal(page1.body.entries[1].reason, null);
  assert.equal(page1.body.entries[1].actor.kind, 'api_key');
  assert.equal(page1.body.entries[1].actor.user_id, tenant.userId);
  assert.ok(!JSON.stringify(page1.body.entries[1].actor).includes(token));
  assert.deepEqual(
    page1.body.columns.slice(0, 3).map((c: { key: string; type: string }) => [c.key, c.type]),
    [
      ['title', 'text'],
      ['body', 'long_text'],
      ['qty', 'number'],
    ],
  );
  assert.ok(page1.body.columns.every((c: { label: unknown }) => typeof c.label === 'string'));
  const page2 = await api('GET', `${url}/history?before=${encodeURIComponent(page1.body.next_before)}`, token);
  assert.equal(page2.status, 200, page2.text);
  assert.equal(page2.body.entries.length, 7); // 1 create + 55 updates + 1 delete = 57
  assert.equal(page2.body.has_more, false);
  assert.equal(page2.body.next_before, null);
  assert.equal(page2.body.entries.at(-1).action, 'create');
  assert.equal(page2.body.entries.at(-1).after.title, 'h0');
  const ids = [...page1.body.entries, ...page2.body.entries].map((e: { id: string }) => BigInt(e.id));
  assert.ok(
    ids.every((id, i) => i === 0 || id < ids[i - 1]),
    'newest first, no repeats',
  );

  const invalid = await api('GET', `${url}/history?before=not-ours`, token);
  assert.equal(invalid.status, 422, invalid.text);
  assert.equal(invalid.body.error.field, 'before');
});

test('masks apply per caller to values, titles, relation titles and history', async () => {
  const token = await freshKey(tenant);
  const contacts = await makeTable(tenant, {
    name: `Contacts ${Date.now()}`,
    title_column: 'name',
    masks: [
      { column: 'name', unless_permission: 'data.grants.pii', style: 'full' },
      { column: 'phone', unless_permission: 'data.grants.pii', style: 'last4' },
      { column: 'mail', unless_permission: 'data.grants.pii', style: 'email' },
      { column: 'score', unless_permission: 'data.grants.pii', style: 'full' },
    ],
    columns: [
      { key: 'name', type: 'text' },
      { key: 'phone', type: 'phone' },
      { key: 'mail', type: 'email' },
      { key: 'score', type: 'number' },
      { key: 'who', type: 'relation', config: { table_id: people.id } },
      { key: 'note', type: 'text' },
    ],
  });
  const limited = await limitedKey(tenant, ['data.view', 'data.records.edit']);
  const trusted = await limitedKey(tenant, ['data.view', 'data.records.edit', 'data.grants.pii']);
  const data = { name: 'Neema', phone: '+255712345678', mail: 'neema@example.com', score: 7, who: personId, note: 'n' };
  const c = await api('POST', T(contacts.id), limited, { data });
  assert.equal(c.status, 201, c.text);
  assert.deepEqual(c.body.record.data, {
    name: '••••••',
    phone: '••••5678',
    mail: 'n•••@example.com',
    score: '••••••',
    who: personId,
    note: 'n',
  });
  assert.equal(c.body.record.title, '••••••');
  assert.deepEqual(c.body.record.titles, { [personId]: '••••••' }); // the person's name is masked in People too

  const url = `${T(contacts.id)}/${c.body.record.id}`;
  for (const reader of [trusted, token]) {
    const g = await api('GET', url, reader);
    assert.deepEqual(g.body.record.data, data);
    assert.equal(g.body.record.title, 'Neema');
    assert.deepEqual(g.body.record.titles, { [personId]: 'Asha Juma' });
  }

  // A masked display value sent back is an ordinary write of that text.
  const echoed = await api('PATCH', url, limited, { data: { name: '••••••', phone: '+255 713 000 111' } });
  assert.equal(echoed.status, 200, echoed.text);
  const stored = await api('GET', url, trusted);
  assert.equal(stored.body.record.data.name, '••••••');
  assert.equal(stored.body.record.data.phone, '+255713000111');

  const seen = await api('GET', `${url}/history`, limited);
  assert.deepEqual(seen.body.entries[0].before, { name: '••••••', phone: '••••5678' });
  assert.deepEqual(seen.body.entries[0].after, { name: '••••••', phone: '••••0111' });
  assert.equal(seen.body.entries[1].after.mail, 'n•••@example.com');
  assert.equal(seen.body.entries[1].after.note, 'n');
  const clear = await api('GET', `${url}/history`, trusted);
  assert.deepEqual(clear.body.entries[0].before, { name: 'Neema', phone: '+255712345678' });
});

test('another account’s tables and records, and ids that are not UUIDs, are 404 not_found', async () => {
  const token = await freshKey(tenant);
  const mine = await api('POST', T(kinds.id), token, { data: { title: 'mine' } });
  const url = `${T(kinds.id)}/${mine.body.record.id}`;
  const before = await footprint(kinds.id);
  for (const [method, path, body] of [
    ['GET', url, undefined],
    ['PATCH', url, { data: { title: 'theirs now' } }],
    ['DELETE', url, undefined],
    ['GET', `${url}/history`, undefined],
    ['POST', T(kinds.id), { data: { title: 'x' } }],
  ] as const) {
    const r = await api(method, path, other.token, body);
    assert.equal(r.status, 404, `${method} ${path}: ${r.text}`);
    assert.equal(r.body.error.code, 'not_found');
    assert.ok(!r.text.includes('mine'));
  }
  // Their own table, our record id: still not found.
  const theirs = await makeTable(other, { name: `Theirs ${Date.now()}`, columns: [{ key: 'title', type: 'text' }] });
  assert.equal((await api('GET', `${T(theirs.id)}/${mine.body.record.id}`, other.token)).status, 404);
  assert.equal((await api('PATCH', `${T(theirs.id)}/${mine.body.record.id}`, other.token, { data: { title: 'x' } })).status, 404);
  // A record id of another table of the same account is not a record of this one.
  assert.equal((await api('GET', `${T(people.id)}/${mine.body.record.id}`, token)).status, 404);
  for (const bad of ['123', 'not-a-uuid', "1' or '1'='1"]) {
    const r = await api('GET', `${T(kinds.id)}/${encodeURIComponent(bad)}`, token);
    assert.equal(r.status, 404, r.text);
    assert.equal(r.body.error.code, 'not_found');
    assert.equal((await api('GET', `${T(kinds.id)}/${encodeURIComponent(bad)}/history`, token)).status, 404);
  }
  assert.deepEqual(await footprint(kinds.id), before);
  assert.equal((await api('GET', url, token)).body.record.data.title, 'mine');
});
