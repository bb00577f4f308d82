import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import type { Client } from '@modelcontextprotocol/client';
import { openOrm } from '../../entities/orm.js';
import { exec } from '../../entities/db.js';
import { admin, api, newTenant, type Tenant } from '../support/stack.js';
import { withMcpServer } from '../support/mcp.js';
import { customerOperations } from '../../api/operations.js';
import { toolOf } from '../../api/mcp/tools.js';
import { FIELD_TYPES, TYPE_INFO } from '../../domain/data/vocabulary.js';

// The read side of data tables against the real stack (issue 14, point 2 and 11): tables visible
// to the caller, a table's schema and states, groups and their overview, and the same operations
// as tools of the `data` MCP server. Records for the overview are written straight into
// data_records with chosen timestamps (the API stamps them with now), and the table counters moved
// as a create would.

const orm = await openOrm(process.env.DATABASE_URL!, 2);
after(() => orm.close());

const DAY = 86_400_000;
const T = '/api/v3/data/tables';
const G = '/api/v3/data/groups';

async function userToken(t: Tenant, permissions: string[]): Promise<string> {
  const u = await admin('POST', `/accounts/${t.accountId}/users`, {
    email: `d${randomUUID().slice(0, 8)}@example.com`,
    name: 'Data user',
    permissions,
  });
  assert.equal(u.status, 201, u.text);
  const k = await admin('POST', `/accounts/${t.accountId}/keys`, { name: 'data key', user_id: u.body.data.id });
  assert.equal(k.status, 201, k.text);
  return k.body.data.token;
}

async function createTable(t: Tenant, body: Record<string, unknown>) {
  const r = await admin('POST', `/accounts/${t.accountUid}/data/tables`, body);
  assert.equal(r.status, 201, r.text);
  return r.body.data as { id: string; slug: string; columns: { key: string }[] };
}

/** Records with chosen timestamps, and the table's counters moved as creates would move them. */
async function seed(
  t: Tenant,
  tableId: string,
  rows: { data: Record<string, unknown>; created: Date; updated?: Date }[],
): Promise<string[]> {
  const em = orm.em.fork();
  const ids: string[] = [];
  let bytes = 0;
  for (const r of rows) {
    const id = randomUUID();
    const size = Buffer.byteLength(JSON.stringify(r.data));
    bytes += size;
    await exec(
      em,
      `insert into data_records (id, account_id, table_id, data, source, size_bytes, created_at, updated_at)
       values (?, ?, ?, ?::jsonb, 'api', ?, ?, ?)`,
      [id, t.accountId, tableId, JSON.stringify(r.data), size, r.created, r.updated ?? r.created],
    );
    ids.push(id);
  }
  await exec(em, 'update data_tables set records_count = records_count + ?, storage_bytes = storage_bytes + ? where id = ?', [
    rows.length,
    bytes,
    tableId,
  ]);
  return ids;
}

interface World {
  t: Tenant;
  other: Tenant;
  reader: string;
  editor: string;
  customers: { id: string; slug: string };
  orders: { id: string; slug: string };
  secret: { id: string };
  readonly: { id: string };
  sales: string;
  hidden: string;
  now: number;
  created: Record<string, Date>;
}

