import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import type { Client } from '@modelcontextprotocol/client';
import { admin, api, eventually, newTenant, type Tenant } from '../support/stack.js';
import { withMcpServer } from '../support/mcp.js';

// Field masks against every read path of the records (issue 23, point 1). A caller for whom a
// column is masked must learn nothing of its values: not from which rows a filter, a sort or q
// selects, nor from the records cursor, nor from a refused status move. The same reads by a caller
// holding the grants work as before. Before the fix a masked viewer recovered a salary from
// greater_than or from the base64 cursor after sort=salary, and a phone from starts_with or q.

const T = (table: string) => `/api/v3/data/tables/${table}/records`;

let t: Tenant;
let other: Tenant;
let staff: string;
let rooms: string;
let foreign: string;
/** data.view and data.records.edit only: phone, salary and band are masked for it. */
let viewer: string;
let viewerUser: number;
/** The same with data.grants.pii and data.grants.finance: nothing is masked for it. */
let granted: string;
let grantedUser: number;
const ids: Record<string, string> = {};
const db = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 2 });
after(() => db.end());

async function user(permissions: string[]): Promise<{ token: string; id: number }> {
  const u = await admin('POST', `/accounts/${t.accountId}/users`, {
    email: `mask-${Date.now()}-${Math.random().toString(36).slice(2)}@example.com`,
    name: 'Mask test',
    permissions,
  });
  assert.equal(u.status, 201, u.text);
  const k = await admin('POST', `/accounts/${t.accountId}/keys`, { name: 'mask key', user_id: u.body.data.id });
  assert.equal(k.status, 201, k.text);
  return { token: k.body.data.token, id: u.body.data.id };
}

async function table(tenant: Tenant, body: Record<string, unknown>): Promise<string> {
  const r = await admin('POST', `/accounts/${tenant.accountUid}/data/tables`, body);
  assert.equal(r.status, 201, r.text);
  return r.body.data.id;
}

const list = (token: string, query: Record<string, unknown>, tableId = staff) => {
  const qs = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined) qs.set(k, typeof v === 'string' ? v : JSON.stringify(v));
  return api('GET', `${T(tableId)}?${qs}`, token);
};
const names = (r: { body: { records: { data: { name: string } }[] } }) => r.body.records.map((x) => x.data.name).sort();

before(async () => {
  t = await newTenant();
  other = await newTenant();
  ({ token: viewer, id: viewerUser } = await user(['data.view', 'data.records.edit']));
  ({ token: granted, id: grantedUser } = await user(['data.view', 'data.records.edit', 'data.grants.pii', 'data.grants.finance']));
  staff = await table(t, {
    name: 'Staff',
    title_column: 'name',
    columns: [
      { key: 'name', type: 'text' },
      { key: 'phone', type: 'phone', config: { region: 'TZ' } },
      { key: 'notes', type: 'long_text' },
      { key: 'salary', type: 'number' },
      {
        key: 'band',
        type: 'select',
        config: {
          options: [
            { key: 'junior', label: 'Junior' },
            { key: 'senior', label: 'Senior' },
            { key: 'lead', label: 'Lead' },
          ],
        },
      },
    ],
    masks: [
      { column: 'phone', unless_permission: 'data.grants.pii', style: 'last4' },
      { column: 'salary', unless_permission: 'data.grants.finance', style: 'full' },
      { column: 'band', unless_permission: 'data.grants.finance', style: 'full' },
    ],
    status_fields: [
      { column: 'band', label: 'Band', required: false, strict: true, initial: ['junior'], moves: [{ from: 'junior', to: 'senior' }] },
    ],
  });
  for (const [name, phone, salary, notes] of [
    ['Asha', '+255712345678', 91234, 'first hire'],
    ['Baraka', '+255765000111', 45000, null],
    ['Chausiku', '+255713999888', 120500, null],
    ['Daudi', null, null, null],
  ] as const) {
    const data: Record<string, unknown> = { name, band: 'junior' };
    if (phone) data.phone = phone;
    if (salary !== null) data.salary = salary;
    if (notes) data.notes = notes;
    const r = await api('POST', T(staff), granted, { data });
    assert.equal(r.status, 201, r.text);
    ids[name] = r.body.record.id;
  }
  rooms = await table(t, { name: 'Rooms', columns: [{ key: 'name', type: 'text' }] });
  foreign = await table(other, { name: 'Rooms', columns: [{ key: 'name', type: 'text' }] });
  for (const name of ['R1', 'R2', 'R3']) {
    assert.equal((await api('POST', T(rooms), granted, { data: { name } })).status, 201);
    assert.equal((await api('POST', T(foreign), other.token, { data: { name } })).status, 201);
  }
});

