import { one, many } from '../../entities/db.js';
import type { RequestContext } from '../platform/context.js';
import { DomainError } from '../platform/errors.js';
import {
  canViewTable,
  canWriteTable,
  type ColumnDef,
  type DataCaller,
  type FieldMask,
  type StatusField,
  type TableAccess,
  type TableQuotas,
  type TableRetention,
  type UniqueSet,
  type IndexStatus,
} from '../../domain/data/index.js';

// A table as every data service reads it: the row, its columns in position order, and the caller
// the rules are applied for. Loading it is where visibility is decided: a table of another account
// or one the caller may not see is not found (404), one it sees but may not write is 403.

export interface TableRow {
  id: string;
  account_id: number;
  name: string;
  slug: string;
  description: string | null;
  icon: string | null;
  title_column: string | null;
  retention: TableRetention;
  legal_hold: boolean;
  access: TableAccess;
  masks: FieldMask[];
  status_fields: StatusField[];
  unique_sets: UniqueSet[];
  quotas: TableQuotas;
  records_count: number;
  storage_bytes: string | number;
  auto_number_seq: string | number;
  search_index_status: IndexStatus | null;
  search_index_columns: string[] | null;
  search_index_error: string | null;
  created_at: Date;
  updated_at: Date;
}

/** What a table and a data group show alike: id, name, slug, description, icon (the answers' schemas). */
export const namedProperties = {
  id: { type: 'string', format: 'uuid' },
  name: { type: 'string' },
  slug: { type: 'string' },
  description: { type: ['string', 'null'] },
  icon: { type: ['string', 'null'] },
} as const;

export interface LoadedTable {
  table: TableRow;
  /** Position order: record data keys are returned in this order. */
  columns: ColumnDef[];
  caller: DataCaller;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const isUuid = (s: string) => UUID.test(s);

/** The data envelope's not_found (table or record identity). */
export const dataNotFound = (what: 'Table' | 'Record' | 'Group') =>
  new DomainError('not_found', `${what} not found.`, { code: 'not_found' });

/** The caller as the data rules see it. */
export function dataCaller(rc: RequestContext): DataCaller {
  const a = rc.actor;
  if (a.kind === 'operator' || a.kind === 'system') return { permissions: ['*'], userId: null, unrestricted: true };
  const issuer = a.issuer;
  return { permissions: issuer?.permissions ?? [], userId: issuer?.id ?? null, unrestricted: false };
}

const COLUMN_FIELDS = `id, key, label, type, stored_type, position, required, "unique", indexed, index_status, index_error, config, ui`;

export async function columnsOf(rc: Pick<RequestContext, 'em'>, tableId: string): Promise<ColumnDef[]> {
  return many<ColumnDef>(rc.em, `select ${COLUMN_FIELDS} from data_columns where table_id = ? order by position, key`, [tableId]);
}

/**
 * The caller's table by its UUID (or, for convenience, its slug). `need: 'write'` also checks the
 * table's write grant (403 permission_denied when the caller sees the table but may not write it).
 * One statement: the row with its columns aggregated (every data request starts here, so a second
 * round trip would be paid by each of them).
 */
export async function loadTable(rc: RequestContext, ref: string, need: 'view' | 'write' = 'view'): Promise<LoadedTable> {
  const row = await one<TableRow & { columns_json: ColumnDef[] }>(
    rc.em,
    `select t.*, (select coalesce(json_agg(c order by c.position, c.key), '[]'::json)
                    from (select ${COLUMN_FIELDS} from data_columns where table_id = t.id) c) as columns_json
       from data_tables t where ${isUuid(ref) ? 't.id = ?::uuid' : 't.slug = ?'} and t.account_id = ?`,
    [ref, rc.account.id],
  );
  const caller = dataCaller(rc);
  if (!row || !canViewTable(row.access, caller)) throw dataNotFound('Table');
  if (need === 'write' && !canWriteTable(row.access, caller))
    throw new DomainError('forbidden', 'You may read this table but not write to it.', {
      code: 'permission_denied',
      reason: 'table_write_grant',
    });
  const { columns_json: columns, ...table } = row;
  return { table, columns, caller };
}

/** Every table the caller may see, by name. */
export async function visibleTables(rc: RequestContext): Promise<TableRow[]> {
  const rows = await many<TableRow>(rc.em, 'select * from data_tables where account_id = ? order by name, id', [rc.account.id]);
  const caller = dataCaller(rc);
  return rows.filter((t) => canViewTable(t.access, caller));
}

/** The column named by a key, or undefined (never trust a key from a request without this). */
export const columnByKey = (t: LoadedTable, key: string) => t.columns.find((c) => c.key === key);