let world: Promise<World> | undefined;
/** One account with four tables, two groups and three callers; built once for the reads below. */
function setup(): Promise<World> {
  return (world ??= (async () => {
    const t = await newTenant();
    const other = await newTenant();
    const reader = await userToken(t, ['data.view']);
    const editor = await userToken(t, ['data.view', 'data.records.edit']);
    const customers = await createTable(t, {
      name: 'Customers',
      description: 'People who buy',
      icon: 'users',
      columns: [
        { key: 'name', label: 'Name', type: 'text', required: true, ui: { width: 260, help_text: 'Full name' } },
        { key: 'email', type: 'email', unique: true },
        { key: 'phone', type: 'phone', config: { region: 'KE' } },
        {
          key: 'stage',
          type: 'select',
          config: {
            options: [
              { key: 'lead', label: 'Lead' },
              { key: 'customer', label: 'Customer' },
              { key: 'lost', label: 'Lost' },
            ],
          },
        },
        { key: 'spend', type: 'currency', config: { currency: 'USD', precision: 2 } },
        { key: 'score', type: 'number', config: { min: 0, max: 100 } },
        { key: 'legacy', type: 'unknown', stored_type: 'formula' },
        { key: 'code', type: 'auto_number' },
      ],
      masks: [
        { column: 'phone', unless_permission: 'data.grants.pii', style: 'last4' },
        { column: 'spend', unless_permission: 'data.grants.finance', style: 'full' },
      ],
      status_fields: [
        {
          column: 'stage',
          label: 'Stage',
          required: true,
          strict: true,
          initial: ['lead'],
          moves: [
            { from: 'lead', to: 'customer' },
            { from: '*', to: 'lost', permission: 'data.grants.closers' },
          ],
        },
      ],
      unique_sets: [{ key: 'name_phone', columns: ['name', 'phone'] }],
      quotas: { records: 500 },
    });
    const orders = await createTable(t, {
      name: 'Orders',
      columns: [
        { key: 'title', type: 'text' },
        { key: 'customer', type: 'relation', config: { table_id: customers.id } },
        { key: 'total', type: 'currency' },
        { key: 'placed_at', type: 'datetime' },
      ],
    });
    const secret = await createTable(t, {
      name: 'Secret ledger',
      access: { view: { permissions: ['data.grants.secret'], users: [] }, write: { permissions: [], users: [] } },
      columns: [{ key: 'note', type: 'text' }],
    });
    const readonly = await createTable(t, {
      name: 'Price list',
      access: { view: { permissions: [], users: [] }, write: { permissions: ['data.grants.pricing'], users: [] } },
      columns: [{ key: 'item', type: 'text' }],
    });
    const sales = await admin('POST', `/accounts/${t.accountUid}/data/groups`, {
      name: 'Sales',
      description: 'Customers and their orders',
      icon: 'chart',
      table_ids: [customers.id, orders.id, secret.id],
      reports: [
        { key: 'revenue', name: 'Revenue', table_id: orders.id, measure: 'sum', column: 'total' },
        { key: 'secrets', name: 'Secret count', table_id: secret.id, measure: 'count' },
      ],
    });
    assert.equal(sales.status, 201, sales.text);
    const hidden = await admin('POST', `/accounts/${t.accountUid}/data/groups`, { name: 'Vault', table_ids: [secret.id] });
    assert.equal(hidden.status, 201, hidden.text);

    const now = Date.now();
    const ago = (days: number) => new Date(now - days * DAY);
    const created = { c1: ago(2), c2: ago(10), c3: ago(40), o1: ago(1), o2: ago(5), o3: ago(50) };
    const [c1, , c3] = await seed(t, customers.id, [
      { data: { name: 'Asha', phone: '+254712345678', stage: 'lead', spend: 50 }, created: created.c1 },
      { data: { name: 'Baraka', stage: 'customer' }, created: created.c2, updated: ago(1) },
      { data: { name: 'Chausiku', stage: 'lost', spend: 999 }, created: created.c3 },
    ]);
    await seed(t, orders.id, [
      { data: { title: 'First', customer: c1, total: 100.5 }, created: created.o1 },
      { data: { title: 'Second', total: 200 }, created: created.o2 },
      { data: { title: 'Old', customer: c3, total: 1000 }, created: created.o3 },
    ]);
    return {
      t,
      other,
      reader,
      editor,
      customers,
      orders,
      secret,
      readonly,
      sales: sales.body.data.id,
      hidden: hidden.body.data.id,
      now,
      created,
    };
  })());
}

/** A refusal in the data envelope. */
function dataRefusal(r: { status: number; body: any; text: string }, status: number, code: string) {
  assert.equal(r.status, status, r.text);
  assert.equal(r.body.error?.code, code, r.text);
  assert.equal(r.body.code, code);
  assert.equal(typeof r.body.message, 'string');
  assert.equal(typeof r.body.error.retryable, 'boolean');
  assert.equal(r.body.status, undefined, 'no v3 status wrapper');
}

