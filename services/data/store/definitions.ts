import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { sql } from 'kysely';
import { exec, many, one } from '../../../entities/db.js';
import { tablesOf, type Row } from '../../../entities/database.js';
import type { ColumnDef } from '../../../domain/data/index.js';
import type { ColumnDraft } from '../../../domain/data/column-rules.js';

// Tables and columns as definitions (data_tables, data_columns): what every data request loads
// and what the operator API writes. The counters of data_tables (records_count, storage_bytes,
// auto_number_seq) are moved by the record writes (store/records.ts).

/** Every field of a table's row the services read (the definition and its counters). */
const TABLE_FIELDS = [
  'id',
  'account_id',
  'name',
  'slug',
  'description',
  'icon',
  'title_column',
  'retention',
  'legal_hold',
  'access',
  'masks',
  'status_fields',
  'unique_sets',
  'quotas',
  'records_count',
  'storage_bytes',
  'auto_number_seq',
  'search_index_status',
  'search_index_columns',
  'search_index_error',
  'definition_version',
  'created_at',
  'updated_at',
] as const;
export type DataTableRow = Pick<Row<'data', 'data_tables'>, (typeof TABLE_FIELDS)[number]>;

const COLUMN_FIELDS = [
  'id',
  'key',
  'label',
  'type',
  'stored_type',
  'position',
  'required',
  'unique',
  'indexed',
  'index_status',
  'index_error',
  'config',
  'ui',
] as const;
const COLUMN_TEXT = `id, key, label, type, stored_type, position, required, "unique", indexed, index_status, index_error, config, ui`;

/** A column as the operator API reads it: the definition with the index name the index workflow keeps. */
export type DefinitionColumn = ColumnDef & Pick<Row<'data', 'data_columns'>, 'index_name'>;

/** A table's row with its columns (position order) aggregated, as every data request loads it. */
export type TableDefinition = DataTableRow & { columns_json: ColumnDef[] };

// ---- Reads ---------------------------------------------------------------------------------------

/**
 * The account's table by id (or slug) with its columns, in one statement: every data request
 * starts here, so a second round trip would be paid by each of them.
 */
export function tableDefinition(em: EntityManager, accountId: number, ref: string, byId: boolean) {
  return one<TableDefinition>(
    em,
    `select ${TABLE_FIELDS.map((f) => `t.${f}`).join(', ')},
            (select coalesce(json_agg(c order by c.position, c.key), '[]'::json)
               from (select ${COLUMN_TEXT} from data_columns where table_id = t.id) c) as columns_json
       from data_tables t where ${byId ? 't.id = ?::uuid' : 't.slug = ?'} and t.account_id = ?`,
    [ref, accountId],
  );
}

/** The table's definition_version as text (null when the table is gone). */
export async function definitionVersion(em: EntityManager, accountId: number, tableId: string): Promise<string | null> {
  const row = await one<{ v: string }>(em, 'select definition_version::text as v from data_tables where id = ?::uuid and account_id = ?', [
    tableId,
    accountId,
  ]);
  return row?.v ?? null;
}

/** Every table of the account, by name. */
export function accountTables(em: EntityManager, accountId: number): Promise<DataTableRow[]> {
  return tablesOf(em, 'data')
    .selectFrom('data_tables')
    .select(TABLE_FIELDS)
    .where('account_id', '=', accountId)
    .orderBy('name')
    .orderBy('id')
    .execute();
}

/** Ids and slugs of the account's tables (what a request may name a table by). */
export function accountTableRefs(em: EntityManager, accountId: number) {
  return tablesOf(em, 'data').selectFrom('data_tables').select(['id', 'slug']).where('account_id', '=', accountId).execute();
}

/** A table of the account by UUID or slug; locked when `forUpdate` (column changes of one table queue up). */
export function tableForDefinition(em: EntityManager, accountId: number, ref: string, byId: boolean, forUpdate: boolean) {
  const lock = forUpdate ? ' for update' : '';
  return one<DataTableRow>(
    em,
    `select ${TABLE_FIELDS.join(', ')} from data_tables where ${byId ? 'id = ?::uuid' : 'slug = ?'} and account_id = ?${lock}`,
    [ref, accountId],
  );
}

/** A table's columns in position order. */
export function tableColumns(em: EntityManager, tableId: string): Promise<ColumnDef[]> {
  return tablesOf(em, 'data')
    .selectFrom('data_columns')
    .select(COLUMN_FIELDS)
    .where('table_id', '=', tableId)
    .orderBy('position')
    .orderBy('key')
    .execute();
}

