import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { openOrm } from '../../entities/orm.js';
import { exec, one } from '../../entities/db.js';
import { admin, api, eventually, newTenant, type Tenant } from '../support/stack.js';

// The definition cache (services/data/tables.ts): the API keeps the table definitions it loaded and
// checks each one's definition_version inside the statement that relies on it. A change of the
// definition, through the operator API or behind the service's back (as another process, the index
// workflow or a hand-run statement would make it), must be seen by the very next request; record
// writes must not move the version (or every write would empty the cache).

const orm = await openOrm(process.env.DATABASE_URL!, 2);
after(() => orm.close());
const em = () => orm.em.fork();

const T = (table: string) => `/api/v3/data/tables/${table}/records`;
const version = async (tableId: string) =>
  Number((await one<{ v: string }>(em(), 'select definition_version::text as v from data_tables where id = ?::uuid', [tableId]))!.v);

let tenant: Tenant;
let token: string;
let table: { id: string };
const columnsPath = () => `/accounts/${tenant.accountUid}/data/tables/${table.id}/columns`;

before(async () => {
  tenant = await newTenant();
  // A key of its own: the API limits requests per key and minute.
  const key = await admin('POST', `/accounts/${tenant.accountId}/keys`, { name: 'definitions', user_id: tenant.userId });
  token = key.body.data.token;
  const made = await admin('POST', `/accounts/${tenant.accountUid}/data/tables`, {
    name: `Definitions ${Date.now()}`,
    columns: [
      { key: 'name', type: 'text' },
      { key: 'size', type: 'number' },
    ],
  });
  assert.equal(made.status, 201, made.text);
  table = made.body.data ?? made.body;
  // The index workflow builds the table's search index now and records its state on the table row,
  // a definition change of its own: wait for it, so it cannot fall inside the counts below.
  await eventually(
    () => one<{ s: string | null }>(em(), 'select search_index_status as s from data_tables where id = ?::uuid', [table.id]),
    (r) => r?.s === 'ready',
    60_000,
  );
});

test('record writes leave the definition version alone; every definition change moves it', async () => {
  const start = await version(table.id);
  const c = await api('POST', T(table.id), token, { data: { name: 'a', size: 1 } });
  assert.equal(c.status, 201, c.text);
  const u = await api('PATCH', `${T(table.id)}/${c.body.record.id}`, token, { data: { name: 'a longer name' } });
  assert.equal(u.status, 200, u.text);
  assert.equal((await api('DELETE', `${T(table.id)}/${c.body.record.id}`, token)).status, 200);
  assert.equal(await version(table.id), start, 'creates, updates and deletes of records');

  const described = await admin('PATCH', `/accounts/${tenant.accountUid}/data/tables/${table.id}`, { description: 'now described' });
  assert.equal(described.status, 200, described.text);
  const afterTable = await version(table.id);
  assert.ok(afterTable > start, 'a table setting');
  await exec(em(), `update data_columns set label = 'Size (cm)' where table_id = ?::uuid and key = 'size'`, [table.id]);
  const afterColumn = await version(table.id);
  assert.ok(afterColumn > afterTable, 'a column changed by a statement of its own');

  // An index build's progress report is no definition change (the index workflow writes several a second).
  await exec(
    em(),
    `update data_columns set index_progress = '{"phase":"building index","blocks_done":1,"blocks_total":9}', updated_at = now()
      where table_id = ?::uuid and key = 'size'`,
    [table.id],
  );
  assert.equal(await version(table.id), afterColumn, 'an index progress report');
});

test('a column added or removed is used or refused by the very next list and create', async () => {
  // Both paths load (and keep) the definition first.
  assert.equal((await api('GET', `${T(table.id)}?limit=1`, token)).status, 200);
  assert.equal((await api('POST', T(table.id), token, { data: { name: 'before' } })).status, 201);

  const added = await admin('POST', columnsPath(), { key: 'colour', type: 'text' });
  assert.equal(added.status, 201, added.text);
  const withColour = await api('POST', T(table.id), token, { data: { name: 'painted', colour: 'red' } });
  assert.equal(withColour.status, 201, withColour.text);
  assert.equal(withColour.body.record.data.colour, 'red');
  const filter = encodeURIComponent(JSON.stringify({ column: 'colour', op: 'equals', value: 'red' }));
  const red = await api('GET', `${T(table.id)}?filter=${filter}`, token);
  assert.equal(red.status, 200, red.text);
  assert.deepEqual(
    red.body.records.map((r: any) => r.data.name),
    ['painted'],
  );

  // Removed behind the service's back, as another process would: the next requests refuse the key.
  await exec(em(), `delete from data_columns where table_id = ?::uuid and key = 'colour'`, [table.id]);
  const refusedWrite = await api('POST', T(table.id), token, { data: { name: 'again', colour: 'blue' } });
  assert.equal(refusedWrite.status, 422, refusedWrite.text);
  const refusedFilter = await api('GET', `${T(table.id)}?filter=${filter}`, token);
  assert.equal(refusedFilter.status, 422, refusedFilter.text);
  // An empty page carries no version: it is confirmed on its own.
  const none = encodeURIComponent(JSON.stringify({ column: 'name', op: 'equals', value: 'nobody' }));
  assert.equal((await api('GET', `${T(table.id)}?filter=${none}`, token)).status, 200);
});

test('a table hidden from the caller, or taken away, is 404 on the very next request', async () => {
  assert.equal((await api('GET', T(table.id), token)).status, 200);
  assert.equal((await api('POST', T(table.id), token, { data: { name: 'visible' } })).status, 201);
  await exec(
    em(),
    `update data_tables set access = '{"view": {"permissions": ["data.grants.hidden"], "users": []}, "write": {"permissions": [], "users": []}}'::jsonb
      where id = ?::uuid`,
    [table.id],
  );
  // The tenant's user holds '*': hide it from a user without the grant instead.
  const user = await admin('POST', `/accounts/${tenant.accountId}/users`, {
    email: `plain-${Date.now()}@example.com`,
    name: 'Plain',
    permissions: ['data.view', 'data.records.edit'],
  });
  const plain = (await admin('POST', `/accounts/${tenant.accountId}/keys`, { name: 'plain', user_id: user.body.data.id })).body.data.token;
  assert.equal((await api('GET', T(table.id), plain)).status, 404);
  assert.equal((await api('POST', T(table.id), plain, { data: { name: 'hidden' } })).status, 404);
  await exec(
    em(),
    `update data_tables set access = '{"view": {"permissions": [], "users": []}, "write": {"permissions": [], "users": []}}'::jsonb where id = ?::uuid`,
    [table.id],
  );
  assert.equal((await api('GET', T(table.id), plain)).status, 200, 'shown again at once');
  assert.equal((await api('POST', T(table.id), plain, { data: { name: 'shown' } })).status, 201);

  await exec(em(), 'delete from data_columns where table_id = ?::uuid', [table.id]);
  await exec(em(), 'delete from data_tables where id = ?::uuid', [table.id]);
  assert.equal((await api('GET', T(table.id), token)).status, 404);
  assert.equal((await api('POST', T(table.id), token, { data: { name: 'gone' } })).status, 404);
});
