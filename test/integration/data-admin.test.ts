import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { admin, eventually, newTenant, type Tenant } from '../support/stack.js';
import { openOrm } from '../../entities/orm.js';
import { exec, many, one } from '../../entities/db.js';
import { columnIndexName } from '../../domain/data/expressions.js';
import { columnsOf, type LoadedTable, type TableRow } from '../../services/data/tables.js';
import { backfillUniqueGuard, syncUniqueGuards } from '../../services/data/unique.js';
import { DomainError } from '../../services/platform/errors.js';
import { cli } from '../support/admin-cli.js';

// The operator's data-table definitions (issue 14 point 1) and the unique-value guard.

const orm = await openOrm(process.env.DATABASE_URL!, 4);
after(() => orm.close());

const tables = (t: Tenant) => `/accounts/${t.accountUid}/data/tables`;
const options = (...keys: string[]) => keys.map((key) => ({ key, label: key.toUpperCase() }));

async function tableCount(t: Tenant): Promise<number> {
  const r = await admin('GET', tables(t));
  assert.equal(r.status, 200, r.text);
  return r.body.data.length;
}

async function createTable(t: Tenant, body: Record<string, unknown>) {
  const r = await admin('POST', tables(t), body);
  assert.equal(r.status, 201, r.text);
  return r.body.data;
}

/** The table as the record services load it (operator caller). */
async function loaded(tableId: string): Promise<LoadedTable> {
  const em = orm.em.fork();
  const table = (await one<TableRow>(em, 'select * from data_tables where id = ?', [tableId]))!;
  return { table, columns: await columnsOf({ em }, tableId), caller: { permissions: ['*'], userId: null, unrestricted: true } };
}

async function insertRecord(em: any, t: Tenant, tableId: string, data: Record<string, unknown>): Promise<string> {
  const id = randomUUID();
  await exec(
    em,
    `insert into data_records (id, account_id, table_id, data, source, size_bytes, created_at, updated_at)
     values (?, ?, ?, ?::jsonb, 'test', 10, now(), now())`,
    [id, t.accountId, tableId, JSON.stringify(data)],
  );
  return id;
}

test('a table with one column of every type and config is created, read back (by id and slug) and listed', async () => {
  const t = await newTenant();
  const user = (await admin('GET', `/accounts/${t.accountId}/users`)).body.data[0].id;
  const companies = await createTable(t, { name: 'Companies', columns: [{ key: 'name', type: 'text' }] });
  assert.equal(companies.slug, 'companies', 'the slug is derived from the name');
  const body = {
    name: 'Deals & Leads',
    description: 'Every deal',
    icon: 'briefcase',
    title_column: 'title',
    retention: { history_days: 90 },
    legal_hold: true,
    access: { view: { permissions: ['data.grants.sales'], users: [user] }, write: { permissions: ['data.records.edit'], users: [] } },
    masks: [{ column: 'phone', unless_permission: 'data.grants.pii', style: 'last4' }],
    status_fields: [
      {
        column: 'stage',
        label: 'Stage',
        required: true,
        initial: ['new'],
        moves: [
          { from: 'new', to: 'won', permission: 'data.grants.close' },
          { from: '*', to: 'lost' },
        ],
      },
    ],
    unique_sets: [{ key: 'company_title', columns: ['company', 'title'] }],
    quotas: { records: 5000 },
    columns: [
      { key: 'title', type: 'text', required: true, config: { max_length: 200, default: 'Untitled' } },
      { key: 'notes', type: 'long_text', ui: { hidden_in_grid: true, help_text: 'Anything' } },
      { key: 'seats', type: 'number', indexed: true, config: { precision: 0, min: 1, max: 500, default: 1 } },
      { key: 'amount', type: 'currency', unique: false, config: { precision: 2 } },
      { key: 'priority', type: 'boolean', config: { default: false } },
      { key: 'closes_on', type: 'date', config: { default: '2026-12-31' } },
      { key: 'met_at', type: 'datetime' },
      { key: 'phone', type: 'phone', unique: true },
      { key: 'email', type: 'email', label: 'E-mail' },
      { key: 'stage', type: 'select', config: { options: [...options('new', 'won', 'lost')], default: 'new' } },
      { key: 'tags', type: 'multi_select', config: { options: options('hot', 'cold'), default: ['hot'] } },
      { key: 'company', type: 'relation', config: { table_id: companies.id } },
      { key: 'contract', type: 'file', config: { multiple: true } },
      { key: 'ref', type: 'auto_number' },
      { key: 'legacy', type: 'unknown', stored_type: 'formula' },
    ],
  };
  const made = await createTable(t, body);
  assert.equal(made.slug, 'deals-leads');
  assert.deepEqual(
    made.columns.map((c: any) => [c.key, c.type, c.position]),
    body.columns.map((c, i) => [c.key, c.type, i]),
  );
  const col = (k: string) => made.columns.find((c: any) => c.key === k);
  assert.equal(col('notes').label, 'Notes', 'a label is derived from the key');
  assert.equal(col('email').label, 'E-mail');
  assert.deepEqual(col('phone').config, { region: 'TZ' }, 'phone region defaults to TZ');
  assert.deepEqual(col('amount').config, { currency: 'TZS', precision: 2 }, 'currency defaults to TZS');
  assert.equal(col('legacy').stored_type, 'formula');
  assert.equal(col('phone').unique, true);
  assert.ok(col('seats').index_status, 'an indexed column has an index state');
  assert.equal(col('title').index_status, null);
  assert.deepEqual(made.quotas, { columns: 100, indexes: 16, records: 5000, storage_bytes: 2 * 1024 ** 3 });
  assert.deepEqual(made.retention, { history_days: 90, deleted_records_days: null });
  assert.deepEqual(made.status_fields[0], {
    ...body.status_fields[0],
    strict: true,
    moves: [body.status_fields[0].moves[0], { from: '*', to: 'lost', permission: null }],
  });
  assert.ok(made.search_index.status, 'a table with searchable columns asks for its search index');

  const bySlug = await admin('GET', `${tables(t)}/deals-leads`);
  assert.equal(bySlug.status, 200);
  assert.equal(bySlug.body.data.id, made.id);
  const byNumericAccount = await admin('GET', `/accounts/${t.accountId}/data/tables/${made.id}`);
  assert.deepEqual(byNumericAccount.body.data.columns.length, 15);
  const list = await admin('GET', tables(t));
  assert.deepEqual(list.body.data.map((x: any) => x.slug).sort(), ['companies', 'deals-leads']);

  // The same name again gets the next free slug; an explicit slug taken is a 409.
  assert.equal((await createTable(t, { name: 'Deals & leads', columns: [] })).slug, 'deals-leads-2');
  const dup = await admin('POST', tables(t), { name: 'Other', slug: 'companies', columns: [] });
  assert.equal(dup.status, 409, dup.text);
  assert.equal(await tableCount(t), 3);
});

