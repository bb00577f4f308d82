import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { openOrm } from '../../entities/orm.js';
import { one } from '../../entities/db.js';
import { admin, api, http, newTenant, type Reply, type Tenant } from '../support/stack.js';

// Tenant isolation and bad input on every data path (issue 14, point 10): another account's ids,
// hidden tables, tables the caller may read but not write, keys without the family permission or
// without an issuer, and malformed, oversized or SQL-looking input. Each answer is the right code
// in the data envelope, never a 500, never SQL text; and nothing is written: the account's records,
// history, unique guards and table counters read the same before and after.

const orm = await openOrm(process.env.DATABASE_URL!, 2);
after(() => orm.close());

const T = '/api/v3/data/tables';
const G = '/api/v3/data/groups';
const SQLISH = "x'); drop table data_records;--";

/** Everything a data write could touch in one account, as one comparable value. */
async function fingerprint(accountId: number) {
  return one<Record<string, string>>(
    orm.em.fork(),
    `select (select count(*) from data_records where account_id = ?)::text as records,
            (select count(*) from data_records where account_id = ? and deleted_at is not null)::text as deleted,
            (select coalesce(md5(string_agg(id::text || data::text || updated_at::text, ',' order by seq)), '')
               from data_records where account_id = ?) as contents,
            (select count(*) from data_record_history where account_id = ?)::text as history,
            (select count(*) from data_unique_values u join data_tables t on t.id = u.table_id where t.account_id = ?)::text as guards,
            (select coalesce(string_agg(records_count || ':' || storage_bytes, ',' order by id), '')
               from data_tables where account_id = ?) as counters,
            (select to_regclass('data_records') is not null)::text as store`,
    [accountId, accountId, accountId, accountId, accountId, accountId],
  );
}

/** Runs refused requests and checks that neither account changed. */
async function nothingWritten(accounts: number[], fn: () => Promise<void>) {
  const before = await Promise.all(accounts.map(fingerprint));
  await fn();
  const afterwards = await Promise.all(accounts.map(fingerprint));
  assert.deepEqual(afterwards, before, 'nothing written');
  for (const f of afterwards) assert.equal(f!.store, 'true');
}

const LEAK =
  /syntax error|relation "|violates|invalid input syntax|jsonb_|::uuid|::jsonb|::numeric|deleted_at|\bselect\b[^.]{0,200}\bfrom\b|\bat .+\.(ts|js):\d+/i;

/** A refusal in the data envelope with this status and code; no internals in it. */
function refused(r: Reply, status: number, code: string, what = '') {
  assert.equal(r.status, status, `${what}: ${r.status} ${r.text}`);
  assert.equal(r.body?.error?.code, code, `${what}: ${r.text}`);
  assert.equal(r.body.code, code, what);
  assert.equal(typeof r.body.message, 'string', what);
  assert.equal(typeof r.body.error.retryable, 'boolean', what);
  assert.doesNotMatch(r.text, LEAK, what);
}
function clean(r: Reply, what: string) {
  assert.ok(r.status < 500 || r.status === 501, `${what}: ${r.status} ${r.text}`);
  assert.doesNotMatch(r.text, LEAK, what);
}

async function userToken(t: Tenant, permissions: string[]): Promise<string> {
  const u = await admin('POST', `/accounts/${t.accountId}/users`, {
    email: `i${randomUUID().slice(0, 8)}@example.com`,
    name: 'Isolation user',
    permissions,
  });
  assert.equal(u.status, 201, u.text);
  const k = await admin('POST', `/accounts/${t.accountId}/keys`, { name: 'isolation key', user_id: u.body.data.id });
  assert.equal(k.status, 201, k.text);
  return k.body.data.token;
}

/** More keys of the account's full user: each key has its own 120-a-minute window, and these tests send hundreds of requests. */
async function keyPool(t: Tenant, n: number): Promise<() => string> {
  const tokens: string[] = [];
  for (let i = 0; i < n; i++) {
    const k = await admin('POST', `/accounts/${t.accountId}/keys`, { name: `pool ${i}`, user_id: t.userId });
    assert.equal(k.status, 201, k.text);
    tokens.push(k.body.data.token);
  }
  let next = 0;
  return () => tokens[next++ % tokens.length];
}

