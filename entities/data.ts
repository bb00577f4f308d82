import { defineEntity, p } from '@mikro-orm/core';
import { timestamps } from './columns.js';
import { FIELD_TYPES, INDEX_STATUSES } from '../domain/data/vocabulary.js';
import type {
  ColumnConfig,
  ColumnUi,
  FieldMask,
  HistoryActor,
  ReportDefinition,
  StatusField,
  TableAccess,
  TableQuotas,
  TableRetention,
  UniqueSet,
} from '../domain/data/definitions.js';

// Account data tables (Resources > Data table). Definitions are rows an operator writes; records
// are JSONB documents in one physical table, each user column made fast by a partial expression
// index the index workflow builds (notes/commerce-and-data-tables.md §4).

/** What a table and a data group both are: an account's named thing, its slug unique per account. */
const named = () => ({
  accountId: p.integer(),
  name: p.string().length(160),
  slug: p.string().length(64),
  description: p.text().nullable(),
  icon: p.string().length(64).nullable(),
});

export const DataTable = defineEntity({
  name: 'DataTable',
  tableName: 'data_tables',
  properties: {
    id: p.uuid().primary(),
    ...named(),
    /** Key of the naming column; null means the first text column. */
    titleColumn: p.string().length(63).nullable(),
    retention: p.json<TableRetention>(),
    legalHold: p.boolean().default(false),
    access: p.json<TableAccess>(),
    masks: p.json<FieldMask[]>(),
    statusFields: p.json<StatusField[]>(),
    uniqueSets: p.json<UniqueSet[]>(),
    quotas: p.json<TableQuotas>(),
    /** Live records and their serialized bytes, moved by every create and delete under a guard (quotas). */
    recordsCount: p.integer().default(0),
    storageBytes: p.bigint('string').default(0),
    /** The last auto_number issued in this table (one sequence per table, shared by its auto_number columns). */
    autoNumberSeq: p.bigint('string').default(0),
    /** Bumped by the database on every definition change (Migration20261125000000): what a cached definition is checked against. */
    definitionVersion: p.bigint('string').default(1),
    /** The trigram index over the first six searchable columns: its state and the columns it covers. */
    searchIndexStatus: p.enum(INDEX_STATUSES).nullable(),
    searchIndexColumns: p.json<string[]>().nullable(),
    searchIndexError: p.text().nullable(),
    ...timestamps(),
  },
  uniques: [{ properties: ['accountId', 'slug'] }],
  // The definition version moves with every change but the counters' (records_count,
  // storage_bytes, auto_number_seq: what record writes move), whoever writes the row; a bump that
  // was not needed costs a cached definition a reload, never a stale answer (services/data/tables.ts).
  triggers: [
    {
      name: 'data_tables_definition_bump',
      timing: 'before',
      events: ['update'],
      forEach: 'row',
      // As PostgreSQL prints it back, so the schema diff sees no change.
      when: '((old.records_count = new.records_count) AND (old.storage_bytes = new.storage_bytes) AND (old.auto_number_seq = new.auto_number_seq) AND (old.definition_version = new.definition_version))',
      body: 'new.definition_version := old.definition_version + 1; return new;',
    },
  ],
});

export const DataColumn = defineEntity({
  name: 'DataColumn',
  tableName: 'data_columns',
  properties: {
    id: p.uuid().primary(),
    accountId: p.integer(),
    table: p.manyToOne(DataTable).deleteRule('cascade'),
    key: p.string().length(63),
    label: p.string().length(160),
    type: p.enum(FIELD_TYPES),
    storedType: p.string().length(64).nullable(),
    position: p.integer(),
    required: p.boolean().default(false),
    unique: p.boolean().default(false),
    indexed: p.boolean().default(false),
    indexStatus: p.enum(INDEX_STATUSES).nullable(),
    indexError: p.text().nullable(),
    /** The index's name in PostgreSQL while one exists (built, building or left invalid). */
    indexName: p.string().length(63).nullable(),
    /** Build progress while building: phase and blocks done/total from pg_stat_progress_create_index. */
    indexProgress: p
      .json<{ phase: string; blocks_done: number; blocks_total: number; tuples_done?: number; tuples_total?: number }>()
      .nullable(),
    config: p.json<ColumnConfig>(),
    ui: p.json<ColumnUi>(),
    ...timestamps(),
  },
  uniques: [{ properties: ['table', 'key'] }],
  // A column added, changed or dropped is a change of its table's definition (see DataTable). An
  // index build's progress reports (index_progress, several a second while it builds) are not: no
  // definition holds them, and each bump would send every cached definition of the table to a reload.
  triggers: [
    {
      name: 'data_columns_definition_bump',
      timing: 'after',
      events: ['insert', 'delete'],
      forEach: 'row',
      body: 'update data_tables set definition_version = definition_version + 1 where id = coalesce(new.table_id, old.table_id); return null;',
    },
    {
      name: 'data_columns_definition_change',
      timing: 'after',
      events: ['update'],
      forEach: 'row',
      // As PostgreSQL prints it back, so the schema diff sees no change.
      when: "(((to_jsonb(old.*) - 'index_progress'::text) - 'updated_at'::text) IS DISTINCT FROM ((to_jsonb(new.*) - 'index_progress'::text) - 'updated_at'::text))",
      body: 'update data_tables set definition_version = definition_version + 1 where id = new.table_id; return null;',
    },
  ],
});

