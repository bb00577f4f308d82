import type { RequestContext } from '../platform/context.js';
import { hasPermission } from '../../domain/account/index.js';
import {
  DATA_LIMITS,
  FIELD_TYPES,
  SYSTEM_COLUMNS,
  TYPE_INFO,
  canWriteTable,
  masksFor,
  mayMove,
  searchColumns,
  type ColumnDef,
  type ColumnUi,
  type DataCaller,
  type FieldType,
} from '../../domain/data/index.js';
import { loadTable, namedProperties, visibleTables, type LoadedTable, type TableRow } from './tables.js';
import { columnCounts } from './store/definitions.js';
import { iso } from '../platform/time.js';

// The read side of a table's definition (GET /data/tables, …/schema, …/states): what a client
// needs to draw a grid and a form and to build filters, all derived from the operator's stored
// definition and the caller's grants. Nothing here reads records.

/** The write permission of the family (Endpoints > Data tables): the schema's can/actions say whether this caller holds it. */
const RECORDS_EDIT = 'data.records.edit';

const n = (v: string | number | null | undefined) => (v === null || v === undefined ? 0 : Number(v));

/** Whether this caller may write records of the table: the family permission plus the table's write grant. */
export function callerMayWrite(t: Pick<LoadedTable, 'table' | 'caller'>): boolean {
  const c = t.caller;
  return (c.unrestricted || hasPermission(c.permissions, RECORDS_EDIT)) && canWriteTable(t.table.access, c);
}

// ---------------------------------------------------------------------------------------------
// GET /data/tables

export const tableSummarySchema = {
  type: 'object',
  required: ['id', 'name', 'slug', 'records_count', 'columns_count', 'updated_at'],
  properties: {
    ...namedProperties,
    records_count: { type: 'integer', description: 'live records' },
    columns_count: { type: 'integer' },
    updated_at: { type: 'string', format: 'date-time' },
  },
} as const;

export async function listTables(rc: RequestContext) {
  const tables = await visibleTables(rc);
  const counts = tables.length
    ? await columnCounts(
        rc.em,
        tables.map((t) => t.id),
      )
    : [];
  const columns = new Map(counts.map((c) => [c.table_id, Number(c.n)]));
  return {
    tables: tables.map((t) => ({
      id: t.id,
      name: t.name,
      slug: t.slug,
      description: t.description,
      icon: t.icon,
      records_count: t.records_count,
      columns_count: columns.get(t.id) ?? 0,
      updated_at: iso(t.updated_at),
    })),
  };
}

// ---------------------------------------------------------------------------------------------
// GET /data/tables/{table}/schema

/** The Table object of the contract. */
export const tableObjectSchema = {
  type: 'object',
  required: ['id', 'name', 'slug', 'records_count', 'storage_bytes', 'title_column', 'created_at', 'updated_at', 'retention', 'legal_hold'],
  properties: {
    ...namedProperties,
    records_count: { type: 'integer' },
    storage_bytes: { type: 'integer' },
    title_column: { type: ['string', 'null'], description: 'key of the naming column; null means the first text column' },
    created_at: { type: 'string', format: 'date-time' },
    updated_at: { type: 'string', format: 'date-time' },
    retention: {
      type: 'object',
      properties: { history_days: { type: ['integer', 'null'] }, deleted_records_days: { type: ['integer', 'null'] } },
    },
    legal_hold: { type: 'boolean' },
  },
} as const;

const stringList = { type: 'array', items: { type: 'string' } } as const;
const uiSchema = {
  type: 'object',
  properties: {
    cell: { type: 'string' },
    input: { type: 'string' },
    filter: { type: ['string', 'null'] },
    width: { type: 'integer' },
    hidden_in_grid: { type: 'boolean' },
    hidden_in_form: { type: 'boolean' },
    help_text: { type: ['string', 'null'] },
    placeholder: { type: ['string', 'null'] },
    is_title_field: { type: 'boolean' },
    warning: { type: 'string', description: 'only when the type is unknown' },
  },
} as const;