async function createTable(t: Tenant, body: Record<string, unknown>): Promise<string> {
  const r = await admin('POST', `/accounts/${t.accountUid}/data/tables`, body);
  assert.equal(r.status, 201, r.text);
  return r.body.data.id;
}

async function createRecord(token: string, table: string, data: Record<string, unknown>): Promise<string> {
  const r = await api('POST', `${T}/${table}/records`, token, { data });
  assert.equal(r.status, 201, r.text);
  return r.body.record.id;
}

const peopleColumns = [
  { key: 'name', type: 'text', required: true },
  { key: 'email', type: 'email', unique: true },
  { key: 'age', type: 'number', config: { min: 0, max: 150 } },
  { key: 'notes', type: 'long_text' },
  {
    key: 'stage',
    type: 'select',
    config: {
      options: [
        { key: 'new', label: 'New' },
        { key: 'done', label: 'Done' },
      ],
    },
  },
];

interface World {
  a: Tenant;
  b: Tenant;
  reader: string;
  editor: string;
  noView: string;
  people: string;
  secret: string;
  locked: string;
  rec: string;
  secretRec: string;
  lockedRec: string;
  group: string;
  bPeople: string;
  bRec: string;
}

let world: Promise<World> | undefined;
function setup(): Promise<World> {
  return (world ??= (async () => {
    const a = await newTenant();
    const b = await newTenant();
    const people = await createTable(a, {
      name: 'People',
      slug: 'people',
      columns: peopleColumns,
      status_fields: [
        { column: 'stage', label: 'Stage', required: true, strict: true, initial: ['new'], moves: [{ from: 'new', to: 'done' }] },
      ],
    });
    const secret = await createTable(a, {
      name: 'Secret',
      access: { view: { permissions: ['data.grants.secret'], users: [] }, write: { permissions: [], users: [] } },
      columns: [{ key: 'name', type: 'text' }],
    });
    const locked = await createTable(a, {
      name: 'Locked',
      access: { view: { permissions: [], users: [] }, write: { permissions: ['data.grants.locked'], users: [] } },
      columns: [{ key: 'name', type: 'text' }],
    });
    const rec = await createRecord(a.token, people, { name: 'Amani', email: 'amani@example.com', age: 30, stage: 'new' });
    await createRecord(a.token, people, { name: 'Bahati', email: 'bahati@example.com', age: 41, stage: 'new' });
    await createRecord(a.token, people, { name: 'Chiku', age: 25, stage: 'new' });
    const patched = await api('PATCH', `${T}/${people}/records/${rec}`, a.token, { data: { age: 31 } });
    assert.equal(patched.status, 200, patched.text);
    const secretRec = await createRecord(a.token, secret, { name: 'hidden' });
    const lockedRec = await createRecord(a.token, locked, { name: 'fixed' });
    const group = await admin('POST', `/accounts/${a.accountUid}/data/groups`, { name: 'All', table_ids: [people, secret, locked] });
    assert.equal(group.status, 201, group.text);

    // The other account has a table of the same slug, so a slug never crosses accounts either.
    const bPeople = await createTable(b, { name: 'People', slug: 'people', columns: peopleColumns });
    const bRec = await createRecord(b.token, bPeople, { name: 'Other', stage: 'new' });
    return {
      a,
      b,
      reader: await userToken(a, ['data.view']),
      editor: await userToken(a, ['data.view', 'data.records.edit']),
      noView: await userToken(a, ['contacts.view']),
      people,
      secret,
      locked,
      rec,
      secretRec,
      lockedRec,
      group: group.body.data.id,
      bPeople,
      bRec,
    };
  })());
}

type Call = [method: string, path: string, body?: unknown];
/** Every data path of one table, record and group. */
function everyPath(table: string, record: string, group: string): Call[] {
  return [
    ['GET', T],
    ['GET', `${T}/${table}/schema`],
    ['GET', `${T}/${table}/states`],
    ['GET', `${T}/${table}/records`],
    ['GET', `${T}/${table}/records/${record}`],
    ['GET', `${T}/${table}/records/${record}/history`],
    ['POST', `${T}/${table}/records`, { data: { name: 'intruder', stage: 'new' } }],
    ['PATCH', `${T}/${table}/records/${record}`, { data: { name: 'intruder' } }],
    ['DELETE', `${T}/${table}/records/${record}`],
    ['GET', G],
    ['GET', `${G}/${group}`],
    ['GET', `${G}/${group}/overview`],
  ];
}
const listPaths = new Set([T, G]);