test('every definition mistake is refused with 422 naming the field, and nothing is written', async () => {
  const t = await newTenant();
  const other = await newTenant();
  const foreign = await createTable(other, { name: 'Theirs', columns: [{ key: 'x', type: 'text' }] });
  const foreignUser = (await admin('GET', `/accounts/${other.accountId}/users`)).body.data[0].id;
  const good = { key: 'ok', type: 'text' };
  const cases: [string, Record<string, unknown>, string][] = [
    ['bad key', { columns: [{ key: 'Bad Key', type: 'text' }] }, 'columns.0.key'],
    ['system key', { columns: [good, { key: '$id', type: 'text' }] }, 'columns.1.key'],
    ['duplicate key', { columns: [good, { ...good }] }, 'columns.1.key'],
    ['bad type', { columns: [{ key: 'a', type: 'colour' }] }, 'columns.0.type'],
    ['select without options', { columns: [{ key: 'a', type: 'select' }] }, 'columns.0.config.options'],
    [
      'select with an empty option list',
      { columns: [{ key: 'a', type: 'multi_select', config: { options: [] } }] },
      'columns.0.config.options',
    ],
    [
      'option key twice',
      { columns: [{ key: 'a', type: 'select', config: { options: [...options('x'), ...options('x')] } }] },
      'columns.0.config.options.1.key',
    ],
    [
      'option without label',
      { columns: [{ key: 'a', type: 'select', config: { options: [{ key: 'x' }] } }] },
      'columns.0.config.options.0.label',
    ],
    [
      'relation to another account',
      { columns: [{ key: 'a', type: 'relation', config: { table_id: foreign.id } }] },
      'columns.0.config.table_id',
    ],
    ['relation without table', { columns: [{ key: 'a', type: 'relation' }] }, 'columns.0.config.table_id'],
    ['stored type on text', { columns: [{ key: 'a', type: 'text', stored_type: 'x' }] }, 'columns.0.stored_type'],
    ['setting of another type', { columns: [{ key: 'a', type: 'text', config: { options: options('x') } }] }, 'columns.0.config.options'],
    ['phone region', { columns: [{ key: 'a', type: 'phone', config: { region: 'TZA' } }] }, 'columns.0.config.region'],
    ['currency code', { columns: [{ key: 'a', type: 'currency', config: { currency: 'SHILLING' } }] }, 'columns.0.config.currency'],
    ['currency precision', { columns: [{ key: 'a', type: 'currency', config: { precision: 7 } }] }, 'columns.0.config.precision'],
    ['number min over max', { columns: [{ key: 'a', type: 'number', config: { min: 5, max: 1 } }] }, 'columns.0.config.min'],
    ['number precision', { columns: [{ key: 'a', type: 'number', config: { precision: 11 } }] }, 'columns.0.config.precision'],
    ['text max length', { columns: [{ key: 'a', type: 'text', config: { max_length: 0 } }] }, 'columns.0.config.max_length'],
    ['number default', { columns: [{ key: 'a', type: 'number', config: { default: 'ten' } }] }, 'columns.0.config.default'],
    ['default past max', { columns: [{ key: 'a', type: 'number', config: { max: 3, default: 4 } }] }, 'columns.0.config.default'],
    [
      'select default',
      { columns: [{ key: 'a', type: 'select', config: { options: options('x'), default: 'y' } }] },
      'columns.0.config.default',
    ],
    ['date default', { columns: [{ key: 'a', type: 'date', config: { default: '31/12/2026' } }] }, 'columns.0.config.default'],
    ['auto number required', { columns: [{ key: 'a', type: 'auto_number', required: true }] }, 'columns.0.required'],
    ['auto number default', { columns: [{ key: 'a', type: 'auto_number', config: { default: 3 } }] }, 'columns.0.config.default'],
    ['unique file', { columns: [{ key: 'a', type: 'file', unique: true }] }, 'columns.0.unique'],
    ['title column not text', { title_column: 'n', columns: [{ key: 'n', type: 'number' }] }, 'title_column'],
    ['title column unknown', { title_column: 'zz', columns: [good] }, 'title_column'],
    ['status field on a text column', { status_fields: [{ column: 'ok', initial: [] }], columns: [good] }, 'status_fields.0.column'],
    [
      'status move to an unknown state',
      {
        status_fields: [{ column: 's', moves: [{ from: '*', to: 'gone' }] }],
        columns: [{ key: 's', type: 'select', config: { options: options('a', 'b') } }],
      },
      'status_fields.0.moves.0.to',
    ],
    [
      'status initial unknown',
      { status_fields: [{ column: 's', initial: ['z'] }], columns: [{ key: 's', type: 'select', config: { options: options('a') } }] },
      'status_fields.0.initial.0',
    ],
    [
      'status move permission',
      {
        status_fields: [{ column: 's', moves: [{ from: 'a', to: 'a', permission: 'root' }] }],
        columns: [{ key: 's', type: 'select', config: { options: options('a') } }],
      },
      'status_fields.0.moves.0.permission',
    ],
    [
      'mask on an unknown column',
      { masks: [{ column: 'nope', unless_permission: 'data.grants.pii', style: 'full' }], columns: [good] },
      'masks.0.column',
    ],
    [
      'mask permission',
      { masks: [{ column: 'ok', unless_permission: 'everyone', style: 'full' }], columns: [good] },
      'masks.0.unless_permission',
    ],
    ['mask style', { masks: [{ column: 'ok', unless_permission: 'data.grants.pii', style: 'first4' }], columns: [good] }, 'masks.0.style'],
    ['unique set of one column', { unique_sets: [{ key: 'u', columns: ['ok'] }], columns: [good] }, 'unique_sets.0.columns'],
    ['unique set of an unknown column', { unique_sets: [{ key: 'u', columns: ['ok', 'zz'] }], columns: [good] }, 'unique_sets.0.columns.1'],
    [
      'unique set key twice',
      {
        unique_sets: [
          { key: 'u', columns: ['ok', 'b'] },
          { key: 'u', columns: ['ok', 'b'] },
        ],
        columns: [good, { key: 'b', type: 'text' }],
      },
      'unique_sets.1.key',
    ],
    ['grant permission', { access: { view: { permissions: ['data.grants.Bad Name'] } }, columns: [good] }, 'access.view.permissions.0'],
    ['grant user of another account', { access: { write: { users: [foreignUser] } }, columns: [good] }, 'access.write.users.0'],
    ['quota not positive', { quotas: { columns: 0 }, columns: [good] }, 'quotas.columns'],
    ['slug format', { slug: 'Not A Slug', columns: [good] }, 'slug'],
    ['name too long', { name: 'x'.repeat(161), columns: [good] }, 'name'],
  ];
  for (const [what, body, field] of cases) {
    const r = await admin('POST', tables(t), { name: `Refused ${what}`, ...body });
    assert.equal(r.status, 422, `${what}: ${r.text}`);
    assert.ok(r.body.errors?.[field], `${what}: errors.${field} in ${JSON.stringify(r.body.errors)}`);
  }
  // Past a quota: 402, with what was used.
  const over = await admin('POST', tables(t), {
    name: 'Over',
    quotas: { columns: 2 },
    columns: [good, { key: 'b', type: 'text' }, { key: 'c', type: 'text' }],
  });
  assert.equal(over.status, 402, over.text);
  const overIndexes = await admin('POST', tables(t), {
    name: 'Over indexes',
    quotas: { indexes: 1 },
    columns: [
      { key: 'a', type: 'text', indexed: true },
      { key: 'b', type: 'number', indexed: true },
    ],
  });
  assert.equal(overIndexes.status, 402, overIndexes.text);
  assert.equal(await tableCount(t), 0, 'no refused definition left a table behind');
  const left = await many(orm.em.fork(), 'select id from data_columns where account_id = ?', [t.accountId]);
  assert.equal(left.length, 0, 'nor a column');
});