/** The Column object of the contract. */
export const columnObjectSchema = {
  type: 'object',
  required: ['id', 'key', 'label', 'type', 'position', 'required', 'unique', 'indexed', 'rules', 'operators', 'ui'],
  properties: {
    id: { type: 'string', format: 'uuid' },
    key: { type: 'string' },
    label: { type: 'string' },
    type: { enum: [...FIELD_TYPES] },
    stored_type: { type: 'string', description: 'only when type is unknown' },
    position: { type: 'integer' },
    required: { type: 'boolean' },
    unique: { type: 'boolean' },
    indexed: { type: 'boolean' },
    index_status: { enum: ['pending', 'building', 'ready', 'failed', 'dropping', null] },
    index_error: { type: ['string', 'null'] },
    config: { type: 'object' },
    rules: { ...stringList, description: 'validation rules in framework style: required, unique, max:<n>, in:<keys>, phone:<region>…' },
    operators: stringList,
    ui: uiSchema,
  },
} as const;

const quotaUse = {
  type: 'object',
  required: ['limit', 'used'],
  properties: { limit: { type: 'integer' }, used: { type: 'integer' } },
} as const;
const flags = <const K extends string>(keys: readonly K[]) =>
  ({
    type: 'object',
    required: keys,
    properties: Object.fromEntries(keys.map((k) => [k, { type: 'boolean' }])) as { [P in K]: { type: 'boolean' } },
  }) as const;

export const schemaAnswerSchema = {
  type: 'object',
  required: ['table', 'columns', 'types', 'system_columns', 'access', 'unique_sets', 'limits', 'sort_index_threshold', 'actions', 'can'],
  properties: {
    table: tableObjectSchema,
    columns: { type: 'array', items: columnObjectSchema },
    types: {
      type: 'object',
      description: 'Field type objects keyed by type name',
      additionalProperties: {
        type: 'object',
        properties: {
          label: { type: 'string' },
          operators: stringList,
          ui: { type: 'object', properties: { cell: { type: 'string' }, input: { type: 'string' }, filter: { type: ['string', 'null'] } } },
          numeric: { type: 'boolean' },
          temporal: { type: 'boolean' },
        },
      },
    },
    system_columns: {
      type: 'array',
      items: {
        type: 'object',
        properties: { key: { type: 'string' }, label: { type: 'string' }, type: { type: 'string' }, operators: stringList },
      },
    },
    access: {
      type: 'object',
      required: ['can_view', 'can_write', 'masked_columns'],
      properties: {
        can_view: { type: 'boolean' },
        can_write: { type: 'boolean' },
        masked_columns: { ...stringList, description: 'keys whose values this caller sees masked' },
      },
    },
    unique_sets: {
      type: 'array',
      items: { type: 'object', properties: { key: { type: 'string' }, columns: stringList } },
    },
    limits: {
      type: 'object',
      properties: {
        record_bytes: { type: 'integer' },
        page_default: { type: 'integer' },
        page_max: { type: 'integer' },
        filter_leaves: { type: 'integer' },
        filter_depth: { type: 'integer' },
        search_columns: { ...stringList, description: 'the columns q searches' },
        history_page: { type: 'integer' },
        quotas: {
          type: 'object',
          properties: { columns: quotaUse, indexes: quotaUse, records: quotaUse, storage_bytes: quotaUse },
        },
      },
    },
    sort_index_threshold: {
      type: 'integer',
      description: 'a table holding this many live records or more sorts by a user column only when its index is ready',
    },
    actions: flags(['list', 'read', 'create', 'update', 'delete', 'history']),
    can: flags(['view', 'create', 'update', 'delete']),
  },
} as const;

/** The table as the contract's Table object. */
export function tableObject(t: TableRow) {
  return {
    id: t.id,
    name: t.name,
    slug: t.slug,
    description: t.description,
    icon: t.icon,
    records_count: t.records_count,
    storage_bytes: n(t.storage_bytes),
    title_column: t.title_column,
    created_at: iso(t.created_at),
    updated_at: iso(t.updated_at),
    retention: t.retention,
    legal_hold: t.legal_hold,
  };
}

/** The column that names a record: the table's title_column, else the first text column. */
export function titleColumnOf(t: Pick<LoadedTable, 'table' | 'columns'>): string | null {
  if (t.table.title_column && t.columns.some((c) => c.key === t.table.title_column)) return t.table.title_column;
  return t.columns.find((c) => c.type === 'text')?.key ?? null;
}

/** Grid widths a type starts with (pixels), before the operator's ui hints. */
const WIDTHS: Partial<Record<FieldType, number>> = {
  long_text: 320,
  number: 120,
  currency: 140,
  boolean: 90,
  date: 130,
  datetime: 190,
  phone: 160,
  email: 220,
  auto_number: 100,
};

/** A type's ui defaults (Field type object and Column ui). */
function typeUi(type: FieldType) {
  const info = TYPE_INFO[type];
  return { cell: info.cell, input: info.input, filter: info.filter };
}