test('another account’s key with this account’s table, record and group ids: 404 not_found on every path, nothing written', async () => {
  const w = await setup();
  await nothingWritten([w.a.accountId, w.b.accountId], async () => {
    for (const [method, path, body] of everyPath(w.people, w.rec, w.group)) {
      const r = await api(method, path, w.b.token, body);
      if (listPaths.has(path)) {
        assert.equal(r.status, 200, r.text);
        assert.doesNotMatch(
          r.text,
          new RegExp(`${w.people}|${w.secret}|${w.locked}|${w.group}`),
          `${path} lists nothing of the other account`,
        );
      } else refused(r, 404, 'not_found', `${method} ${path}`);
    }
    // A's record through B's own table (same slug): not found either.
    for (const [method, path, body] of everyPath(w.bPeople, w.rec, w.group).filter(([, p]) => p.includes(w.rec)))
      refused(await api(method, path, w.b.token, body), 404, 'not_found', `${method} ${path} (own table)`);
    for (const [method, path, body] of everyPath('people', w.rec, w.group).filter(([, p]) => p.includes(w.rec)))
      refused(await api(method, path, w.b.token, body), 404, 'not_found', `${method} ${path} (slug)`);
    const own = await api('GET', `${T}/people/records`, w.b.token);
    assert.deepEqual(
      own.body.records.map((r: any) => r.id),
      [w.bRec],
      'the slug names the caller’s own table',
    );
    // And the other way round.
    refused(await api('GET', `${T}/${w.bPeople}/records/${w.bRec}`, w.a.token), 404, 'not_found');
    refused(await api('GET', `${T}/${w.people}/records/${w.bRec}`, w.a.token), 404, 'not_found', 'B’s record in A’s table');
  });
});

test('a hidden table is 404 on every path for a caller without its view grant, writes included', async () => {
  const w = await setup();
  await nothingWritten([w.a.accountId], async () => {
    for (const token of [w.reader, w.editor]) {
      for (const [method, path, body] of everyPath(w.secret, w.secretRec, w.group)) {
        if (listPaths.has(path) || path.startsWith(`${G}/`)) continue;
        // A reader may not write at all: the permission is checked before any table is looked up.
        if (token === w.reader && method !== 'GET')
          refused(await api(method, path, token, body), 403, 'permission_denied', `${method} ${path}`);
        else refused(await api(method, path, token, body), 404, 'not_found', `${method} ${path}`);
      }
      const tables = await api('GET', T, token);
      assert.ok(!tables.body.tables.some((x: any) => x.id === w.secret));
      const overview = await api('GET', `${G}/${w.group}/overview`, token);
      assert.equal(overview.status, 200, overview.text);
      assert.doesNotMatch(overview.text, new RegExp(w.secret), 'the overview leaves the hidden table out');
    }
  });
  assert.equal((await api('GET', `${T}/${w.secret}/records/${w.secretRec}`, w.a.token)).status, 200, 'the grant holder reads it');
});

test('a visible table without the write grant, or a key without data.records.edit: writes are 403 permission_denied', async () => {
  const w = await setup();
  await nothingWritten([w.a.accountId], async () => {
    const writes = (table: string, record: string): Call[] => [
      ['POST', `${T}/${table}/records`, { data: { name: 'nope', stage: 'new' } }],
      ['PATCH', `${T}/${table}/records/${record}`, { data: { name: 'nope' } }],
      ['DELETE', `${T}/${table}/records/${record}`],
    ];
    for (const [method, path, body] of writes(w.locked, w.lockedRec))
      refused(await api(method, path, w.editor, body), 403, 'permission_denied', `editor ${method} ${path}`);
    for (const [method, path, body] of writes(w.people, w.rec))
      refused(await api(method, path, w.reader, body), 403, 'permission_denied', `reader ${method} ${path}`);
  });
  // Reading the locked table is fine for the editor.
  assert.equal((await api('GET', `${T}/${w.locked}/records/${w.lockedRec}`, w.editor)).status, 200);
});

