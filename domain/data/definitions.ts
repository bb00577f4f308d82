import type { FieldType, IndexStatus } from './vocabulary.js';

// What an operator defines for a table (stored on data_tables / data_columns as JSON), in the
// contract's words. Everything the REST door shows (schema, states, access, limits) is read from
// these; the services never take a key or permission from a request without finding it here.

export type SelectOption = {
  key: string;
  label: string;
  color?: string;
};

/** Column `config` (Column object: options, table_id, default, region, currency, ui hints…). */
export type ColumnConfig = {
  options?: SelectOption[];
  /** relation: the related table's UUID (same account). */
  table_id?: string;
  default?: unknown;
  /** phone: ISO 3166 region used for numbers written without a country code (default TZ). */
  region?: string;
  /** currency: ISO 4217 code (default TZS) and decimals kept (default 0). */
  currency?: string;
  precision?: number;
  /** number: decimals kept (rounded half away from zero); min and max inclusive. */
  min?: number;
  max?: number;
  /** text/long_text: longest value in characters. */
  max_length?: number;
  /** file: a list of descriptors rather than one. */
  multiple?: boolean;
};

/** Column `ui` hints (cell, input, filter, width, hidden_in_grid, hidden_in_form, help_text, placeholder). */
export type ColumnUi = {
  cell?: string;
  input?: string;
  filter?: string | null;
  width?: number;
  hidden_in_grid?: boolean;
  hidden_in_form?: boolean;
  help_text?: string | null;
  placeholder?: string | null;
};

/** One column as stored (data_columns row, camel-cased by the entity). */
export type ColumnDef = {
  id: string;
  key: string;
  label: string;
  type: FieldType;
  /** Only for type unknown: what the source system called it. */
  stored_type: string | null;
  position: number;
  required: boolean;
  unique: boolean;
  indexed: boolean;
  index_status: IndexStatus | null;
  index_error: string | null;
  config: ColumnConfig;
  ui: ColumnUi;
};

/** A move of a status field: from one state (or '*', any) to another, needing a permission when set. */
export type StatusMove = {
  from: string;
  to: string;
  permission?: string | null;
};

/**
 * A state machine on a select column (Data record status fields): records start in one of
 * `initial` (when required), and a PATCH may only make a listed move. `strict: false` lets moves
 * not listed through (only listed moves' permissions apply).
 */
export type StatusField = {
  column: string;
  label: string;
  required: boolean;
  strict: boolean;
  initial: string[];
  moves: StatusMove[];
};

/** Columns whose values together are unique among live records. */
export type UniqueSet = {
  key: string;
  columns: string[];
};

/**
 * Who sees and who writes a table, beyond data.view / data.records.edit: a caller passes when it
 * holds any listed permission (`data.grants.<name>` style permissions an operator gives users) or
 * is a listed user id. An empty list means everyone with the family permission.
 */
export type TableAccess = {
  view: { permissions: string[]; users: number[] };
  write: { permissions: string[]; users: number[] };
};

/** A field mask: callers without `unless_permission` see the value replaced (`full`), or partly shown. */
export type FieldMask = {
  column: string;
  unless_permission: string;
  style: 'full' | 'last4' | 'email';
};

export type TableQuotas = {
  columns: number;
  indexes: number;
  records: number;
  storage_bytes: number;
};

/** How long history is kept (days; null keeps it) and whether records may be purged at all. */
export type TableRetention = {
  history_days: number | null;
  deleted_records_days: number | null;
};

/** A saved report of a data group: a named measure over one member table. */
export type ReportDefinition = {
  key: string;
  name: string;
  table_id: string;
  /** count, or sum/avg of a numeric column */
  measure: 'count' | 'sum' | 'avg';
  column?: string | null;
  /** a datetime/date column or $created_at to bucket by */
  date_column?: string;
  filter?: unknown;
};

/** Who wrote a record, as its history entry keeps it: the kind of caller and its ids, never a secret. */
export type HistoryActor = { kind: string; [id: string]: unknown };
