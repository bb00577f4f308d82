// The data-table family's words (Resources > Data table; Records list query; Limits): column
// types, the operators each type advertises, system columns, index states and the limits.

export const FIELD_TYPES = [
  'text',
  'long_text',
  'number',
  'currency',
  'boolean',
  'date',
  'datetime',
  'phone',
  'email',
  'select',
  'multi_select',
  'relation',
  'file',
  'auto_number',
  'unknown',
] as const;
export type FieldType = (typeof FIELD_TYPES)[number];

/** The contract's ten filter operators; any other name is a malformed filter (422). */
export const OPERATORS = [
  'equals',
  'not_equals',
  'contains',
  'starts_with',
  'greater_than',
  'less_than',
  'between',
  'is_empty',
  'is_not_empty',
  'in',
] as const;
export type Operator = (typeof OPERATORS)[number];

export const INDEX_STATUSES = ['pending', 'building', 'ready', 'failed', 'dropping'] as const;
export type IndexStatus = (typeof INDEX_STATUSES)[number];

const EMPTY = ['is_empty', 'is_not_empty'] as const;
const TEXTUAL = ['equals', 'not_equals', 'contains', 'starts_with', 'in', ...EMPTY] as const;
const ORDERED = ['equals', 'not_equals', 'greater_than', 'less_than', 'between', 'in', ...EMPTY] as const;
const TEMPORAL = ['equals', 'not_equals', 'greater_than', 'less_than', 'between', ...EMPTY] as const;

/**
 * Each field type as the schema's `types` map shows it (Field type object: label, operators, ui,
 * numeric, temporal). A known operator a type does not advertise answers 501 not_supported.
 */
export const TYPE_INFO: Record<
  FieldType,
  {
    label: string;
    operators: readonly Operator[];
    numeric: boolean;
    temporal: boolean;
    searchable: boolean;
    sortable: boolean;
    cell: string;
    input: string;
    filter: string | null;
  }
> = {
  text: {
    label: 'Text',
    operators: TEXTUAL,
    numeric: false,
    temporal: false,
    searchable: true,
    sortable: true,
    cell: 'text',
    input: 'text',
    filter: 'text',
  },
  long_text: {
    label: 'Long text',
    operators: TEXTUAL,
    numeric: false,
    temporal: false,
    searchable: true,
    sortable: true,
    cell: 'long_text',
    input: 'textarea',
    filter: 'text',
  },
  number: {
    label: 'Number',
    operators: ORDERED,
    numeric: true,
    temporal: false,
    searchable: false,
    sortable: true,
    cell: 'number',
    input: 'number',
    filter: 'number',
  },
  currency: {
    label: 'Currency',
    operators: ORDERED,
    numeric: true,
    temporal: false,
    searchable: false,
    sortable: true,
    cell: 'currency',
    input: 'number',
    filter: 'number',
  },
  boolean: {
    label: 'Checkbox',
    operators: ['equals', ...EMPTY],
    numeric: false,
    temporal: false,
    searchable: false,
    sortable: true,
    cell: 'checkbox',
    input: 'checkbox',
    filter: 'boolean',
  },
  date: {
    label: 'Date',
    operators: TEMPORAL,
    numeric: false,
    temporal: true,
    searchable: false,
    sortable: true,
    cell: 'date',
    input: 'date',
    filter: 'date',
  },
  datetime: {
    label: 'Date and time',
    operators: TEMPORAL,
    numeric: false,
    temporal: true,
    searchable: false,
    sortable: true,
    cell: 'datetime',
    input: 'datetime',
    filter: 'datetime',
  },
  phone: {
    label: 'Phone',
    operators: TEXTUAL,
    numeric: false,
    temporal: false,
    searchable: true,
    sortable: true,
    cell: 'phone',
    input: 'tel',
    filter: 'text',
  },
  email: {
    label: 'Email',
    operators: TEXTUAL,
    numeric: false,
    temporal: false,
    searchable: true,
    sortable: true,
    cell: 'email',
    input: 'email',
    filter: 'text',
  },
  select: {
    label: 'Single select',
    operators: ['equals', 'not_equals', 'in', ...EMPTY],
    numeric: false,
    temporal: false,
    searchable: false,
    sortable: true,
    cell: 'badge',
    input: 'select',
    filter: 'select',
  },
  multi_select: {
    label: 'Multiple select',
    operators: ['contains', 'in', ...EMPTY],
    numeric: false,
    temporal: false,
    searchable: false,
    sortable: false,
    cell: 'badges',
    input: 'multi_select',
    filter: 'select',
  },
  relation: {
    label: 'Link to record',
    operators: ['equals', 'in', ...EMPTY],
    numeric: false,
    temporal: false,
    searchable: false,
    sortable: false,
    cell: 'link',
    input: 'record_picker',
    filter: 'record',
  },
  file: {
    label: 'File',
    operators: [...EMPTY],
    numeric: false,
    temporal: false,
    searchable: false,
    sortable: false,
    cell: 'file',
    input: 'file',
    filter: null,
  },
  auto_number: {
    label: 'Auto number',
    operators: ['equals', 'greater_than', 'less_than', 'between', 'in'],
    numeric: true,
    temporal: false,
    searchable: false,
    sortable: true,
    cell: 'number',
    input: 'none',
    filter: 'number',
  },
  unknown: {
    label: 'Unknown',
    operators: [...EMPTY],
    numeric: false,
    temporal: false,
    searchable: false,
    sortable: false,
    cell: 'text',
    input: 'none',
    filter: null,
  },
};