test('a key without data.view, and a legacy key with no issuer, are refused on every path', async () => {
  const w = await setup();
  await nothingWritten([w.a.accountId], async () => {
    for (const [method, path, body] of everyPath(w.people, w.rec, w.group)) {
      refused(await api(method, path, w.noView, body), 403, 'permission_denied', `no data.view: ${method} ${path}`);
      const legacy = await api(method, path, w.a.legacyToken, body);
      assert.equal(legacy.status, 403, `legacy ${method} ${path}: ${legacy.text}`);
      clean(legacy, `legacy ${method} ${path}`);
    }
    refused(await api('GET', T, null), 401, 'unauthenticated', 'no key');
  });
});

/** A filter of `groups` nested all-groups around one leaf. */
const nested = (groups: number) => {
  let node: unknown = { column: 'age', op: 'greater_than', value: 1 };
  for (let i = 0; i < groups; i++) node = { all: [node] };
  return node;
};
const wide = (leaves: number) => ({ any: Array.from({ length: leaves }, (_, i) => ({ column: 'age', op: 'equals', value: i })) });

test('filters: depth and width limits, malformed trees, wrong value types, unknown and unadvertised operators, SQL-looking keys and values', async () => {
  const w = await setup();
  const tok = await keyPool(w.a, 2);
  const list = (query: Record<string, string>) => api('GET', `${T}/${w.people}/records?${new URLSearchParams(query)}`, tok());
  const filter = (f: unknown) => list({ filter: typeof f === 'string' ? f : JSON.stringify(f) });
  await nothingWritten([w.a.accountId], async () => {
    // The limits hold exactly at their edge.
    assert.equal((await filter(nested(6))).status, 200);
    const deep = await filter(nested(7));
    refused(deep, 422, 'validation_error', 'depth 7');
    assert.equal(deep.body.error.field, 'filter');
    assert.equal((await filter(wide(40))).status, 200);
    refused(await filter(wide(41)), 422, 'validation_error', '41 leaves');

    for (const [f, why] of [
      ['{"all":', 'not JSON'],
      ['[]', 'an array'],
      ['"age"', 'a string'],
      ['1', 'a number'],
      [{ all: 'x' }, 'all not a list'],
      [{ column: 'age', op: 'greater_than' }, 'no value'],
      [{ column: 'age', op: 'greater_than', value: 'abc' }, 'a number column compared with text'],
      [{ column: 'age', op: 'between', value: [1] }, 'between with one endpoint'],
      [{ column: 'age', op: 'in', value: 5 }, 'in without a list'],
      [{ column: 'email', op: 'equals', value: { $ne: 1 } }, 'an object as a value'],
      [{ column: 'age', op: 'like', value: 1 }, 'an operator outside the ten'],
      [{ column: SQLISH, op: 'equals', value: 1 }, 'an SQL-looking column key'],
      [{ column: '$seq', op: 'equals', value: 1 }, 'an unknown system column'],
      [{ column: 'age', op: SQLISH, value: 1 }, 'an SQL-looking operator'],
    ] as const)
      refused(await filter(f), 422, 'validation_error', why);

    for (const f of [
      { column: 'age', op: 'contains', value: '1' },
      { column: 'stage', op: 'starts_with', value: 'n' },
      { column: 'name', op: 'greater_than', value: 'a' },
      { column: 'notes', op: 'between', value: ['a', 'b'] },
    ]) {
      const r = await filter(f);
      refused(r, 501, 'not_supported', JSON.stringify(f));
      assert.equal(r.body.error.details?.reason, 'operator_not_supported');
    }

    // SQL-looking values are values: they match nothing, and the table is still there.
    for (const value of [SQLISH, "' or 1=1 --", "Amani' or 'a'='a"]) {
      const r = await filter({ column: 'name', op: 'equals', value });
      assert.equal(r.status, 200, r.text);
      assert.deepEqual(r.body.records, []);
      const q = await list({ q: value });
      assert.equal(q.status, 200, q.text);
      assert.deepEqual(q.body.records, []);
    }
    const sorted = await list({ sort: SQLISH });
    refused(sorted, 422, 'validation_error', 'SQL-looking sort');
    refused(await list({ dir: 'sideways' }), 422, 'validation_error', 'dir');
    refused(await list({ limit: 'ten' }), 422, 'validation_error', 'limit');
    refused(await list({ with_count: 'perhaps' }), 422, 'validation_error', 'with_count');
    refused(await list({ q: 'x'.repeat(201) }), 422, 'validation_error', 'q too long');
    // Out-of-range limits are clamped, not refused.
    for (const limit of ['0', '-5', '100000']) assert.equal((await list({ limit })).status, 200, limit);
    assert.equal((await list({})).body.records.length, 3);
  });
});