/** Column ui: the type's defaults, the operator's stored hints over them, and what only we know (title field, unknown type). */
export function columnUi(c: ColumnDef, titleKey: string | null) {
  const stored: ColumnUi = c.ui ?? {};
  const ui: Record<string, unknown> = {
    ...typeUi(c.type),
    width: WIDTHS[c.type] ?? 200,
    hidden_in_grid: false,
    // auto_number and unknown values are never typed in.
    hidden_in_form: TYPE_INFO[c.type].input === 'none',
    help_text: null,
    placeholder: null,
  };
  for (const [k, v] of Object.entries(stored)) if (v !== undefined) ui[k] = v;
  ui.is_title_field = c.key === titleKey;
  if (c.type === 'unknown')
    ui.warning = `This column holds values of a type this service does not know (${c.stored_type ?? 'unnamed'}); they are shown as stored and cannot be edited.`;
  return ui;
}

/** The config a column works with: the stored config plus the defaults the field value rules apply. */
export function effectiveConfig(c: ColumnDef): Record<string, unknown> {
  const config: Record<string, unknown> = { ...(c.config ?? {}) };
  if (c.type === 'currency') {
    config.currency ??= 'TZS';
    config.precision ??= 0;
  }
  if (c.type === 'phone') config.region ??= 'TZ';
  if (c.type === 'text') config.max_length ??= DATA_LIMITS.textMax;
  if (c.type === 'long_text') config.max_length ??= DATA_LIMITS.longTextMax;
  return config;
}

/**
 * Column rules in framework style (the contract's example: required, phone:<region>, max:<n>,
 * in:<list>), derived from the definition the write path enforces: a client may validate a form
 * with them before sending it.
 */
export function columnRules(c: ColumnDef): string[] {
  const config = effectiveConfig(c);
  const rules: string[] = [];
  if (c.type === 'auto_number') return ['prohibited'];
  rules.push(c.required ? 'required' : 'nullable');
  if (c.unique) rules.push('unique');
  const bounds = () => {
    if (typeof config.min === 'number') rules.push(`min:${config.min}`);
    if (typeof config.max === 'number') rules.push(`max:${config.max}`);
  };
  const keys = () => (config.options as { key: string }[] | undefined)?.map((o) => o.key).join(',') ?? '';
  switch (c.type) {
    case 'text':
    case 'long_text':
      rules.push('string', `max:${String(config.max_length)}`);
      break;
    case 'number':
      rules.push('numeric');
      bounds();
      if (typeof config.precision === 'number') rules.push(`decimal:0,${config.precision}`);
      break;
    case 'currency':
      rules.push('numeric');
      bounds();
      rules.push(`decimal:0,${String(config.precision)}`, `currency:${String(config.currency)}`);
      break;
    case 'boolean':
      rules.push('boolean');
      break;
    case 'date':
      rules.push('date', 'date_format:Y-m-d');
      break;
    case 'datetime':
      // A datetime must say its timezone (field value rules).
      rules.push('date', 'date_format:Y-m-d\\TH:i:sP');
      break;
    case 'phone':
      rules.push(`phone:${String(config.region)}`);
      break;
    case 'email':
      rules.push('email');
      break;
    case 'select':
      rules.push(`in:${keys()}`);
      break;
    case 'multi_select':
      rules.push('array', `in:${keys()}`);
      break;
    case 'relation':
      rules.push('uuid');
      if (typeof config.table_id === 'string') rules.push(`exists:${config.table_id}`);
      break;
    case 'file':
      rules.push(config.multiple ? 'array' : 'file');
      break;
    case 'unknown':
      rules.push('prohibited');
      break;
  }
  return rules;
}

/** One column as the contract's Column object. */
export function columnObject(c: ColumnDef, titleKey: string | null) {
  return {
    id: c.id,
    key: c.key,
    label: c.label,
    type: c.type,
    ...(c.type === 'unknown' ? { stored_type: c.stored_type ?? '' } : {}),
    position: c.position,
    required: c.required,
    unique: c.unique,
    indexed: c.indexed,
    index_status: c.index_status,
    index_error: c.index_error,
    config: effectiveConfig(c),
    rules: columnRules(c),
    operators: [...TYPE_INFO[c.type].operators],
    ui: columnUi(c, titleKey),
  };
}