test('GET /data/tables lists the tables the caller may see, with counts, in the native envelope', async () => {
  const w = await setup();
  const all = await api('GET', T, w.t.token);
  assert.equal(all.status, 200, all.text);
  assert.equal(all.body.status, undefined);
  assert.deepEqual(
    all.body.tables.map((x: any) => x.name),
    ['Customers', 'Orders', 'Price list', 'Secret ledger'],
  );
  const c = all.body.tables.find((x: any) => x.id === w.customers.id);
  assert.deepEqual(
    { ...c, updated_at: undefined },
    {
      id: w.customers.id,
      name: 'Customers',
      slug: w.customers.slug,
      description: 'People who buy',
      icon: 'users',
      records_count: 3,
      columns_count: 8,
      updated_at: undefined,
    },
  );
  assert.ok(!Number.isNaN(Date.parse(c.updated_at)));

  const read = await api('GET', T, w.reader);
  assert.equal(read.status, 200, read.text);
  assert.deepEqual(
    read.body.tables.map((x: any) => x.name),
    ['Customers', 'Orders', 'Price list'],
    'the secret table is hidden',
  );
  const mine = await api('GET', T, w.other.token);
  assert.ok(!mine.body.tables.some((x: any) => x.id === w.customers.id), 'another account never lists these');
});

test('GET …/schema: table, columns with rules, operators and ui, types, system columns, access, limits, actions', async () => {
  const w = await setup();
  const r = await api('GET', `${T}/${w.customers.id}/schema`, w.t.token);
  assert.equal(r.status, 200, r.text);
  const s = r.body;
  assert.deepEqual(Object.keys(s).sort(), [
    'access',
    'actions',
    'can',
    'columns',
    'limits',
    'sort_index_threshold',
    'system_columns',
    'table',
    'types',
    'unique_sets',
  ]);
  assert.deepEqual(
    { ...s.table, created_at: undefined, updated_at: undefined, storage_bytes: undefined },
    {
      id: w.customers.id,
      name: 'Customers',
      slug: w.customers.slug,
      description: 'People who buy',
      icon: 'users',
      records_count: 3,
      storage_bytes: undefined,
      title_column: null,
      created_at: undefined,
      updated_at: undefined,
      retention: s.table.retention,
      legal_hold: false,
    },
  );
  assert.ok(s.table.storage_bytes > 0);
  assert.equal(typeof s.table.retention, 'object');

  const col = (key: string) => s.columns.find((c: any) => c.key === key);
  assert.deepEqual(
    s.columns.map((c: any) => c.key),
    ['name', 'email', 'phone', 'stage', 'spend', 'score', 'legacy', 'code'],
  );
  assert.deepEqual(
    s.columns.map((c: any) => c.position),
    [0, 1, 2, 3, 4, 5, 6, 7],
  );
  for (const c of s.columns) {
    for (const f of ['id', 'key', 'label', 'type', 'position', 'required', 'unique', 'indexed', 'rules', 'operators', 'ui'])
      assert.ok(f in c, `${c.key}.${f}`);
    assert.deepEqual(c.operators, [...TYPE_INFO[c.type as keyof typeof TYPE_INFO].operators], c.key);
    assert.equal('stored_type' in c, c.type === 'unknown', `${c.key}: stored_type only for unknown`);
  }
  assert.deepEqual(col('name').rules, ['required', 'string', 'max:1000']);
  assert.deepEqual(col('email').rules, ['nullable', 'unique', 'email']);
  assert.deepEqual(col('phone').rules, ['nullable', 'phone:KE']);
  assert.deepEqual(col('stage').rules, ['nullable', 'in:lead,customer,lost']);
  assert.deepEqual(col('spend').rules, ['nullable', 'numeric', 'decimal:0,2', 'currency:USD']);
  assert.deepEqual(col('score').rules, ['nullable', 'numeric', 'min:0', 'max:100']);
  assert.deepEqual(col('code').rules, ['prohibited']);
  assert.equal(col('spend').config.currency, 'USD');
  assert.equal(col('phone').config.region, 'KE');
  // ui: the type's defaults, the stored hints over them, the title flag; a warning for unknown.
  assert.deepEqual(col('name').ui, {
    cell: 'text',
    input: 'text',
    filter: 'text',
    width: 260,
    hidden_in_grid: false,
    hidden_in_form: false,
    help_text: 'Full name',
    placeholder: null,
    is_title_field: true,
  });
  assert.equal(col('email').ui.is_title_field, false);
  assert.equal(col('stage').ui.cell, 'badge');
  assert.equal(col('code').ui.hidden_in_form, true);
  assert.equal(col('legacy').stored_type, 'formula');
  assert.match(col('legacy').ui.warning, /formula/);
  assert.equal(col('name').ui.warning, undefined);

  assert.deepEqual(Object.keys(s.types).sort(), [...FIELD_TYPES].sort());
  assert.deepEqual(s.types.currency, {
    label: 'Currency',
    operators: [...TYPE_INFO.currency.operators],
    ui: { cell: 'currency', input: 'number', filter: 'number' },
    numeric: true,
    temporal: false,
  });
  assert.equal(s.types.datetime.temporal, true);
  assert.deepEqual(
    s.system_columns.map((c: any) => c.key),
    ['$id', '$created_at', '$updated_at', '$source'],
  );
  assert.deepEqual(s.system_columns[0].operators, ['equals', 'in']);
  assert.deepEqual(s.access, { can_view: true, can_write: true, masked_columns: [] });
  assert.deepEqual(s.unique_sets, [{ key: 'name_phone', columns: ['name', 'phone'] }]);
  assert.deepEqual(s.limits, {
    record_bytes: 8192,
    page_default: 50,
    page_max: 200,
    filter_leaves: 40,
    filter_depth: 6,
    search_columns: ['name', 'email', 'phone'],
    history_page: 50,
    quotas: {
      columns: { limit: 100, used: 8 },
      indexes: { limit: 16, used: 0 },
      records: { limit: 500, used: 3 },
      storage_bytes: { limit: 2 * 1024 * 1024 * 1024, used: s.table.storage_bytes },
    },
  });
  assert.equal(s.sort_index_threshold, 10_000);
  assert.deepEqual(s.actions, { list: true, read: true, create: true, update: true, delete: true, history: true });
  assert.deepEqual(s.can, { view: true, create: true, update: true, delete: true });

  // The slug names the same table.
  const bySlug = await api('GET', `${T}/${w.customers.slug}/schema`, w.t.token);
  assert.equal(bySlug.status, 200, bySlug.text);
  assert.equal(bySlug.body.table.id, w.customers.id);
});