test('invalid cursors restart at the first page; a valid one moves on', async () => {
  const w = await setup();
  const tok = await keyPool(w.a, 2);
  const page = (cursor?: string) =>
    api('GET', `${T}/${w.people}/records?${new URLSearchParams({ limit: '2', ...(cursor === undefined ? {} : { cursor }) })}`, tok());
  const first = await page();
  assert.equal(first.status, 200, first.text);
  assert.equal(first.body.has_more, true);
  const ids = (r: Reply) => r.body.records.map((x: any) => x.id);
  const second = await page(first.body.next_cursor);
  assert.equal(second.status, 200, second.text);
  assert.notDeepEqual(ids(second), ids(first), 'a valid cursor moves on');
  const otherFilter = await api(
    'GET',
    `${T}/${w.people}/records?${new URLSearchParams({ limit: '1', sort: '$updated_at', dir: 'asc' })}`,
    tok(),
  );
  for (const cursor of [
    'garbage',
    '',
    'eyJ9',
    Buffer.from(JSON.stringify({ v: SQLISH, id: SQLISH, seq: '1; drop table data_records' })).toString('base64url'),
    Buffer.from('{"k":"age","v":[1,2,3]').toString('base64'),
    'x'.repeat(8_000),
    otherFilter.body.next_cursor ?? 'none',
    String(first.body.next_cursor).slice(0, -4),
  ]) {
    const r = await page(cursor);
    clean(r, `cursor ${cursor.slice(0, 40)}`);
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(ids(r), ids(first), `cursor ${cursor.slice(0, 40)} restarts at page one`);
  }
});