function refusedNaming(r: { status: number; text: string; body: any }, column: string, parameter: 'filter' | 'sort') {
  assert.equal(r.status, 403, r.text);
  assert.equal(r.body.error.code, 'permission_denied', r.text);
  assert.equal(r.body.error.field, column, r.text);
  assert.deepEqual(r.body.error.details, { reason: 'masked_column', column, parameter });
  assert.match(r.body.error.message, new RegExp(`\\b${column}\\b`));
  assert.equal(r.body.records, undefined, 'no records with the refusal');
}

test('a filter leaf on a masked column is refused naming it, whatever the operator or nesting; a granted caller filters', async () => {
  const leaf = (column: string, op: string, value?: unknown) => (value === undefined ? { column, op } : { column, op, value });
  for (const [filter, column] of [
    [leaf('salary', 'greater_than', 50000), 'salary'],
    [leaf('salary', 'between', [91000, 92000]), 'salary'],
    [leaf('salary', 'equals', 91234), 'salary'],
    [leaf('salary', 'is_empty'), 'salary'],
    [leaf('phone', 'starts_with', '+2557123'), 'phone'],
    [leaf('phone', 'contains', '345'), 'phone'],
    [leaf('band', 'in', ['junior']), 'band'],
    [{ any: [leaf('name', 'equals', 'nobody'), { all: [leaf('name', 'is_not_empty'), leaf('salary', 'less_than', 1)] }] }, 'salary'],
  ] as const)
    refusedNaming(await list(viewer, { filter }), column, 'filter');

  // Unmasked columns still filter for the viewer, its masked values shown masked.
  const asha = await list(viewer, { filter: leaf('name', 'equals', 'Asha') });
  assert.equal(asha.status, 200, asha.text);
  assert.deepEqual(asha.body.records[0].data, { name: 'Asha', phone: '••••5678', notes: 'first hire', salary: '••••••', band: '••••••' });

  const rich = await list(granted, { filter: leaf('salary', 'greater_than', 50000) });
  assert.equal(rich.status, 200, rich.text);
  assert.deepEqual(names(rich), ['Asha', 'Chausiku']);
  const prefix = await list(granted, { filter: leaf('phone', 'starts_with', '+2557123') });
  assert.deepEqual(names(prefix), ['Asha']);
  const noSalary = await list(granted, { filter: leaf('salary', 'is_empty') });
  assert.deepEqual(names(noSalary), ['Daudi']);
});

test('q leaves the columns masked for the caller out of its search, also across columns and through the search index', async () => {
  const check = async () => {
    for (const q of ['2345678', '+2557', '5678', 'Asha +2557', '+255712345678 first']) {
      const r = await list(viewer, { q, with_count: true });
      assert.equal(r.status, 200, r.text);
      assert.deepEqual([r.body.records.length, r.body.count], [0, 0], `viewer q=${q}: ${r.text}`);
    }
    const byName = await list(viewer, { q: 'asha' });
    assert.deepEqual(names(byName), ['Asha']);
    const byNotes = await list(viewer, { q: 'first hire' });
    assert.deepEqual(names(byNotes), ['Asha']);
    const digits = await list(granted, { q: '2345678' });
    assert.deepEqual(names(digits), ['Asha'], 'the granted caller searches the phone');
    const all = await list(granted, { q: '+2557' });
    assert.deepEqual(names(all), ['Asha', 'Baraka', 'Chausiku']);
  };
  await check();
  // Once the table's trigram index is ready the search goes through it: the masks hold there too.
  const ready = await eventually(
    async () => (await db.query('select search_index_status as s from data_tables where id = $1', [staff])).rows[0].s,
    (s) => s === 'ready',
    120_000,
    500,
  );
  assert.equal(ready, 'ready');
  await check();
});

test('a sort on a masked column is refused naming it, even with a cursor the granted caller was given', async () => {
  refusedNaming(await list(viewer, { sort: 'salary' }), 'salary', 'sort');
  refusedNaming(await list(viewer, { sort: 'phone', dir: 'asc' }), 'phone', 'sort');
  const first = await list(granted, { sort: 'salary', limit: 1 });
  assert.equal(first.status, 200, first.text);
  refusedNaming(await list(viewer, { sort: 'salary', limit: 1, cursor: first.body.next_cursor }), 'salary', 'sort');
});