/** A table's columns with their index names, in position order. */
export function definitionColumns(em: EntityManager, tableId: string): Promise<DefinitionColumn[]> {
  return tablesOf(em, 'data')
    .selectFrom('data_columns')
    .select([...COLUMN_FIELDS, 'index_name'])
    .where('table_id', '=', tableId)
    .orderBy('position')
    .orderBy('key')
    .execute();
}

/** The columns of several tables, each with its table id, in position order. */
export function columnsOfTables(em: EntityManager, tableIds: string[]): Promise<(ColumnDef & { table_id: string })[]> {
  return many<ColumnDef & { table_id: string }>(
    em,
    `select table_id, ${COLUMN_TEXT} from data_columns where table_id = any(?::uuid[]) order by position, key`,
    [tableIds],
  );
}

/** How many columns each of the tables has. */
export function columnCounts(em: EntityManager, tableIds: string[]) {
  return many<{ table_id: string; n: string }>(
    em,
    'select table_id, count(*) as n from data_columns where table_id = any(?::uuid[]) group by table_id',
    [tableIds],
  );
}

/** Key and type of every column of the tables (a group's reports are checked against them). */
export function columnTypes(em: EntityManager, tableIds: string[]) {
  return many<Pick<Row<'data', 'data_columns'>, 'table_id' | 'key' | 'type'>>(
    em,
    'select table_id, key, type from data_columns where table_id = any(?::uuid[])',
    [tableIds],
  );
}

/** Key, label and type of every column of the tables, in position order. */
export function columnLabels(em: EntityManager, tableIds: string[]) {
  return many<Pick<Row<'data', 'data_columns'>, 'table_id' | 'key' | 'label' | 'type'>>(
    em,
    'select table_id, key, label, type from data_columns where table_id = any(?::uuid[]) order by position, key',
    [tableIds],
  );
}

/** Relation columns of other tables pointing at this one (by their table's slug). */
export function relationLinksTo(em: EntityManager, accountId: number, tableId: string) {
  return many<Pick<Row<'data', 'data_columns'>, 'key'> & Pick<Row<'data', 'data_tables'>, 'slug'>>(
    em,
    `select c.key, t.slug from data_columns c join data_tables t on t.id = c.table_id
      where c.account_id = ? and c.type = 'relation' and c.config->>'table_id' = ? and c.table_id <> ?::uuid`,
    [accountId, tableId, tableId],
  );
}

/** Slugs of the account's tables or groups starting with `base`. */
export async function slugsLike(em: EntityManager, of: 'tables' | 'groups', accountId: number, base: string): Promise<string[]> {
  const query =
    of === 'tables'
      ? 'select slug from data_tables where account_id = ? and slug like ?'
      : 'select slug from data_groups where account_id = ? and slug like ?';
  return (await many<{ slug: string }>(em, query, [accountId, `${base}%`])).map((r) => r.slug);
}

/** Whether another table (or group) of the account than `exceptId` has the slug. */
export async function slugInUse(
  em: EntityManager,
  of: 'tables' | 'groups',
  accountId: number,
  slug: string,
  exceptId: string,
): Promise<boolean> {
  const other = await tablesOf(em, 'data')
    .selectFrom(of === 'tables' ? 'data_tables' : 'data_groups')
    .select('id')
    .where('account_id', '=', accountId)
    .where('slug', '=', slug)
    .where('id', '<>', exceptId)
    .executeTakeFirst();
  return other !== undefined;
}

// ---- Writes --------------------------------------------------------------------------------------

export interface TableWrite {
  name: string;
  slug: string;
  description: string | null;
  icon: string | null;
  title_column: string | null;
  retention: unknown;
  legal_hold: boolean;
  access: unknown;
  masks: unknown;
  status_fields: unknown;
  unique_sets: unknown;
  quotas: unknown;
}

const settingsParams = (t: TableWrite) => [
  t.title_column,
  JSON.stringify(t.retention),
  t.legal_hold,
  JSON.stringify(t.access),
  JSON.stringify(t.masks),
  JSON.stringify(t.status_fields),
  JSON.stringify(t.unique_sets),
  JSON.stringify(t.quotas),
];

/** A new table; null when the account already has one with the slug. */
export function insertTable(em: EntityManager, id: string, accountId: number, t: TableWrite) {
  return one<{ id: string }>(
    em,
    `insert into data_tables (id, account_id, name, slug, description, icon, title_column, retention, legal_hold, access, masks,
                              status_fields, unique_sets, quotas, created_at, updated_at)
     values (?, ?, ?, ?, ?, ?, ?, ?::jsonb, ?, ?::jsonb, ?::jsonb, ?::jsonb, ?::jsonb, ?::jsonb, now(), now())
     on conflict (account_id, slug) do nothing returning id`,
    [id, accountId, t.name, t.slug, t.description, t.icon, ...settingsParams(t)],
  );
}