test('another account’s table is not found through another account’s path; unknown accounts are 404', async () => {
  const a = await newTenant();
  const b = await newTenant();
  const mine = await createTable(a, { name: 'Private', columns: [{ key: 'x', type: 'text' }] });
  for (const [method, path, body] of [
    ['GET', `${tables(b)}/${mine.id}`, undefined],
    ['GET', `${tables(b)}/private`, undefined],
    ['PATCH', `${tables(b)}/${mine.id}`, { name: 'Mine now' }],
    ['POST', `${tables(b)}/${mine.id}/columns`, { key: 'y', type: 'text' }],
    ['PATCH', `${tables(b)}/${mine.id}/columns/x`, { label: 'Mine' }],
    ['DELETE', `${tables(b)}/${mine.id}/columns/x`, undefined],
    ['DELETE', `${tables(b)}/${mine.id}`, undefined],
  ] as const) {
    const r = await admin(method, path, body);
    assert.equal(r.status, 404, `${method} ${path}: ${r.text}`);
  }
  assert.equal(await tableCount(b), 0);
  const still = await admin('GET', `${tables(a)}/${mine.id}`);
  assert.equal(still.body.data.name, 'Private');
  assert.deepEqual(
    still.body.data.columns.map((c: any) => [c.key, c.label]),
    [['x', 'X']],
  );
  assert.equal((await admin('GET', '/accounts/99999999/data/tables')).status, 404);
  assert.equal((await admin('GET', '/accounts/acc_nobody/data/tables')).status, 404);
});