test('schema per caller: masks, write grants and the edit permission decide access, actions and can', async () => {
  const w = await setup();
  const reader = (await api('GET', `${T}/${w.customers.id}/schema`, w.reader)).body;
  assert.deepEqual(reader.access, { can_view: true, can_write: false, masked_columns: ['phone', 'spend'] });
  assert.deepEqual(reader.actions, { list: true, read: true, create: false, update: false, delete: false, history: true });
  assert.deepEqual(reader.can, { view: true, create: false, update: false, delete: false });
  const editor = (await api('GET', `${T}/${w.customers.id}/schema`, w.editor)).body;
  assert.deepEqual(editor.access, { can_view: true, can_write: true, masked_columns: ['phone', 'spend'] });
  assert.equal(editor.can.create, true);
  // The price list's write grant names a permission the editor lacks.
  const prices = await api('GET', `${T}/${w.readonly.id}/schema`, w.editor);
  assert.equal(prices.status, 200, prices.text);
  assert.equal(prices.body.access.can_write, false);
  assert.deepEqual(prices.body.can, { view: true, create: false, update: false, delete: false });
  assert.equal((await api('GET', `${T}/${w.readonly.id}/schema`, w.t.token)).body.access.can_write, true);
});

test('GET …/states: every status field with its states and moves, allowed for this caller', async () => {
  const w = await setup();
  const full = await api('GET', `${T}/${w.customers.id}/states`, w.t.token);
  assert.equal(full.status, 200, full.text);
  assert.deepEqual(full.body, {
    table_id: w.customers.id,
    fields: [
      {
        key: 'stage',
        label: 'Stage',
        required: true,
        strict: true,
        initial: ['lead'],
        states: [
          { key: 'lead', label: 'Lead' },
          { key: 'customer', label: 'Customer' },
          { key: 'lost', label: 'Lost' },
        ],
        moves: [
          { from: 'lead', to: 'customer', permission: null, allowed: true },
          { from: '*', to: 'lost', permission: 'data.grants.closers', allowed: true },
        ],
      },
    ],
  });
  const allowed = async (token: string) =>
    (await api('GET', `${T}/${w.customers.id}/states`, token)).body.fields[0].moves.map((m: any) => m.allowed);
  assert.deepEqual(await allowed(w.editor), [true, false], 'the editor lacks data.grants.closers');
  assert.deepEqual(await allowed(w.reader), [false, false], 'a reader may make no move');
  const none = await api('GET', `${T}/${w.orders.slug}/states`, w.t.token);
  assert.deepEqual(none.body, { table_id: w.orders.id, fields: [] });
});

