import { defineOperation, type Operation } from '../operation.js';
import { deletedSchema, listSchema } from '../answers.js';
import { DATA_LIMITS, FIELD_TYPES, INDEX_STATUSES } from '../../domain/data/vocabulary.js';
import { createTable, deleteTable, listTables, readTable, updateTable } from '../../services/data/table-definitions.js';
import { addColumn, deleteColumn, updateColumn } from '../../services/data/column-definitions.js';
import { createGroup, deleteGroup, listGroups, readGroup, updateGroup } from '../../services/data/group-definitions.js';

// The operator's side of data tables (docs/data-tables.md, Operator API): tables, their columns and
// data groups of any account. The schemas say the shapes; what they mean (keys, option lists,
// grants, status moves, quotas) is checked by services/data/*-definitions.ts, which refuses the whole
// request (422, 409 for a slug taken, 402 past a quota) before writing anything. Each operation is
// also an admin CLI command; lists of objects (columns, masks…) are given as JSON arrays there.

const A = '/admin/v1/accounts/{account}/data';
const base = { tag: 'Data tables (operator)', auth: 'operator' } as const;

// ---- Schemas -----------------------------------------------------------------------------------

const dateTime = { type: 'string', format: 'date-time' } as const;
const nullableText = (max: number) => ({ type: ['string', 'null'], maxLength: max }) as const;
const name = { type: 'string', minLength: 1, maxLength: 160 } as const;
const slug = {
  type: 'string',
  minLength: 1,
  maxLength: 63,
  pattern: DATA_LIMITS.slugPattern,
  description: 'Lower case letters, digits and dashes',
} as const;
const columnKey = {
  type: 'string',
  minLength: 1,
  maxLength: 63,
  pattern: DATA_LIMITS.keyPattern,
  description: 'A column key: a lower case letter, then lower case letters, digits and _',
} as const;
const shortText = { type: 'string', maxLength: 100 } as const;
const stringList = <const I>(max: number, item: I) => ({ type: 'array', maxItems: max, items: item }) as const;

const uiSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    cell: { type: 'string', maxLength: 32 },
    input: { type: 'string', maxLength: 32 },
    filter: nullableText(32),
    width: { type: 'integer', minimum: 20, maximum: 2000 },
    hidden_in_grid: { type: 'boolean' },
    hidden_in_form: { type: 'boolean' },
    help_text: nullableText(500),
    placeholder: nullableText(200),
  },
} as const;

const configSchema = {
  type: 'object',
  description:
    'Per type: select/multi_select options [{key,label,color?}] (1–200); relation table_id; phone region (default TZ); ' +
    'currency currency (default TZS) and precision 0–6; number precision 0–10, min, max; text/long_text max_length; ' +
    'file multiple; default (a valid value of the column; not on auto_number, file, unknown).',
} as const;

const columnFields = {
  key: columnKey,
  label: name,
  type: { enum: FIELD_TYPES },
  stored_type: { ...nullableText(64), minLength: 1, description: 'Only for type unknown: what the source system called it' },
  required: { type: 'boolean' },
  unique: { type: 'boolean', description: 'Unique among live records (not for file or unknown)' },
  indexed: { type: 'boolean', description: 'Build a sort/filter index (in the background; see index_status)' },
  config: configSchema,
  ui: uiSchema,
} as const;

// A stored type belongs to a column of type unknown only (domain/data/column-rules.ts says the same).
const storedTypeOnlyForUnknown = {
  if: { required: ['type'], properties: { type: { not: { const: 'unknown' } } } },
  then: { properties: { stored_type: { type: 'null', 'x-error': 'Only a column of type unknown has a stored type.' } } },
} as const;

const columnBody = {
  type: 'object',
  required: ['key', 'type'],
  additionalProperties: false,
  properties: { ...columnFields, position: { type: 'integer', minimum: 0, description: 'Where to insert it (0-based); default last' } },
  ...storedTypeOnlyForUnknown,
} as const;

const grant = {
  type: 'object',
  additionalProperties: false,
  properties: { permissions: stringList(50, shortText), users: stringList(200, { type: 'integer', minimum: 1 }) },
} as const;