/**
 * One record. `seq` is an internal, increasing key: the keyset tie-breaker behind the public UUID
 * (ordered like created_at, so default pages walk one B-tree). `data` holds stored (normalized)
 * values only: numbers as JSON numbers, datetimes as fixed-width UTC strings.
 */
export const DataRecord = defineEntity({
  name: 'DataRecord',
  tableName: 'data_records',
  properties: {
    id: p.uuid().primary(),
    seq: p.bigint('string').autoincrement().unique(),
    accountId: p.integer(),
    tableId: p.uuid(),
    data: p.json<Record<string, unknown>>(),
    source: p.string().length(32),
    sizeBytes: p.integer(),
    createdAt: p.datetime(6),
    updatedAt: p.datetime(6),
    deletedAt: p.datetime(6).nullable(),
  },
  indexes: [
    // Default order (newest created first) and $updated_at sorts: keyset over live records (Migration20261124200000).
    {
      name: 'data_records_created_index',
      expression:
        'create index "data_records_created_index" on "data_records" ("table_id", "created_at" desc, "seq" desc) where "deleted_at" is null',
    },
    {
      name: 'data_records_updated_index',
      expression:
        'create index "data_records_updated_index" on "data_records" ("table_id", "updated_at" desc, "seq" desc) where "deleted_at" is null',
    },
  ],
});

/** Values that must stay unique among a table's live records (unique columns and unique sets): the row is the guard. */
export const DataUniqueValue = defineEntity({
  name: 'DataUniqueValue',
  tableName: 'data_unique_values',
  properties: {
    tableId: p.uuid().primary(),
    /** The column key, or `set:<key>` for a unique set. */
    setKey: p.string().length(80).primary(),
    /** The normalized value (JSON text; a set's values as a JSON array). */
    value: p.text().primary(),
    recordId: p.uuid(),
  },
  indexes: [{ properties: ['recordId'] }],
});

/** History entry (Resources > Data table: record, action, changed fields, before/after, actor, source, reason, timestamp). */
export const DataRecordHistory = defineEntity({
  name: 'DataRecordHistory',
  tableName: 'data_record_history',
  properties: {
    id: p.bigint('string').primary().autoincrement(),
    accountId: p.integer(),
    tableId: p.uuid(),
    recordId: p.uuid(),
    action: p.string().length(32),
    /** {column: {before, after}} for the fields this write changed. */
    changes: p.json<Record<string, { before: unknown; after: unknown }>>(),
    actor: p.json<HistoryActor>(),
    source: p.string().length(32),
    reason: p.text().nullable(),
    createdAt: p.datetime(6),
  },
  indexes: [{ properties: ['recordId', 'id'] }, { properties: ['tableId', 'createdAt'] }],
});

/** A data group (Data groups organise tables; unrelated to contact groups and chat groups). */
export const DataGroup = defineEntity({
  name: 'DataGroup',
  tableName: 'data_groups',
  properties: {
    id: p.uuid().primary(),
    ...named(),
    /** Member tables in display order. */
    tableIds: p.json<string[]>(),
    reports: p.json<ReportDefinition[]>(),
    ...timestamps(),
  },
  uniques: [{ properties: ['accountId', 'slug'] }],
});