/** The system columns (System columns): filterable and, for the two timestamps, sortable without an index. */
export const SYSTEM_COLUMNS = [
  { key: '$id', label: 'Record id', type: 'relation', operators: ['equals', 'in'] },
  { key: '$created_at', label: 'Created', type: 'datetime', operators: ['equals', 'not_equals', 'greater_than', 'less_than', 'between'] },
  {
    key: '$updated_at',
    label: 'Last modified',
    type: 'datetime',
    operators: ['equals', 'not_equals', 'greater_than', 'less_than', 'between'],
  },
  { key: '$source', label: 'Source', type: 'text', operators: ['equals', 'in', 'starts_with'] },
] as const satisfies readonly { key: string; label: string; type: FieldType; operators: readonly Operator[] }[];
export type SystemColumnKey = (typeof SYSTEM_COLUMNS)[number]['key'];

export const DATA_LIMITS = {
  recordBytes: 8192,
  pageDefault: 50,
  pageMax: 200,
  filterLeaves: 40,
  filterDepth: 6,
  searchColumns: 6,
  historyPage: 50,
  /** `with_count`: counted exactly up to this many; above it the planner's estimate, flagged count_is_exact: false. */
  countCap: 10_000,
  /** A user column sorts without a ready index only while the table holds fewer live records than this. */
  sortIndexThreshold: 10_000,
  /** Default per-table quotas, each overridable by the operator. */
  quotas: { columns: 100, indexes: 16, records: 1_000_000, storage_bytes: 2 * 1024 * 1024 * 1024 },
  textMax: 1000,
  longTextMax: 100_000,
  selectOptions: 200,
  /** Column keys: lowercase, start with a letter; they are written into index expressions, so nothing else is allowed. */
  keyPattern: '^[a-z][a-z0-9_]{0,62}$',
  slugPattern: '^[a-z0-9][a-z0-9-]{0,62}$',
} as const;

/** A permission an operator names for one table's grants, masks or moves, held by users like any other. */
export const DATA_GRANT_PATTERN = '^data\\.grants\\.[a-z0-9_-]{1,60}$';

/** Data envelope codes (Errors > Data endpoints). */
export const DATA_ERROR_CODES = [
  'validation_error',
  'conflict',
  'not_found',
  'permission_denied',
  'quota_exceeded',
  'not_supported',
  'rate_limited',
  'provider_failure',
  'temporary_failure',
] as const;

export const HISTORY_ACTIONS = ['create', 'update', 'delete', 'status_transition'] as const;
export type HistoryAction = (typeof HISTORY_ACTIONS)[number];

export const NAMED_RANGES = [
  'today',
  'yesterday',
  'last_7_days',
  'last_30_days',
  'last_90_days',
  'this_month',
  'last_month',
  'this_year',
  'all_time',
] as const;