const settingsFields = {
  name,
  slug,
  description: nullableText(2000),
  icon: nullableText(64),
  title_column: { ...nullableText(63), description: 'Key of a text, long_text, email or phone column naming records' },
  retention: {
    type: 'object',
    additionalProperties: false,
    properties: {
      history_days: { type: ['integer', 'null'], minimum: 1, maximum: 36_500 },
      deleted_records_days: { type: ['integer', 'null'], minimum: 1, maximum: 36_500 },
    },
  },
  legal_hold: { type: 'boolean' },
  access: {
    type: 'object',
    additionalProperties: false,
    description: 'Who sees and who writes the table beyond data.view / data.records.edit (empty lists: everyone with those)',
    properties: { view: grant, write: grant },
  },
  masks: {
    type: 'array',
    maxItems: 100,
    items: {
      type: 'object',
      required: ['column', 'unless_permission', 'style'],
      additionalProperties: false,
      properties: { column: columnKey, unless_permission: { type: 'string', maxLength: 100 }, style: { enum: ['full', 'last4', 'email'] } },
    },
  },
  status_fields: {
    type: 'array',
    maxItems: 20,
    items: {
      type: 'object',
      required: ['column'],
      additionalProperties: false,
      properties: {
        column: columnKey,
        label: name,
        required: { type: 'boolean' },
        strict: { type: 'boolean', description: 'Default true: only listed moves are allowed' },
        initial: stringList(200, shortText),
        moves: {
          type: 'array',
          maxItems: 1000,
          items: {
            type: 'object',
            required: ['from', 'to'],
            additionalProperties: false,
            properties: {
              from: { type: 'string', maxLength: 64, description: "An option key, or '*' for any state" },
              to: { type: 'string', maxLength: 64 },
              permission: nullableText(100),
            },
          },
        },
      },
    },
  },
  unique_sets: {
    type: 'array',
    maxItems: 20,
    items: {
      type: 'object',
      required: ['key', 'columns'],
      additionalProperties: false,
      properties: { key: columnKey, columns: stringList(5, columnKey) },
    },
  },
  quotas: {
    type: 'object',
    additionalProperties: false,
    properties: {
      columns: { type: 'integer', minimum: 1, maximum: 10_000 },
      indexes: { type: 'integer', minimum: 1, maximum: 1_000 },
      records: { type: 'integer', minimum: 1 },
      storage_bytes: { type: 'integer', minimum: 1, maximum: Number.MAX_SAFE_INTEGER },
    },
  },
} as const;

const createTableBody = {
  type: 'object',
  required: ['name', 'columns'],
  additionalProperties: false,
  properties: {
    ...settingsFields,
    columns: {
      type: 'array',
      maxItems: 1000,
      description: 'Columns in display order',
      items: {
        type: 'object',
        required: ['key', 'type'],
        additionalProperties: false,
        properties: columnFields,
        ...storedTypeOnlyForUnknown,
      },
    },
  },
} as const;

const columnSchema = {
  type: 'object',
  required: ['id', 'key', 'label', 'type', 'position', 'required', 'unique', 'indexed', 'index_status', 'config', 'ui'],
  properties: {
    id: { type: 'string', format: 'uuid' },
    key: { type: 'string' },
    label: { type: 'string' },
    type: { enum: FIELD_TYPES },
    stored_type: { type: ['string', 'null'] },
    position: { type: 'integer' },
    required: { type: 'boolean' },
    unique: { type: 'boolean' },
    indexed: { type: 'boolean' },
    index_status: { enum: [...INDEX_STATUSES, null] },
    index_error: { type: ['string', 'null'] },
    config: { type: 'object' },
    ui: { type: 'object' },
  },
} as const;

const tableSchema = {
  type: 'object',
  required: ['id', 'account_id', 'name', 'slug', 'columns', 'quotas', 'access', 'search_index'],
  properties: {
    id: { type: 'string', format: 'uuid' },
    account_id: { type: 'integer' },
    name: { type: 'string' },
    slug: { type: 'string' },
    description: { type: ['string', 'null'] },
    icon: { type: ['string', 'null'] },
    title_column: { type: ['string', 'null'] },
    retention: { type: 'object' },
    legal_hold: { type: 'boolean' },
    access: { type: 'object' },
    masks: { type: 'array', items: { type: 'object' } },
    status_fields: { type: 'array', items: { type: 'object' } },
    unique_sets: { type: 'array', items: { type: 'object' } },
    quotas: { type: 'object' },
    records_count: { type: 'integer' },
    storage_bytes: { type: 'integer' },
    search_index: {
      type: 'object',
      properties: {
        status: { enum: [...INDEX_STATUSES, null] },
        columns: { type: ['array', 'null'], items: { type: 'string' } },
        error: { type: ['string', 'null'] },
      },
    },
    columns: { type: 'array', items: columnSchema },
    created_at: dateTime,
    updated_at: dateTime,
  },
} as const;

const reportItem = {
  type: 'object',
  required: ['key', 'name', 'table_id', 'measure'],
  additionalProperties: false,
  properties: {
    key: columnKey,
    name,
    table_id: { type: 'string', maxLength: 63, description: 'A member table (id or slug; stored as its id)' },
    measure: { enum: ['count', 'sum', 'avg'] },
    column: { ...nullableText(63), description: 'The numeric column a sum or avg reads' },
    date_column: { ...nullableText(63), description: 'A date or datetime column, $created_at or $updated_at, to bucket by' },
    filter: { type: ['object', 'null'], description: 'A records filter (the records list condition tree)' },
  },
} as const;