export async function updateTableSettings(em: EntityManager, tableId: string, t: TableWrite): Promise<void> {
  await exec(
    em,
    `update data_tables set name = ?, slug = ?, description = ?, icon = ?, title_column = ?, retention = ?::jsonb, legal_hold = ?,
            access = ?::jsonb, masks = ?::jsonb, status_fields = ?::jsonb, unique_sets = ?::jsonb, quotas = ?::jsonb, updated_at = now()
      where id = ?::uuid`,
    [t.name, t.slug, t.description, t.icon, ...settingsParams(t), tableId],
  );
}

/** The table and everything it holds (guards, history, records); groups forget it and the reports over it. */
export async function deleteTableAndContents(em: EntityManager, accountId: number, tableId: string): Promise<void> {
  await exec(em, 'delete from data_unique_values where table_id = ?::uuid', [tableId]);
  await exec(em, 'delete from data_record_history where table_id = ?::uuid', [tableId]);
  await exec(em, 'delete from data_records where table_id = ?::uuid', [tableId]);
  await exec(em, 'delete from data_tables where id = ?::uuid', [tableId]);
  await exec(
    em,
    `update data_groups
        set table_ids = table_ids - ?::text,
            reports = coalesce((select jsonb_agg(r) from jsonb_array_elements(reports) r where r->>'table_id' <> ?), '[]'::jsonb),
            updated_at = now()
      where account_id = ? and jsonb_exists(table_ids, ?)`,
    [tableId, tableId, accountId, tableId],
  );
}

export async function insertColumn(
  em: EntityManager,
  accountId: number,
  tableId: string,
  c: ColumnDraft,
  position: number,
): Promise<DefinitionColumn> {
  return (await one<DefinitionColumn>(
    em,
    `insert into data_columns (id, account_id, table_id, key, label, type, stored_type, position, required, "unique", indexed,
                               index_status, config, ui, created_at, updated_at)
     values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?::jsonb, ?::jsonb, now(), now())
     returning id, key, label, type, stored_type, position, required, "unique", indexed, index_status, index_error, index_name, config, ui`,
    [
      randomUUID(),
      accountId,
      tableId,
      c.key,
      c.label,
      c.type,
      c.stored_type,
      position,
      c.required,
      c.unique,
      c.indexed,
      c.indexed ? 'pending' : null,
      JSON.stringify(c.config),
      JSON.stringify(c.ui),
    ],
  ))!;
}

export async function setColumnPosition(em: EntityManager, columnId: string, position: number): Promise<void> {
  await tablesOf(em, 'data')
    .updateTable('data_columns')
    .set({ position, updated_at: sql<string>`now()` })
    .where('id', '=', columnId)
    .execute();
}

export interface ColumnWrite {
  label: string;
  required: boolean;
  unique: boolean;
  indexed: boolean;
  index_status: string | null;
  index_error: string | null;
  config: unknown;
  ui: unknown;
}

export async function updateColumnDefinition(em: EntityManager, columnId: string, c: ColumnWrite): Promise<void> {
  await exec(
    em,
    `update data_columns set label = ?, required = ?, "unique" = ?, indexed = ?, index_status = ?, index_error = ?, config = ?::jsonb,
            ui = ?::jsonb, updated_at = now()
      where id = ?::uuid`,
    [c.label, c.required, c.unique, c.indexed, c.index_status, c.index_error, JSON.stringify(c.config), JSON.stringify(c.ui), columnId],
  );
}

export async function deleteColumnRow(em: EntityManager, columnId: string): Promise<void> {
  await tablesOf(em, 'data').deleteFrom('data_columns').where('id', '=', columnId).execute();
}

/** A deleted column's values go with it, so a later column of the same key starts empty. */
export async function dropRecordValues(em: EntityManager, tableId: string, key: string): Promise<void> {
  await exec(em, 'update data_records set data = data - ?::text where table_id = ?::uuid and jsonb_exists(data, ?)', [key, tableId, key]);
}

/** Ids of the account's tables (what a relation column or a group may name). */
export async function accountTableIds(em: EntityManager, accountId: number): Promise<string[]> {
  const rows = await tablesOf(em, 'data').selectFrom('data_tables').select('id').where('account_id', '=', accountId).execute();
  return rows.map((t) => t.id);
}