test('a granted sort on the column walks in order, and its cursor carries no value in clear', async () => {
  const order: string[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < 6; page++) {
    const r = await list(granted, { sort: 'salary', dir: 'asc', limit: 1, cursor });
    assert.equal(r.status, 200, r.text);
    order.push(...r.body.records.map((x: { data: { name: string } }) => x.data.name));
    if (!r.body.has_more) break;
    cursor = r.body.next_cursor as string;
    assert.match(cursor, /^[A-Za-z0-9_-]+$/);
    // What a client can make of it: base64url bytes with nothing of the record in them.
    const bytes = Buffer.from(cursor, 'base64url');
    for (const text of [bytes.toString('latin1'), bytes.toString('utf8')])
      assert.doesNotMatch(text, /45000|91234|120500|"l"|salary/, `the cursor shows nothing: ${text}`);
    assert.throws(() => JSON.parse(bytes.toString('utf8')));
  }
  assert.deepEqual(order, ['Baraka', 'Asha', 'Chausiku', 'Daudi'], 'salary ascending, the record without one last');
});

test('a cursor is honoured only by the list it was made for: another table, another account or a forged one restarts at page one', async () => {
  const firstOf = async (token: string, tableId: string) =>
    (await list(token, { limit: 1 }, tableId)).body.records.map((x: { id: string }) => x.id);
  const page1 = await list(granted, { limit: 1 });
  const cursor = page1.body.next_cursor as string;
  const page2 = await list(granted, { limit: 1, cursor });
  assert.equal(page2.status, 200, page2.text);
  assert.notDeepEqual(page2.body.records[0].id, page1.body.records[0].id, 'the cursor works on its own list');

  for (const [token, tableId] of [
    [granted, rooms],
    [other.token, foreign],
  ] as const) {
    const r = await list(token, { limit: 1, cursor }, tableId);
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(
      r.body.records.map((x: { id: string }) => x.id),
      await firstOf(token, tableId),
      'a cursor of another table restarts',
    );
  }

  const tampered = Buffer.from(cursor, 'base64url');
  tampered[tampered.length - 5] ^= 1;
  // The old clear form, with a position chosen by the client: not a cursor of ours any more.
  const forged = Buffer.from(
    JSON.stringify({ v: 1, s: '$created_at', d: 'desc', h: 'x', l: '2000-01-01T00:00:00.000000Z', q: '1', n: false }),
  ).toString('base64url');
  for (const bad of [tampered.toString('base64url'), forged]) {
    const r = await list(granted, { limit: 1, cursor: bad });
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.body.records[0].id, page1.body.records[0].id);
  }
});

test('a refused status move does not tell a masked caller the state the record is in', async () => {
  const url = `${T(staff)}/${ids.Baraka}`;
  const hidden = await api('PATCH', url, viewer, { data: { band: 'lead' } });
  assert.equal(hidden.status, 409, hidden.text);
  assert.doesNotMatch(hidden.text, /junior/);
  assert.deepEqual(hidden.body.error.details, { column: 'band', to: 'lead', reason: 'illegal_transition' });
  const shown = await api('PATCH', url, granted, { data: { band: 'lead' } });
  assert.equal(shown.status, 409, shown.text);
  assert.equal(shown.body.error.details.from, 'junior');
});

const mcp = <T>(token: string, fn: (c: Client) => Promise<T>) => withMcpServer('data', token, fn);

test('the list_data_records tool refuses the same filters and sorts for a masked caller, and serves a granted one', async () => {
  const credential = async (userId: number) => {
    const c = await admin('POST', `/accounts/${t.accountId}/mcp-credentials`, { name: 'mask assistant', user_id: userId });
    assert.equal(c.status, 201, c.text);
    return c.body.data.token as string;
  };
  const filter = JSON.stringify({ column: 'salary', op: 'greater_than', value: 50000 });
  await mcp(await credential(viewerUser), async (c) => {
    for (const args of [
      { filter },
      { sort: 'salary' },
      { filter: JSON.stringify({ column: 'phone', op: 'starts_with', value: '+2557' }) },
    ]) {
      const r = (await c.callTool({ name: 'list_data_records', arguments: { table: staff, ...args } })) as any;
      assert.equal(r.isError, true, JSON.stringify(r));
      const body = JSON.parse(r.content[0].text);
      assert.equal(body.error.code, 'permission_denied');
      assert.ok(['salary', 'phone'].includes(body.error.field), body.error.field);
    }
    const q = (await c.callTool({ name: 'list_data_records', arguments: { table: staff, q: '2345678' } })) as any;
    assert.notEqual(q.isError, true, JSON.stringify(q));
    assert.deepEqual(q.structuredContent.records, []);
  });
  await mcp(await credential(grantedUser), async (c) => {
    const r = (await c.callTool({ name: 'list_data_records', arguments: { table: staff, filter } })) as any;
    assert.notEqual(r.isError, true, JSON.stringify(r));
    assert.deepEqual(r.structuredContent.records.map((x: { data: { name: string } }) => x.data.name).sort(), ['Asha', 'Chausiku']);
  });
});