const groupFields = {
  name,
  slug,
  description: nullableText(2000),
  icon: nullableText(64),
  table_ids: {
    ...stringList(100, { type: 'string', maxLength: 63 }),
    description: 'Member tables of the same account (ids or slugs; stored as ids), in display order',
  },
  reports: { type: 'array', maxItems: 50, items: reportItem },
} as const;

const groupSchema = {
  type: 'object',
  required: ['id', 'account_id', 'name', 'slug', 'table_ids', 'reports'],
  properties: {
    id: { type: 'string', format: 'uuid' },
    account_id: { type: 'integer' },
    name: { type: 'string' },
    slug: { type: 'string' },
    description: { type: ['string', 'null'] },
    icon: { type: ['string', 'null'] },
    table_ids: { type: 'array', items: { type: 'string' } },
    reports: { type: 'array', items: { type: 'object' } },
    created_at: dateTime,
    updated_at: dateTime,
  },
} as const;

const deleted = deletedSchema();
const noQuery = { type: 'object', properties: {} } as const;

// ---- Tables ------------------------------------------------------------------------------------

const tableOps = [
  defineOperation({
    ...base,
    name: 'admin_create_data_table',
    method: 'POST',
    path: `${A}/tables`,
    summary: 'Create a data table with its columns',
    description:
      'The whole definition is checked before anything is written: 422 names each field at fault, 409 when the slug is taken, ' +
      '402 past the table’s column or index quota. Indexed columns start pending and are built in the background.',
    refusals: { 402: 'More columns or indexed columns than the table’s quotas', 409: 'The account already has a table with this slug' },
    body: createTableBody,
    output: { kind: 'resource', status: 201, description: 'The table with its columns', schema: tableSchema },
    cli: [{ command: 'data:tables:create', help: 'Create a data table (--columns as a JSON array of column objects)' }],
    handler: async ({ oc, deps }, { account, ...input }) => createTable(oc, deps, account, input),
  }),
  defineOperation({
    ...base,
    name: 'admin_list_data_tables',
    method: 'GET',
    path: `${A}/tables`,
    summary: 'List the data tables of an account',
    query: noQuery,
    output: { kind: 'list', status: 200, description: 'Every table of the account with its columns', schema: listSchema(tableSchema) },
    cli: [{ command: 'data:tables:list' }],
    handler: async ({ oc }, { account }) => listTables(oc, account),
  }),
  defineOperation({
    ...base,
    name: 'admin_get_data_table',
    method: 'GET',
    path: `${A}/tables/{table}`,
    summary: 'Read a data table (by id or slug) with its columns and index states',
    query: noQuery,
    output: { kind: 'resource', status: 200, description: 'The table', schema: tableSchema },
    cli: [{ command: 'data:tables:show' }],
    handler: async ({ oc }, { account, table }) => readTable(oc, account, table),
  }),
  defineOperation({
    ...base,
    name: 'admin_update_data_table',
    method: 'PATCH',
    path: `${A}/tables/{table}`,
    summary: 'Change a data table’s settings (name, slug, grants, masks, status fields, unique sets, quotas…; not its columns)',
    description:
      'Fields sent replace the stored ones (retention and quotas are merged). A new unique set guards every live record: ' +
      'records already sharing values refuse it (422).',
    refusals: { 409: 'The account already has a table with this slug' },
    body: { type: 'object', additionalProperties: false, minProperties: 1, properties: settingsFields } as const,
    output: { kind: 'resource', status: 200, description: 'The table', schema: tableSchema },
    cli: [{ command: 'data:tables:update' }],
    handler: async ({ oc }, { account, table, ...input }) => updateTable(oc, account, table, input),
  }),
  defineOperation({
    ...base,
    name: 'admin_delete_data_table',
    method: 'DELETE',
    path: `${A}/tables/{table}`,
    summary: 'Delete a data table, its records, their history and its indexes',
    refusals: { 409: 'A relation column of another table links to this one' },
    output: { kind: 'outcome', status: 200, description: 'Deleted', schema: deleted },
    cli: [{ command: 'data:tables:delete' }],
    handler: async ({ oc, deps }, { account, table }) => deleteTable(oc, deps, account, table),
  }),
];

// ---- Columns -----------------------------------------------------------------------------------