test('tables: foreign, hidden, unknown and malformed ids are 404 not_found; no data.view is 403; a legacy key is refused', async () => {
  const w = await setup();
  for (const path of ['schema', 'states']) {
    dataRefusal(await api('GET', `${T}/${w.customers.id}/${path}`, w.other.token), 404, 'not_found');
    dataRefusal(await api('GET', `${T}/${w.customers.slug}/${path}`, w.other.token), 404, 'not_found');
    dataRefusal(await api('GET', `${T}/${w.secret.id}/${path}`, w.reader), 404, 'not_found');
    dataRefusal(await api('GET', `${T}/${randomUUID()}/${path}`, w.t.token), 404, 'not_found');
    dataRefusal(await api('GET', `${T}/not-a-table/${path}`, w.t.token), 404, 'not_found');
  }
  assert.equal((await api('GET', `${T}/${w.secret.id}/schema`, w.t.token)).status, 200, 'the grant holder sees it');
  const noView = await userToken(w.t, ['contacts.view']);
  dataRefusal(await api('GET', T, noView), 403, 'permission_denied');
  dataRefusal(await api('GET', `${T}/${w.customers.id}/schema`, noView), 403, 'permission_denied');
  dataRefusal(await api('GET', G, noView), 403, 'permission_denied');
  dataRefusal(await api('GET', T, w.t.legacyToken), 403, 'permission_denied');
  dataRefusal(await api('GET', `${G}/${w.sales}/overview`, w.t.legacyToken), 403, 'permission_denied');
});

test('GET /data/groups and /data/groups/{group}: hidden member tables are left out everywhere', async () => {
  const w = await setup();
  const full = await api('GET', G, w.t.token);
  assert.equal(full.status, 200, full.text);
  assert.deepEqual(
    full.body.groups.map((g: any) => [g.name, g.tables_count, g.reports_count]),
    [
      ['Sales', 3, 2],
      ['Vault', 1, 0],
    ],
  );
  const sales = full.body.groups[0];
  assert.equal(sales.id, w.sales);
  assert.equal(sales.description, 'Customers and their orders');
  assert.equal(sales.icon, 'chart');
  assert.ok(sales.slug && sales.updated_at);

  const read = await api('GET', G, w.reader);
  assert.deepEqual(
    read.body.groups.map((g: any) => [g.name, g.tables_count, g.reports_count]),
    [['Sales', 2, 1]],
    'the group of only hidden tables is not listed; counts leave hidden tables out',
  );
  assert.deepEqual((await api('GET', G, w.other.token)).body.groups, []);

  const one = await api('GET', `${G}/${w.sales}`, w.reader);
  assert.equal(one.status, 200, one.text);
  assert.equal(one.body.group.id, w.sales);
  assert.deepEqual(
    one.body.tables.map((x: any) => [x.id, x.name]),
    [
      [w.customers.id, 'Customers'],
      [w.orders.id, 'Orders'],
    ],
  );
  assert.deepEqual(one.body.tables[1].columns, [
    { key: 'title', label: 'Title', type: 'text' },
    { key: 'customer', label: 'Customer', type: 'relation' },
    { key: 'total', label: 'Total', type: 'currency' },
    { key: 'placed_at', label: 'Placed at', type: 'datetime' },
  ]);
  assert.deepEqual(one.body.reports, [
    { key: 'revenue', name: 'Revenue', table_id: w.orders.id, measure: 'sum', column: 'total', date_column: null },
  ]);
  assert.equal((await api('GET', `${G}/${w.sales}`, w.t.token)).body.tables.length, 3);

  dataRefusal(await api('GET', `${G}/${w.hidden}`, w.reader), 404, 'not_found');
  assert.equal((await api('GET', `${G}/${w.hidden}`, w.t.token)).status, 200);
  for (const path of [`${G}/${w.sales}`, `${G}/${w.sales}/overview`]) {
    dataRefusal(await api('GET', path, w.other.token), 404, 'not_found');
  }
  dataRefusal(await api('GET', `${G}/${randomUUID()}`, w.t.token), 404, 'not_found');
  dataRefusal(await api('GET', `${G}/sales`, w.t.token), 404, 'not_found');
  dataRefusal(await api('GET', `${G}/${w.hidden}/overview`, w.reader), 404, 'not_found');
});