test('writes with bad input: oversize records, wrong types, unknown and SQL-looking keys, malformed bodies, bad ids; nothing written', async () => {
  const w = await setup();
  const tok = await keyPool(w.a, 5);
  const records = `${T}/${w.people}/records`;
  const rec = `${records}/${w.rec}`;
  const base = { name: 'n', stage: 'new' };
  const sized = (bytes: number) => {
    const notes = 'x'.repeat(bytes - Buffer.byteLength(JSON.stringify({ ...base, notes: '' })));
    const data = { ...base, notes };
    assert.equal(Buffer.byteLength(JSON.stringify(data)), bytes);
    return data;
  };
  await nothingWritten([w.a.accountId], async () => {
    const big = await api('POST', records, tok(), { data: sized(8193) });
    refused(big, 422, 'validation_error', '8193 bytes');
    assert.ok(big.body.errors?.data, big.text);
    refused(await api('PATCH', rec, tok(), { data: { notes: 'y'.repeat(8200) } }), 422, 'validation_error', 'patch over 8192');

    for (const [data, field, why] of [
      [{ ...base, age: 'abc' }, 'age', 'text for a number'],
      [{ ...base, age: 151 }, 'age', 'over max'],
      [{ ...base, age: [1] }, 'age', 'a list for a number'],
      [{ ...base, email: 'not-an-email' }, 'email', 'bad email'],
      [{ ...base, email: 'amani@example.com' }, 'email', 'duplicate of a live record'],
      [{ ...base, stage: 'bogus' }, 'stage', 'not an option'],
      [{ ...base, stage: 'done' }, 'stage', 'not an initial state'],
      [{ stage: 'new' }, 'name', 'required missing'],
      [{ ...base, name: { $gt: '' } }, 'name', 'an object for text'],
      [{ ...base, [SQLISH]: 1 }, SQLISH, 'an SQL-looking key'],
      [{ ...base, extra: 1 }, 'extra', 'an unknown key'],
    ] as const) {
      const r = await api('POST', records, tok(), { data });
      refused(r, 422, 'validation_error', why);
      assert.ok(r.body.errors?.[field], `${why}: errors.${field} in ${r.text}`);
    }
    refused(await api('PATCH', rec, tok(), { data: { name: null } }), 422, 'validation_error', 'clearing a required value');
    refused(await api('PATCH', rec, tok(), { data: { [SQLISH]: 'x' } }), 422, 'validation_error', 'SQL-looking key on patch');

    for (const [raw, why] of [
      ['{"data":', 'truncated JSON'],
      ['not json', 'not JSON'],
      ['[]', 'an array'],
      ['"data"', 'a string'],
      ['{"data":{"name":"a"', 'unterminated object'],
    ]) {
      const r = await http('POST', records, { token: tok(), raw, headers: { 'content-type': 'application/json' } });
      refused(r, 400, 'validation_error', why);
      const p = await http('PATCH', rec, { token: tok(), raw, headers: { 'content-type': 'application/json' } });
      refused(p, 400, 'validation_error', `patch: ${why}`);
    }
    for (const body of [{}, { data: 'x' }, { data: [] }, { data: null }]) {
      const r = await api('POST', records, tok(), body);
      refused(r, 422, 'validation_error', JSON.stringify(body));
    }
    const asText = await http('POST', records, {
      token: tok(),
      raw: JSON.stringify({ data: base }),
      headers: { 'content-type': 'text/plain' },
    });
    clean(asText, 'text/plain body');
    assert.ok(asText.status >= 400 && asText.status < 500, asText.text);

    // Ids that are not UUIDs (or not anything) name nothing.
    for (const bad of ['abc', '1 or 1=1', "'; drop table data_records;--", '00000000-0000-0000-0000-00000000000g', 'x'.repeat(2000)]) {
      const id = encodeURIComponent(bad);
      for (const [method, body] of [['GET'], ['PATCH', { data: { name: 'z' } }], ['DELETE'], ['GET_HISTORY']] as const) {
        const path = method === 'GET_HISTORY' ? `${records}/${id}/history` : `${records}/${id}`;
        refused(
          await api(method === 'GET_HISTORY' ? 'GET' : method, path, tok(), body),
          404,
          'not_found',
          `${method} record ${bad.slice(0, 20)}`,
        );
      }
      refused(await api('GET', `${T}/${id}/schema`, tok()), 404, 'not_found', `table ${bad.slice(0, 20)}`);
      refused(await api('POST', `${T}/${id}/records`, tok(), { data: base }), 404, 'not_found', `create in ${bad.slice(0, 20)}`);
      refused(await api('GET', `${G}/${id}/overview`, tok()), 404, 'not_found', `group ${bad.slice(0, 20)}`);
    }
    // Overlong query strings: refused by the schema, or by the HTTP server before any handler; never a 500.
    const longFilter = JSON.stringify({ any: [{ column: 'name', op: 'equals', value: 'x'.repeat(70_000) }] });
    const huge = await api('GET', `${records}?filter=${encodeURIComponent(longFilter)}`, tok());
    assert.ok([414, 422, 431].includes(huge.status), `${huge.status} ${huge.text.slice(0, 200)}`);
    clean(huge, 'a 70 kB filter');
    const longHistory = await api('GET', `${rec}/history?before=${'9'.repeat(65)}`, tok());
    refused(longHistory, 422, 'validation_error', 'before over 64 characters');
    for (const before of ['abc', '-1', SQLISH, '99999999999999999999999999']) {
      const r = await api('GET', `${rec}/history?before=${encodeURIComponent(before)}`, tok());
      clean(r, `before ${before}`);
      assert.ok(r.status === 200 || r.status === 422, `before ${before}: ${r.status} ${r.text}`);
    }
  });

  // The edge itself is accepted: exactly 8192 bytes, and an SQL-looking value stored as the text it is.
  const edge = await api('POST', records, tok(), { data: sized(8192) });
  assert.equal(edge.status, 201, edge.text);
  const sql = await api('POST', records, tok(), { data: { ...base, name: SQLISH, notes: "'; select pg_sleep(10); --" } });
  assert.equal(sql.status, 201, sql.text);
  const back = await api('GET', `${records}/${sql.body.record.id}`, tok());
  assert.equal(back.body.record.data.name, SQLISH);
  const found = await api(
    'GET',
    `${records}?${new URLSearchParams({ filter: JSON.stringify({ column: 'name', op: 'equals', value: SQLISH }) })}`,
    tok(),
  );
  assert.deepEqual(
    found.body.records.map((r: any) => r.id),
    [sql.body.record.id],
  );
  // Clean up, so the other tests' counts hold whichever order they run in.
  for (const id of [edge.body.record.id, sql.body.record.id]) assert.equal((await api('DELETE', `${records}/${id}`, tok())).status, 200);
  refused(await api('DELETE', `${records}/${sql.body.record.id}`, tok()), 404, 'not_found', 'a repeated delete');
});