const columnOps = [
  defineOperation({
    ...base,
    name: 'admin_add_data_column',
    method: 'POST',
    path: `${A}/tables/{table}/columns`,
    summary: 'Add a column to a data table',
    refusals: { 402: 'More columns or indexed columns than the table’s quotas' },
    body: columnBody,
    output: { kind: 'resource', status: 201, description: 'The table with its columns', schema: tableSchema },
    cli: [{ command: 'data:columns:add' }],
    handler: async ({ oc, deps }, { account, table, ...input }) => addColumn(oc, deps, account, table, input),
  }),
  defineOperation({
    ...base,
    name: 'admin_update_data_column',
    method: 'PATCH',
    path: `${A}/tables/{table}/columns/{column}`,
    summary: 'Change a column (by id or key): label, required, unique, indexed, config, ui, position',
    description:
      'config and ui are merged into the stored ones (a null removes a setting). Marking it unique guards every live record ' +
      '(records sharing a value refuse it, 422); indexed true or false asks for the index to be built or dropped in the background.',
    refusals: { 402: 'More indexed columns than the table’s quota' },
    body: {
      type: 'object',
      additionalProperties: false,
      minProperties: 1,
      properties: {
        label: columnFields.label,
        required: columnFields.required,
        unique: columnFields.unique,
        indexed: columnFields.indexed,
        config: columnFields.config,
        ui: columnFields.ui,
        position: { type: 'integer', minimum: 0, description: 'New place (0-based); the other columns are renumbered' },
      },
    } as const,
    output: { kind: 'resource', status: 200, description: 'The table with its columns', schema: tableSchema },
    cli: [{ command: 'data:columns:update' }],
    handler: async ({ oc, deps }, { account, table, column, ...input }) => updateColumn(oc, deps, account, table, column, input),
  }),
  defineOperation({
    ...base,
    name: 'admin_delete_data_column',
    method: 'DELETE',
    path: `${A}/tables/{table}/columns/{column}`,
    summary: 'Drop a column (by id or key), its values and its index',
    refusals: { 409: 'The title column, a status field, a mask, a unique set or a group report still names the column' },
    output: { kind: 'resource', status: 200, description: 'The table with its remaining columns', schema: tableSchema },
    cli: [{ command: 'data:columns:delete' }],
    handler: async ({ oc, deps }, { account, table, column }) => deleteColumn(oc, deps, account, table, column),
  }),
];

// ---- Groups ------------------------------------------------------------------------------------

const groupOps = [
  defineOperation({
    ...base,
    name: 'admin_create_data_group',
    method: 'POST',
    path: `${A}/groups`,
    summary: 'Create a data group: member tables and reports over them',
    refusals: { 409: 'The account already has a group with this slug' },
    body: { type: 'object', required: ['name'], additionalProperties: false, properties: groupFields } as const,
    output: { kind: 'resource', status: 201, description: 'The group', schema: groupSchema },
    cli: [{ command: 'data:groups:create', flags: { tables: 'table_ids' } }],
    handler: async ({ oc }, { account, ...input }) => createGroup(oc, account, input),
  }),
  defineOperation({
    ...base,
    name: 'admin_list_data_groups',
    method: 'GET',
    path: `${A}/groups`,
    summary: 'List the data groups of an account',
    query: noQuery,
    output: { kind: 'list', status: 200, description: 'Every group of the account', schema: listSchema(groupSchema) },
    cli: [{ command: 'data:groups:list' }],
    handler: async ({ oc }, { account }) => listGroups(oc, account),
  }),
  defineOperation({
    ...base,
    name: 'admin_get_data_group',
    method: 'GET',
    path: `${A}/groups/{group}`,
    summary: 'Read a data group (by id or slug)',
    query: noQuery,
    output: { kind: 'resource', status: 200, description: 'The group', schema: groupSchema },
    cli: [{ command: 'data:groups:show' }],
    handler: async ({ oc }, { account, group }) => readGroup(oc, account, group),
  }),
  defineOperation({
    ...base,
    name: 'admin_update_data_group',
    method: 'PATCH',
    path: `${A}/groups/{group}`,
    summary: 'Change a data group: name, slug, members, reports',
    refusals: { 409: 'The account already has a group with this slug' },
    body: { type: 'object', additionalProperties: false, minProperties: 1, properties: groupFields } as const,
    output: { kind: 'resource', status: 200, description: 'The group', schema: groupSchema },
    cli: [{ command: 'data:groups:update', flags: { tables: 'table_ids' } }],
    handler: async ({ oc }, { account, group, ...input }) => updateGroup(oc, account, group, input),
  }),
  defineOperation({
    ...base,
    name: 'admin_delete_data_group',
    method: 'DELETE',
    path: `${A}/groups/{group}`,
    summary: 'Delete a data group (its tables stay)',
    output: { kind: 'outcome', status: 200, description: 'Deleted', schema: deleted },
    cli: [{ command: 'data:groups:delete' }],
    handler: async ({ oc }, { account, group }) => deleteGroup(oc, account, group),
  }),
];

export const dataSettingsOperations: Operation[] = [...tableOps, ...columnOps, ...groupOps];