test('columns are added, changed, moved and dropped; the rest are renumbered', async () => {
  const t = await newTenant();
  const made = await createTable(t, {
    name: 'Tickets',
    quotas: { columns: 5, indexes: 1 },
    masks: [{ column: 'email', unless_permission: 'data.grants.pii', style: 'email' }],
    status_fields: [{ column: 'state', initial: ['open'], moves: [{ from: 'open', to: 'closed' }] }],
    columns: [
      { key: 'subject', type: 'text' },
      { key: 'email', type: 'email' },
      { key: 'state', type: 'select', config: { options: options('open', 'closed') } },
    ],
  });
  const path = `${tables(t)}/${made.id}/columns`;
  const added = await admin('POST', path, { key: 'due', type: 'date', position: 1, indexed: true });
  assert.equal(added.status, 201, added.text);
  assert.deepEqual(
    added.body.data.columns.map((c: any) => `${c.position}:${c.key}`),
    ['0:subject', '1:due', '2:email', '3:state'],
  );
  assert.ok(added.body.data.columns[1].index_status);
  const dupKey = await admin('POST', path, { key: 'email', type: 'text' });
  assert.equal(dupKey.status, 422);
  assert.ok(dupKey.body.errors.key);
  const badType = await admin('POST', path, { key: 'z', type: 'select' });
  assert.equal(badType.status, 422);
  assert.ok(badType.body.errors['config.options'], badType.text);
  assert.equal((await admin('POST', path, { key: 'n', type: 'number' })).status, 201);
  const overColumns = await admin('POST', path, { key: 'o', type: 'number' });
  assert.equal(overColumns.status, 402, 'a sixth column passes quotas.columns = 5');

  const moved = await admin('PATCH', `${path}/state`, {
    position: 0,
    label: 'State',
    config: { options: options('open', 'closed', 'held') },
  });
  assert.equal(moved.status, 200, moved.text);
  assert.deepEqual(
    moved.body.data.columns.map((c: any) => `${c.position}:${c.key}`),
    ['0:state', '1:subject', '2:due', '3:email', '4:n'],
  );
  assert.equal(moved.body.data.columns[0].label, 'State');
  assert.equal(moved.body.data.columns[0].config.options.length, 3);
  const lostState = await admin('PATCH', `${path}/state`, { config: { options: options('held') } });
  assert.equal(lostState.status, 422, 'the status field still needs open and closed');
  assert.ok(lostState.body.errors['status_fields.0'], lostState.text);
  assert.equal((await admin('PATCH', `${path}/n`, { indexed: true })).status, 402, 'a second index passes quotas.indexes = 1');
  assert.equal((await admin('PATCH', `${path}/n`, { config: { min: 4, max: 1 } })).status, 422);

  const unindexed = await admin('PATCH', `${path}/due`, { indexed: false, ui: { width: 120 } });
  assert.equal(unindexed.status, 200);
  const due = unindexed.body.data.columns.find((c: any) => c.key === 'due');
  assert.equal(due.indexed, false);
  assert.ok(['dropping', null].includes(due.index_status), due.index_status);
  assert.deepEqual(due.ui, { width: 120 });
  assert.equal((await admin('PATCH', `${path}/n`, { indexed: true })).status, 200, 'the freed index slot is usable');

  const masked = await admin('DELETE', `${path}/email`);
  assert.equal(masked.status, 409, 'a masked column cannot go while the mask names it');
  const dropped = await admin('DELETE', `${path}/${due.id}`);
  assert.equal(dropped.status, 200, dropped.text);
  assert.deepEqual(
    dropped.body.data.columns.map((c: any) => `${c.position}:${c.key}`),
    ['0:state', '1:subject', '2:email', '3:n'],
  );
  assert.equal((await admin('DELETE', `${path}/due`)).status, 404);

  const patched = await admin('PATCH', `${tables(t)}/${made.id}`, {
    name: 'Support tickets',
    slug: 'support',
    masks: [],
    title_column: 'subject',
  });
  assert.equal(patched.status, 200, patched.text);
  assert.deepEqual([patched.body.data.slug, patched.body.data.title_column, patched.body.data.masks], ['support', 'subject', []]);
  assert.equal((await admin('DELETE', `${path}/email`)).status, 200, 'without its mask the column may go');
  const lower = await admin('PATCH', `${tables(t)}/support`, { quotas: { columns: 1 } });
  assert.equal(lower.status, 422);
  assert.ok(lower.body.errors['quotas.columns']);
});