test('overview, default last_30_days: totals, cards, headlines, a day series and relationships', async () => {
  const w = await setup();
  const r = await api('GET', `${G}/${w.sales}/overview`, w.t.token);
  assert.equal(r.status, 200, r.text);
  const o = r.body;
  assert.equal(o.group.id, w.sales);
  assert.equal(o.window.range, 'last_30_days');
  const span = Date.parse(o.window.to) - Date.parse(o.window.from);
  assert.equal(span, 30 * DAY);
  assert.ok(Math.abs(Date.parse(o.window.to) - Date.now()) < 60_000);
  assert.equal(o.bucket, 'day');
  // In the window: customers c1, c2 and orders o1, o2; c2 changed after creation.
  assert.deepEqual(o.totals, { records: 6, created_in_window: 4, updated_in_window: 1 });
  assert.deepEqual(
    o.tables.map((c: any) => [c.id, c.name, c.records_count, c.created_in_window, c.updated_in_window]),
    [
      [w.customers.id, 'Customers', 3, 2, 1],
      [w.orders.id, 'Orders', 3, 2, 0],
      [w.secret.id, 'Secret ledger', 0, 0, 0],
    ],
  );
  assert.equal(o.tables[2].last_updated_at, null);
  assert.equal(Date.parse(o.tables[1].last_updated_at), w.created.o1.getTime());

  const headline = (table: string, column: string) => o.headlines.find((h: any) => h.table_id === table && h.column === column);
  assert.deepEqual(headline(w.orders.id, 'total'), {
    table_id: w.orders.id,
    column: 'total',
    label: 'Total',
    currency: 'TZS',
    sum: 300.5,
    avg: 150.25,
    count: 2,
  });
  assert.deepEqual(headline(w.customers.id, 'spend'), {
    table_id: w.customers.id,
    column: 'spend',
    label: 'Spend',
    currency: 'USD',
    sum: 50,
    avg: 50,
    count: 1,
  });
  assert.deepEqual(headline(w.customers.id, 'score'), {
    table_id: w.customers.id,
    column: 'score',
    label: 'Score',
    currency: null,
    sum: 0,
    avg: null,
    count: 0,
  });

  assert.ok(o.series.length === 30 || o.series.length === 31, String(o.series.length));
  assert.equal(
    o.series.reduce((s: number, b: any) => s + b.created, 0),
    4,
  );
  const dayOf = (d: Date) => new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate())).toISOString();
  const bucket = (d: Date) => o.series.find((b: any) => b.bucket_start === dayOf(d));
  assert.ok(bucket(w.created.c1).by_table[w.customers.id] >= 1);
  assert.ok(bucket(w.created.o1).by_table[w.orders.id] >= 1);
  assert.equal(bucket(w.created.o1).by_table[w.secret.id], 0);
  for (let i = 1; i < o.series.length; i++)
    assert.equal(
      Date.parse(o.series[i].bucket_start) - Date.parse(o.series[i - 1].bucket_start),
      DAY,
      'consecutive days, empty ones included',
    );

  assert.deepEqual(o.relationships, [{ from_table: w.orders.id, column: 'customer', to_table: w.customers.id, linked: 2, unlinked: 1 }]);

  // A reader: hidden tables out of every figure, masked amount columns out of the headlines.
  const reader = (await api('GET', `${G}/${w.sales}/overview`, w.reader)).body;
  assert.deepEqual(
    reader.tables.map((c: any) => c.id),
    [w.customers.id, w.orders.id],
  );
  assert.equal(
    reader.headlines.find((h: any) => h.column === 'spend'),
    undefined,
    'spend is masked for a reader',
  );
  assert.ok(reader.headlines.find((h: any) => h.column === 'total'));
  assert.deepEqual(Object.keys(reader.series[0].by_table).sort(), [w.customers.id, w.orders.id].sort());
});