/** The types map (Field type objects keyed by type name). */
export const typesMap = () =>
  Object.fromEntries(
    FIELD_TYPES.map((type) => {
      const info = TYPE_INFO[type];
      return [
        type,
        { label: info.label, operators: [...info.operators], ui: typeUi(type), numeric: info.numeric, temporal: info.temporal },
      ];
    }),
  );

function quotas(t: LoadedTable) {
  const q = { ...DATA_LIMITS.quotas, ...(t.table.quotas ?? {}) };
  const indexes = t.columns.filter((c) => c.indexed).length;
  return {
    columns: { limit: q.columns, used: t.columns.length },
    indexes: { limit: q.indexes, used: indexes },
    records: { limit: q.records, used: t.table.records_count },
    storage_bytes: { limit: q.storage_bytes, used: n(t.table.storage_bytes) },
  };
}

/** The schema of a table for this caller: definition, what it may do, and the limits it works within. */
export function schemaOf(t: LoadedTable) {
  const titleKey = titleColumnOf(t);
  const write = callerMayWrite(t);
  const masked = [...masksFor(t.table.masks ?? [], t.caller).keys()];
  return {
    table: tableObject(t.table),
    columns: t.columns.map((c) => columnObject(c, titleKey)),
    types: typesMap(),
    system_columns: SYSTEM_COLUMNS.map((s) => ({ key: s.key, label: s.label, type: s.type, operators: [...s.operators] })),
    access: { can_view: true, can_write: write, masked_columns: masked },
    unique_sets: (t.table.unique_sets ?? []).map((s) => ({ key: s.key, columns: [...s.columns] })),
    limits: {
      record_bytes: DATA_LIMITS.recordBytes,
      page_default: DATA_LIMITS.pageDefault,
      page_max: DATA_LIMITS.pageMax,
      filter_leaves: DATA_LIMITS.filterLeaves,
      filter_depth: DATA_LIMITS.filterDepth,
      search_columns: searchColumns(t.columns),
      history_page: DATA_LIMITS.historyPage,
      quotas: quotas(t),
    },
    sort_index_threshold: DATA_LIMITS.sortIndexThreshold,
    actions: { list: true, read: true, create: write, update: write, delete: write, history: true },
    can: { view: true, create: write, update: write, delete: write },
  };
}

export async function tableSchema(rc: RequestContext, ref: string) {
  return schemaOf(await loadTable(rc, ref));
}

// ---------------------------------------------------------------------------------------------
// GET /data/tables/{table}/states

export const statesAnswerSchema = {
  type: 'object',
  required: ['table_id', 'fields'],
  properties: {
    table_id: { type: 'string', format: 'uuid' },
    fields: {
      type: 'array',
      items: {
        type: 'object',
        required: ['key', 'label', 'required', 'strict', 'initial', 'states', 'moves'],
        properties: {
          key: { type: 'string', description: 'the select column holding the state' },
          label: { type: 'string' },
          required: { type: 'boolean', description: 'a record must start in one of the initial states' },
          strict: { type: 'boolean', description: 'only the listed moves are allowed' },
          initial: stringList,
          states: { type: 'array', items: { type: 'object', properties: { key: { type: 'string' }, label: { type: 'string' } } } },
          moves: {
            type: 'array',
            items: {
              type: 'object',
              required: ['from', 'to', 'permission', 'allowed'],
              properties: {
                from: { type: 'string', description: "a state key, or '*' for any" },
                to: { type: 'string' },
                permission: { type: ['string', 'null'] },
                allowed: {
                  type: 'boolean',
                  description: 'whether this caller may make the move (it may write the table and holds the permission)',
                },
              },
            },
          },
        },
      },
    },
  },
} as const;

/** Every status field of the table, each move flagged with whether this caller may make it. */
export function statesOf(t: LoadedTable) {
  const write = callerMayWrite(t);
  const caller: DataCaller = t.caller;
  return {
    table_id: t.table.id,
    fields: (t.table.status_fields ?? []).map((f) => {
      const column = t.columns.find((c) => c.key === f.column);
      return {
        key: f.column,
        label: f.label || column?.label || f.column,
        required: f.required,
        strict: f.strict,
        initial: [...f.initial],
        states: (column?.config.options ?? []).map((o) => ({ key: o.key, label: o.label })),
        moves: f.moves.map((m) => ({
          from: m.from,
          to: m.to,
          permission: m.permission ?? null,
          allowed: write && mayMove(m, caller),
        })),
      };
    }),
  };
}

export async function tableStates(rc: RequestContext, ref: string) {
  return statesOf(await loadTable(rc, ref));
}