test('groups hold tables of the same account and reports over their columns', async () => {
  const t = await newTenant();
  const other = await newTenant();
  const foreign = await createTable(other, { name: 'Foreign', columns: [] });
  const orders = await createTable(t, {
    name: 'Orders',
    columns: [
      { key: 'total', type: 'currency' },
      { key: 'placed_on', type: 'date' },
      { key: 'note', type: 'text' },
    ],
  });
  const people = await createTable(t, { name: 'People', columns: [{ key: 'name', type: 'text' }] });
  const groups = `/accounts/${t.accountUid}/data/groups`;
  const report = { key: 'revenue', name: 'Revenue', table_id: orders.id, measure: 'sum', column: 'total', date_column: 'placed_on' };
  const refusals: [Record<string, unknown>, string][] = [
    [{ table_ids: [orders.id, foreign.id] }, 'table_ids.1'],
    [{ table_ids: [orders.id, orders.id] }, 'table_ids'],
    [{ table_ids: [people.id], reports: [report] }, 'reports.0.table_id'],
    [{ table_ids: [orders.id], reports: [{ ...report, column: 'note' }] }, 'reports.0.column'],
    [{ table_ids: [orders.id], reports: [{ ...report, date_column: 'note' }] }, 'reports.0.date_column'],
    [{ table_ids: [orders.id], reports: [report, { ...report }] }, 'reports.1.key'],
  ];
  for (const [body, field] of refusals) {
    const r = await admin('POST', groups, { name: 'Sales', ...body });
    assert.equal(r.status, 422, r.text);
    assert.ok(r.body.errors[field], `errors.${field} in ${r.text}`);
  }
  assert.equal((await admin('GET', groups)).body.data.length, 0);

  const made = await admin('POST', groups, {
    name: 'Sales',
    table_ids: [orders.id, people.id],
    reports: [report, { key: 'orders', name: 'Orders', table_id: orders.id, measure: 'count', date_column: '$created_at' }],
  });
  assert.equal(made.status, 201, made.text);
  assert.equal(made.body.data.slug, 'sales');
  assert.deepEqual(made.body.data.table_ids, [orders.id, people.id]);
  assert.equal((await admin('POST', groups, { name: 'x', slug: 'sales' })).status, 409);
  assert.equal((await admin('GET', `${groups}/sales`)).body.data.id, made.body.data.id);
  assert.equal((await admin('GET', `/accounts/${other.accountUid}/data/groups/${made.body.data.id}`)).status, 404);

  const inUse = await admin('DELETE', `${tables(t)}/${orders.id}/columns/total`);
  assert.equal(inUse.status, 409, 'a report still sums the column');
  const dropMember = await admin('PATCH', `${groups}/sales`, { table_ids: [people.id] });
  assert.equal(dropMember.status, 422, 'the reports read a table no longer a member');
  const renamed = await admin('PATCH', `${groups}/sales`, { name: 'Sales team', description: 'Deals' });
  assert.deepEqual([renamed.body.data.name, renamed.body.data.description, renamed.body.data.reports.length], ['Sales team', 'Deals', 2]);

  // A deleted table leaves its groups, with the reports over it.
  assert.equal((await admin('DELETE', `${tables(t)}/${orders.id}`)).status, 200);
  assert.equal((await admin('GET', `${tables(t)}/${orders.id}`)).status, 404);
  const kept = (await admin('GET', `${groups}/${made.body.data.id}`)).body.data;
  assert.deepEqual([kept.table_ids, kept.reports], [[people.id], []]);
  assert.equal((await admin('DELETE', `${groups}/sales`)).status, 200);
  assert.equal((await admin('GET', groups)).body.data.length, 0);
  assert.equal((await admin('GET', `${tables(t)}/${people.id}`)).status, 200, 'its tables stay');
});