test('overview windows: named ranges, a JSON object, from and to; the bucket follows the length; a bad range is 422', async () => {
  const w = await setup();
  const ov = (query: string) => api('GET', `${G}/${w.sales}/overview?${query}`, w.t.token);

  const all = await ov('range=all_time');
  assert.equal(all.status, 200, all.text);
  assert.equal(all.body.window.range, 'all_time');
  assert.equal(Date.parse(all.body.window.from), w.created.o3.getTime(), 'all_time starts at the first record');
  assert.equal(all.body.totals.created_in_window, 6);
  assert.equal(all.body.bucket, 'day');
  assert.equal(all.body.headlines.find((h: any) => h.column === 'total').sum, 1300.5);

  const week = (await ov('range=last_7_days')).body;
  assert.deepEqual([week.totals.created_in_window, week.bucket, week.series.length >= 7], [3, 'day', true]);
  const today = (await ov('range=today')).body;
  assert.equal(today.bucket, 'hour');
  assert.equal(today.window.range, 'today');

  const from = new Date(w.now - 45 * DAY).toISOString().slice(0, 10);
  const to = new Date(w.now - 3 * DAY).toISOString().slice(0, 10);
  const json = await ov(`range=${encodeURIComponent(JSON.stringify({ from, to }))}`);
  assert.equal(json.status, 200, json.text);
  assert.equal(json.body.window.range, 'custom');
  assert.equal(json.body.window.from, `${from}T00:00:00.000Z`);
  // c2 (10 days), c3 (40 days), o2 (5 days) lie within; c1, o1 are too recent and o3 too old.
  assert.equal(json.body.totals.created_in_window, 3);
  const params = await ov(`from=${from}&to=${to}`);
  assert.equal(params.status, 200, params.text);
  assert.deepEqual(params.body.totals, json.body.totals);
  assert.deepEqual(params.body.window, json.body.window);

  const year = (await ov(`range=${encodeURIComponent(JSON.stringify({ from: '2025-01-01T00:00:00Z', to: '2026-06-01T00:00:00Z' }))}`)).body;
  assert.equal(year.bucket, 'week');
  assert.equal(new Date(year.series[0].bucket_start).getUTCDay(), 1, 'weeks start on Monday');
  const long = (await ov(`from=2010-01-01&to=2019-12-31`)).body;
  assert.equal(long.bucket, 'month');
  assert.equal(long.series.length, 120);
  assert.equal(long.totals.created_in_window, 0);

  for (const [query, field] of [
    ['range=last_31_days', 'range'],
    [`range=${encodeURIComponent('{"from":"2026-02-30"}')}`, 'range'],
    [`range=${encodeURIComponent('{"from":"2026-01-01T10:00:00"}')}`, 'range'],
    [`range=${encodeURIComponent('{"from":')}`, 'range'],
    [`range=${encodeURIComponent("'); drop table data_records;--")}`, 'range'],
    ['range=today&from=2026-01-01', 'range'],
    ['from=2026-03-01&to=2026-02-01', 'from'],
    ['from=tomorrow', 'from'],
    ['to=2026-01-01', 'from'],
  ]) {
    const bad = await ov(query);
    dataRefusal(bad, 422, 'validation_error');
    assert.equal(bad.body.error.field, field, query);
    assert.ok(bad.body.errors?.[field]?.length, query);
  }
  dataRefusal(await ov(`range=${'x'.repeat(401)}`), 422, 'validation_error');
});

// ---- MCP: the data server ------------------------------------------------------------------------

const mcp = <T>(token: string, fn: (c: Client) => Promise<T>) => withMcpServer('data', token, fn);

