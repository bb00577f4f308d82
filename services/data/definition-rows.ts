import type { EntityManager } from '@mikro-orm/postgresql';
import type { OperatorContext } from '../platform/context.js';
import { DomainError } from '../platform/errors.js';
import { accountRef, requireAccount } from '../account/index.js';
import type { ColumnDef } from '../../domain/data/index.js';
import { dataNotFound, isUuid, type TableRow } from './tables.js';
import { definitionColumns, insertColumn, tableForDefinition, type DefinitionColumn } from './store/definitions.js';
import { iso } from '../platform/time.js';

// The definition services' rows: the account a request names, a table and its columns as the
// operator API reads them (with the index name the index workflow keeps), a new column's row, and
// the views the operator API answers with.

export type { DefinitionColumn };

export { insertColumn };

// ---- Loading -------------------------------------------------------------------------------------

export async function accountOf(oc: OperatorContext, ref: string): Promise<number> {
  const id = await accountRef(oc, ref);
  await requireAccount(oc, id);
  return id;
}

/** A table of the account by UUID or slug; locked when `forUpdate` (column changes of one table queue up). */
export async function tableOf(em: EntityManager, accountId: number, ref: string, forUpdate = false): Promise<TableRow> {
  const row = await tableForDefinition(em, accountId, ref, isUuid(ref), forUpdate);
  if (!row) throw dataNotFound('Table');
  return row;
}

export const columnRows = (em: EntityManager, tableId: string) => definitionColumns(em, tableId);

export function columnOf(columns: DefinitionColumn[], ref: string): DefinitionColumn {
  const c = columns.find((x) => (isUuid(ref) ? x.id === ref.toLowerCase() : x.key === ref));
  if (!c) throw new DomainError('not_found', 'Column not found.', { code: 'not_found' });
  return c;
}

// ---- Views ---------------------------------------------------------------------------------------

export function columnView(c: ColumnDef) {
  return {
    id: c.id,
    key: c.key,
    label: c.label,
    type: c.type,
    stored_type: c.stored_type,
    position: c.position,
    required: c.required,
    unique: c.unique,
    indexed: c.indexed,
    index_status: c.index_status,
    index_error: c.index_error,
    config: c.config,
    ui: c.ui,
  };
}

export type TableView = ReturnType<typeof tableView>;
export function tableView(t: TableRow, columns: ColumnDef[]) {
  return {
    id: t.id,
    account_id: t.account_id,
    name: t.name,
    slug: t.slug,
    description: t.description,
    icon: t.icon,
    title_column: t.title_column,
    retention: t.retention,
    legal_hold: t.legal_hold,
    access: t.access,
    masks: t.masks,
    status_fields: t.status_fields,
    unique_sets: t.unique_sets,
    quotas: t.quotas,
    records_count: Number(t.records_count),
    storage_bytes: Number(t.storage_bytes),
    search_index: { status: t.search_index_status, columns: t.search_index_columns, error: t.search_index_error },
    columns: columns.map(columnView),
    created_at: iso(t.created_at),
    updated_at: iso(t.updated_at),
  };
}