test('a table others link to cannot be deleted; deleting one takes its records and guards', async () => {
  const t = await newTenant();
  const target = await createTable(t, { name: 'Targets', columns: [{ key: 'code', type: 'text', unique: true }] });
  const linker = await createTable(t, { name: 'Linkers', columns: [{ key: 'target', type: 'relation', config: { table_id: target.id } }] });
  const em = orm.em.fork();
  const rec = await insertRecord(em, t, target.id, { code: 'A1' });
  await syncUniqueGuards(em, await loaded(target.id), rec, { code: 'A1' });
  assert.equal((await admin('DELETE', `${tables(t)}/${target.id}`)).status, 409);
  assert.equal((await admin('DELETE', `${tables(t)}/${linker.id}/columns/target`)).status, 200);
  assert.equal((await admin('DELETE', `${tables(t)}/${target.id}`)).status, 200);
  const left = await one<{ records: string; guards: string; columns: string }>(
    em,
    `select (select count(*) from data_records where table_id = ?) as records,
            (select count(*) from data_unique_values where table_id = ?) as guards,
            (select count(*) from data_columns where table_id = ?) as columns`,
    [target.id, target.id, target.id],
  );
  assert.deepEqual([Number(left!.records), Number(left!.guards), Number(left!.columns)], [0, 0, 0]);
});