test('MCP /mcp/v1/data: every data operation is a tool with the same schemas; reads answer as REST does; errors carry the data envelope', async () => {
  const w = await setup();
  const cred = await admin('POST', `/accounts/${w.t.accountId}/mcp-credentials`, { name: 'assistant', user_id: w.t.userId });
  assert.equal(cred.status, 201, cred.text);
  const token = cred.body.data.token;
  const dataOps = customerOperations.filter((op) => op.path.startsWith('/api/v3/data/'));
  for (const name of [
    'list_data_tables',
    'get_data_table_schema',
    'get_data_table_states',
    'list_data_groups',
    'get_data_group',
    'get_data_group_overview',
  ])
    assert.ok(
      dataOps.some((op) => op.name === name),
      name,
    );

  await mcp(token, async (c) => {
    const tools = (await c.listTools()).tools;
    assert.deepEqual(
      tools.map((t) => t.name).sort(),
      dataOps.map((op) => op.name).sort(),
      'the data server serves exactly the data operations',
    );
    for (const op of dataOps) {
      const tool = tools.find((t) => t.name === op.name)!;
      assert.deepEqual(tool.inputSchema, toolOf(op).inputSchema, `${op.name}: input schema (the portable projection)`);
      assert.deepEqual(tool.outputSchema, toolOf(op).outputSchema, `${op.name}: output schema (its shape)`);
      assert.equal(op.envelope, 'data', op.name);
      assert.equal(op.issuerRequired, true, op.name);
      assert.equal(op.mcp?.scope, 'mcp:data', op.name);
      if (op.method === 'GET') assert.equal(tool.annotations?.readOnlyHint, true, op.name);
    }

    // The tool and the REST read answer the same. A background build (a table's search index, a
    // column's index) may move a table between the two reads, so the pair is read again until it agrees.
    const sameAsRest = async (name: string, args: Record<string, unknown>, path: string) => {
      let pair: [unknown, unknown] = [undefined, undefined];
      for (let attempt = 0; attempt < 10; attempt++) {
        const viaTool = (await c.callTool({ name, arguments: args })) as any;
        assert.notEqual(viaTool.isError, true, JSON.stringify(viaTool));
        pair = [viaTool.structuredContent, (await api('GET', path, w.t.token)).body];
        if (isDeepStrictEqual(...pair)) return;
        await new Promise((r) => setTimeout(r, 300));
      }
      assert.deepEqual(...pair);
    };
    await sameAsRest('list_data_tables', {}, T);
    await sameAsRest('get_data_table_schema', { table: w.customers.id }, `${T}/${w.customers.id}/schema`);

    const overview = (await c.callTool({ name: 'get_data_group_overview', arguments: { group: w.sales, range: 'last_7_days' } })) as any;
    assert.notEqual(overview.isError, true, JSON.stringify(overview));
    assert.equal(overview.structuredContent.totals.created_in_window, 3);

    const missing = (await c.callTool({ name: 'get_data_table_schema', arguments: { table: randomUUID() } })) as any;
    assert.equal(missing.isError, true);
    const body = JSON.parse(missing.content[0].text);
    assert.equal(body.error.code, 'not_found');
    assert.equal(body.code, 'not_found');
    assert.equal(body.error.retryable, false);

    const badRange = (await c.callTool({ name: 'get_data_group_overview', arguments: { group: w.sales, range: 'someday' } })) as any;
    assert.equal(badRange.isError, true);
    const refusal = JSON.parse(badRange.content[0].text);
    assert.deepEqual([refusal.error.code, refusal.error.field], ['validation_error', 'range']);
  });

  // Another account's credential: the same ids are not found through MCP either.
  const foreign = await admin('POST', `/accounts/${w.other.accountId}/mcp-credentials`, { name: 'other', user_id: w.other.userId });
  await mcp(foreign.body.data.token, async (c) => {
    const r = (await c.callTool({ name: 'get_data_table_schema', arguments: { table: w.customers.id } })) as any;
    assert.equal(r.isError, true);
    assert.equal(JSON.parse(r.content[0].text).error.code, 'not_found');
    const g = (await c.callTool({ name: 'get_data_group', arguments: { group: w.sales } })) as any;
    assert.equal(JSON.parse(g.content[0].text).error.code, 'not_found');
  });
});