test('the unique guard: duplicates refuse unique until fixed, values are guarded per column and set, a race is a 409', async () => {
  const t = await newTenant();
  const made = await createTable(t, {
    name: 'Members',
    columns: [
      { key: 'phone', type: 'phone' },
      { key: 'first', type: 'text' },
      { key: 'last', type: 'text' },
      { key: 'tags', type: 'multi_select', config: { options: options('a', 'b') } },
    ],
  });
  const em = orm.em.fork();
  const r1 = await insertRecord(em, t, made.id, { phone: '+255700000001', first: 'Ana', last: 'Moshi' });
  const r2 = await insertRecord(em, t, made.id, { phone: '+255700000001', first: 'Ana', last: 'Juma' });
  await insertRecord(em, t, made.id, { first: 'No phone' });

  const refused = await admin('PATCH', `${tables(t)}/${made.id}/columns/phone`, { unique: true });
  assert.equal(refused.status, 422, refused.text);
  assert.ok(refused.body.errors.phone || refused.body.errors.unique, refused.text);
  assert.equal((await admin('GET', `${tables(t)}/${made.id}`)).body.data.columns[0].unique, false, 'nothing changed');
  await assert.rejects(
    backfillUniqueGuard(em, made.id, 'phone', ['phone']),
    (e: unknown) => e instanceof DomainError && e.kind === 'invalid' && !!e.detail.errors?.phone,
  );

  await exec(em, `update data_records set data = jsonb_set(data, '{phone}', '"+255700000002"') where id = ?`, [r2]);
  const ok = await admin('PATCH', `${tables(t)}/${made.id}/columns/phone`, { unique: true });
  assert.equal(ok.status, 200, ok.text);
  const guards = await many<{ set_key: string; value: string; record_id: string }>(
    em,
    'select set_key, value, record_id from data_unique_values where table_id = ? order by value',
    [made.id],
  );
  assert.deepEqual(
    guards.map((g) => [g.set_key, g.value, g.record_id]),
    [
      ['phone', '"+255700000001"', r1],
      ['phone', '"+255700000002"', r2],
    ],
    'one guard per non-empty value, the jsonb text of the stored value',
  );

  // A unique set: refused while two records share first+last, then guarded.
  const r3 = await insertRecord(em, t, made.id, { phone: '+255700000003', first: 'Ana', last: 'Moshi' });
  await exec(em, 'delete from data_unique_values where record_id = ?', [r3]);
  const setRefused = await admin('PATCH', `${tables(t)}/${made.id}`, { unique_sets: [{ key: 'full_name', columns: ['first', 'last'] }] });
  assert.equal(setRefused.status, 422, setRefused.text);
  assert.ok(setRefused.body.errors['unique_sets.0.columns'], setRefused.text);
  await exec(em, 'delete from data_records where id = ?', [r3]);
  const setOk = await admin('PATCH', `${tables(t)}/${made.id}`, { unique_sets: [{ key: 'full_name', columns: ['first', 'last'] }] });
  assert.equal(setOk.status, 200, setOk.text);
  const setGuards = await many<{ value: string }>(
    em,
    "select value from data_unique_values where table_id = ? and set_key = 'set:full_name' order by value",
    [made.id],
  );
  assert.deepEqual(
    setGuards.map((g) => g.value),
    ['["Ana", "Juma"]', '["Ana", "Moshi"]'],
  );

  // A write: another record's value is a 422 naming the column (or every column of the set).
  const t1 = await loaded(made.id);
  const r4 = await insertRecord(em, t, made.id, { phone: '+255700000001', first: 'Bo', last: 'X' });
  await assert.rejects(syncUniqueGuards(em, t1, r4, { phone: '+255700000001' }), (e: unknown) => {
    assert.ok(e instanceof DomainError && e.kind === 'invalid');
    assert.deepEqual(Object.keys(e.detail.errors!), ['phone']);
    return true;
  });
  await exec(em, `update data_records set data = '{"phone":"+255700000004","first":"Ana","last":"Juma"}' where id = ?`, [r4]);
  await assert.rejects(syncUniqueGuards(em, t1, r4, {}), (e: unknown) => {
    assert.ok(e instanceof DomainError && e.kind === 'invalid');
    assert.deepEqual(Object.keys(e.detail.errors!).sort(), ['first', 'last']);
    return true;
  });
  await exec(em, `update data_records set data = '{"phone":"+255700000004","first":"Bo","last":"Juma","tags":[]}' where id = ?`, [r4]);
  await syncUniqueGuards(em, t1, r4, {});
  // Its own values again are no conflict; a delete forgets them.
  await syncUniqueGuards(em, t1, r4, {});
  assert.equal((await many(em, 'select 1 from data_unique_values where record_id = ?', [r4])).length, 2);
  await syncUniqueGuards(em, t1, r4, null);
  assert.equal((await many(em, 'select 1 from data_unique_values where record_id = ?', [r4])).length, 0);

  // Two writers of one value at once: the second sees nothing before inserting, then loses to the first's commit (409).
  let synced!: () => void;
  let release!: () => void;
  const firstSynced = new Promise<void>((r) => (synced = r));
  const hold = new Promise<void>((r) => (release = r));
  const first = orm.em.fork().transactional(async (tx) => {
    const id = await insertRecord(tx, t, made.id, { phone: '+255700000009' });
    await syncUniqueGuards(tx, t1, id, {});
    synced();
    await hold;
  });
  await firstSynced;
  const second = orm.em.fork().transactional(async (tx) => {
    const id = await insertRecord(tx, t, made.id, { phone: '+255700000009' });
    await syncUniqueGuards(tx, t1, id, {});
  });
  // Release the first only once the second is blocked on its guard row: a fixed delay let a slow
  // second writer look after the commit (then it rightly answers 422, not the race's 409).
  const secondDone = second.then(
    () => undefined,
    () => undefined,
  );
  let settled = false;
  void secondDone.then(() => (settled = true));
  for (let i = 0; i < 200 && !settled; i++) {
    const waiting = await many(
      orm.em.fork(),
      "select 1 from pg_stat_activity where wait_event_type = 'Lock' and query ilike '%insert into data_unique_values%'",
    );
    if (waiting.length) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  release();
  await first;
  await assert.rejects(second, (e: unknown) => e instanceof DomainError && e.kind === 'conflict' && e.detail.code === 'conflict');
  assert.equal((await many(em, `select 1 from data_unique_values where table_id = ? and value = '"+255700000009"'`, [made.id])).length, 1);

  // Unique off: the guard goes.
  assert.equal((await admin('PATCH', `${tables(t)}/${made.id}/columns/phone`, { unique: false })).status, 200);
  assert.equal((await many(em, "select 1 from data_unique_values where table_id = ? and set_key = 'phone'", [made.id])).length, 0);
});

test('an indexed column gets its index built, and dropped when the column goes (index workflow)', async () => {
  const t = await newTenant();
  const made = await createTable(t, { name: 'Indexed', columns: [{ key: 'score', type: 'number', indexed: true }] });
  const column = made.columns[0];
  const path = `${tables(t)}/${made.id}/columns/score`;
  const ready = await eventually(
    () => admin('GET', `${tables(t)}/${made.id}`),
    (r) => r.body.data.columns[0].index_status === 'ready',
    60_000,
  );
  assert.equal(ready.body.data.columns[0].index_status, 'ready');
  const physical = () => many(orm.em.fork(), 'select 1 from pg_indexes where indexname = ?', [columnIndexName(column.id)]);
  assert.equal((await physical()).length, 1);
  assert.equal((await admin('DELETE', path)).status, 200);
  const gone = await eventually(physical, (rows) => rows.length === 0, 60_000);
  assert.equal(gone.length, 0, 'the dropped column leaves no index behind');
});

test('the admin CLI creates, lists, changes and refuses data tables (JSON arrays for columns)', async () => {
  const t = await newTenant();
  const created = await cli(
    'data:tables:create',
    '--account',
    t.accountUid,
    '--name',
    'CLI table',
    '--columns',
    JSON.stringify([
      { key: 'name', type: 'text', required: true },
      { key: 'stage', type: 'select', config: { options: options('new', 'done') } },
    ]),
    '--status-fields',
    JSON.stringify([{ column: 'stage', initial: ['new'], moves: [{ from: 'new', to: 'done' }] }]),
    '--quotas',
    '{"records":10}',
  );
  assert.equal(created.code, 0, JSON.stringify(created.json));
  assert.equal(created.json.data.slug, 'cli-table');
  assert.equal(created.json.data.quotas.records, 10);
  const listed = await cli('data:tables:list', '--account', t.accountUid);
  assert.deepEqual(
    listed.json.data.map((x: any) => x.slug),
    ['cli-table'],
  );
  const added = await cli(
    'data:columns:add',
    '--account',
    String(t.accountId),
    '--table',
    'cli-table',
    '--key',
    'amount',
    '--type',
    'currency',
    '--config',
    '{"currency":"usd"}',
  );
  assert.equal(added.code, 0, JSON.stringify(added.json));
  assert.deepEqual(added.json.data.columns[2].config, { currency: 'USD', precision: 0 });
  const moved = await cli(
    'data:columns:update',
    '--account',
    t.accountUid,
    '--table',
    'cli-table',
    '--column',
    'amount',
    '--position',
    '0',
  );
  assert.equal(moved.json.data.columns[0].key, 'amount');
  const shown = await cli('data:tables:show', '--account', t.accountUid, '--table', created.json.data.id);
  assert.equal(shown.json.data.columns.length, 3);
  const refused = await cli('data:columns:add', '--account', t.accountUid, '--table', 'cli-table', '--key', 'Bad', '--type', 'text');
  assert.equal(refused.code, 1);
  assert.ok(refused.json.errors.key);
  const group = await cli('data:groups:create', '--account', t.accountUid, '--name', 'Ops', '--tables', created.json.data.id);
  assert.deepEqual(group.json.data.table_ids, [created.json.data.id]);
  assert.equal((await cli('data:groups:list', '--account', t.accountUid)).json.data.length, 1);
  assert.equal((await cli('data:tables:delete', '--account', t.accountUid, '--table', 'cli-table')).code, 0);
  assert.equal((await cli('data:tables:list', '--account', t.accountUid)).json.data.length, 0);
});
