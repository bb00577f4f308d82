import type { EntityManager } from '@mikro-orm/postgresql';
import { many, one } from '../../../entities/db.js';
import type { Row } from '../../../entities/database.js';
import { RELEASE_BEFORE_FLUSH } from '../../platform/durable-commit.js';
import { DATA_LIMITS, type HistoryActor, type TableAccess } from '../../../domain/data/index.js';

// Records (data_records) and the table counters their writes move (data_tables.records_count,
// storage_bytes, auto_number_seq). The list query is in records-query.ts.

const RECORD_COLUMNS = 'id, seq, table_id, data, source, size_bytes, created_at, updated_at';
/** A record as the services read it. */
export type StoredRecord = Pick<
  Row<'data', 'data_records'>,
  'id' | 'seq' | 'table_id' | 'data' | 'source' | 'size_bytes' | 'created_at' | 'updated_at'
>;

/** The live record of the table (null when there is none); locked when `lock`. */
export function liveRecord(em: EntityManager, accountId: number, tableId: string, recordId: string, lock = false) {
  return one<StoredRecord>(
    em,
    `select ${RECORD_COLUMNS} from data_records
      where id = ?::uuid and table_id = ?::uuid and account_id = ? and deleted_at is null${lock ? ' for update' : ''}`,
    [recordId, tableId, accountId],
  );
}

/** Whether the table ever held the record (deleted or not). */
export async function recordEverHeld(em: EntityManager, accountId: number, tableId: string, recordId: string): Promise<boolean> {
  return (
    (await one(em, 'select 1 from data_records where id = ?::uuid and table_id = ?::uuid and account_id = ?', [
      recordId,
      tableId,
      accountId,
    ])) !== null
  );
}

/** The live records of the account among `ids`, with their table and its access. */
export function relationTargets(em: EntityManager, accountId: number, ids: string[]) {
  return many<Pick<StoredRecord, 'id' | 'table_id'> & { access: TableAccess }>(
    em,
    `select r.id, r.table_id, tt.access from data_records r join data_tables tt on tt.id = r.table_id
      where r.id = any(?::uuid[]) and r.account_id = ? and tt.account_id = ? and r.deleted_at is null`,
    [ids, accountId, accountId],
  );
}

/**
 * Each live record's title value among `ids`, with its table's title column, masks and access:
 * one statement for a whole page of relation values.
 */
export function relatedTitles(em: EntityManager, accountId: number, ids: string[]) {
  return many<
    Pick<StoredRecord, 'id' | 'table_id'> &
      Pick<Row<'data', 'data_tables'>, 'masks' | 'access'> & { value: unknown; title_key: string | null }
  >(
    em,
    `select r.id, r.table_id, tt.masks, tt.access, tk.key as title_key, r.data -> tk.key as value
       from data_records r
       join data_tables tt on tt.id = r.table_id and tt.account_id = ?
       left join lateral (
         select c.key from data_columns c
          where c.table_id = tt.id and (c.key = tt.title_column or c.type = 'text')
          order by (c.key = tt.title_column) desc nulls last, c.position, c.key limit 1
       ) tk on true
      where r.id = any(?::uuid[]) and r.account_id = ? and r.deleted_at is null`,
    [accountId, ids, accountId],
  );
}

/** What a quota refusal says: the table's use and its limits (defaults where the table sets none). */
export async function quotaUse(em: EntityManager, tableId: string) {
  return (await one<Pick<Row<'data', 'data_tables'>, 'records_count' | 'storage_bytes'> & { records: string; storage: string }>(
    em,
    `select records_count, storage_bytes::text as storage_bytes,
            coalesce((quotas->>'records')::bigint, ?::bigint)::text as records,
            coalesce((quotas->>'storage_bytes')::bigint, ?::bigint)::text as storage
       from data_tables where id = ?::uuid`,
    [DATA_LIMITS.quotas.records, DATA_LIMITS.quotas.storage_bytes, tableId],
  ))!;
}

/**
 * Whether a create's statement failed on its history entry's table id (a not-null violation): the
 * id comes from the table row's guarded UPDATE, so that UPDATE matched no row (quota, definition, table gone).
 */
export const uncountedCreate = (e: { table?: string; column?: string }) => e.table === 'data_record_history' && e.column === 'table_id';

/** The table's last auto number and definition version, as text (null when the table is gone). */
export function tableCounters(em: EntityManager, accountId: number, tableId: string) {
  return one<{ n: string; v: string }>(
    em,
    'select auto_number_seq::text as n, definition_version::text as v from data_tables where id = ?::uuid and account_id = ?',
    [tableId, accountId],
  );
}

const QUOTA_GUARD = `coalesce((quotas->>'storage_bytes')::bigint, ?::bigint)`;

/** What a create stores, ready for its statement (values checked, auto numbers still to issue). */
export interface NewRecord {
  id: string;
  accountId: number;
  tableId: string;
  /** The checked data, keys in column order, without auto numbers. */
  data: Record<string, unknown>;
  /** The table's auto_number columns: each gets the number the table's counter issues. */
  autoKeys: string[];
  /** dataBytes of the stored data with every auto number at 0 (each issued number adds its digits beyond one). */
  bytes: number;
  actor: HistoryActor;
  source: string;
  /** The definition the values were checked against: the statement writes nothing if the table's has moved on. */
  definitionVersion?: string;
}

/**
 * The create statement's own commit does not wait for its WAL to reach the disk, so the table row is
 * released as soon as the commit is recorded; the create is answered only after durableCommit
 * (services/platform/durable-commit.ts), so a 201 always means the record is on disk.
 */
const EARLY_RELEASE = `select * from r where ${RELEASE_BEFORE_FLUSH}`;
const ADMITTED_EARLY_RELEASE = `select adm.*, r.* from adm left join r on true where ${RELEASE_BEFORE_FLUSH}`;

/**
 * A create as ONE statement, so it is its own transaction and makes one round trip: the record, its
 * history entry (every stored value, before null, read back from the stored row), for a table that
 * guards values its guard rows, and the table row's guarded UPDATE (quotas; for auto numbers the next
 * number and the 8,192-byte limit once the number has its digits). Nothing is written unless all of
 * it is: the history entry takes its table id from the UPDATE's row, so an UPDATE that matched no row
 * (a quota) fails the whole statement on that not-null column (createRefusal then says which quota),
 * and the guards' primary key fails it when a concurrent write took a value (409).
 *
 * The table row, which every create of the table updates, is the one hot lock; no round trip to the
 * API happens while it is held, and it is taken as late as the data allows: last (after the record
 * and its guards, the order updates and deletes use) unless the table issues auto numbers, whose
 * record needs the number first. Exported for the benchmark's floor (the same SQL run through pg).
 */
export function createStatement(
  row: NewRecord,
  guards: { sql: string; params: unknown[] } | null,
  /** false inside a caller's transaction: its commit is the one that counts, and it is flushed as usual. */
  releaseBeforeFlush = true,
  /** The request's admission made by this statement (RequestContext.admission): its CTEs come first, and nothing is written unless `ok` has a row. */
  admission?: { sql: string; params: unknown[] },
): { sql: string; params: unknown[] } {
  const params: unknown[] = admission ? [...admission.params] : [];
  const admitted = admission ? `${admission.sql},\n  ` : '';
  const whenAdmitted = admission ? ' where exists (select from ok)' : '';
  // Each value is pushed as its `?` is written (every fragment is built when the text reaches it),
  // so text order and parameter order cannot drift apart.
  const bind = (v: unknown) => (params.push(v), '?');
  const autos = row.autoKeys.length > 0;
  // The stored size: fixed without auto numbers; with them, the issued number's digits counted in
  // (`auto_number_seq + 1` in SET and WHERE is the number this create takes, `auto_number_seq` in RETURNING the same).
  const size = (seq: string) =>
    autos
      ? `(${bind(row.bytes - row.autoKeys.length)}::int + ${bind(row.autoKeys.length)}::int * length((${seq})::text))`
      : `${bind(row.bytes)}::int`;
  const counters = (after: string) => `q as (
      update data_tables set records_count = records_count + 1, storage_bytes = storage_bytes + ${size('auto_number_seq + 1')}${
        autos ? ', auto_number_seq = auto_number_seq + 1' : ''
      }
       where id = ${bind(row.tableId)}::uuid and account_id = ${bind(row.accountId)}${
         row.definitionVersion === undefined ? '' : ` and definition_version = ${bind(row.definitionVersion)}::bigint`
       }
         and records_count < coalesce((quotas->>'records')::bigint, ${bind(DATA_LIMITS.quotas.records)}::bigint)
         and storage_bytes + ${size('auto_number_seq + 1')} <= coalesce((quotas->>'storage_bytes')::bigint, ${bind(DATA_LIMITS.quotas.storage_bytes)}::bigint)${
           autos ? ` and ${size('auto_number_seq + 1')} <= ${bind(DATA_LIMITS.recordBytes)}::int` : ''
         }${after}
   returning id${autos ? `, auto_number_seq, ${size('auto_number_seq')} as size_bytes` : ''})`;
  const record = () => `r as (
      insert into data_records (id, account_id, table_id, data, source, size_bytes, created_at, updated_at)
      ${
        autos
          ? `select ${bind(row.id)}::uuid, ${bind(row.accountId)}, q.id,
             ${bind(JSON.stringify(row.data))}::jsonb || (select jsonb_object_agg(k, q.auto_number_seq) from unnest(${bind(row.autoKeys)}::text[]) k),
             ${bind(row.source)}, q.size_bytes, now(), now() from q`
          : `select ${bind(row.id)}::uuid, ${bind(row.accountId)}, ${bind(row.tableId)}::uuid, ${bind(JSON.stringify(row.data))}::jsonb, ${bind(row.source)}, ${bind(row.bytes)}, now(), now()${whenAdmitted}`
      }
   returning ${RECORD_COLUMNS})`;
  const guardRows = () => {
    if (!guards) return '';
    params.push(...guards.params);
    return `,\n  g as (${guards.sql})`;
  };
  const history = () => `h as (
      insert into data_record_history (account_id, table_id, record_id, action, changes, actor, source, reason, created_at)
      select ${bind(row.accountId)}, (select q.id from q), r.id, 'create',
             (select jsonb_object_agg(e.key, jsonb_build_object('before', null, 'after', e.value)) from jsonb_each(r.data) e),
             ${bind(JSON.stringify(row.actor))}::jsonb, ${bind(row.source)}, null, now()
        from r)`;
  // With an admission the answer is adm's one row, the record's columns beside it (null when nothing was written).
  const answer = admission ? ADMITTED_EARLY_RELEASE : releaseBeforeFlush ? EARLY_RELEASE : 'select * from r';
  // Without auto numbers the UPDATE waits for the record and its guards (it reads them, so it runs after them).
  const sql = autos
    ? `with ${admitted}${counters(admission ? ' and exists (select from ok)' : '')},\n  ${record()}${guardRows()},\n  ${history()}\n  ${answer}`
    : `with ${admitted}${record()}${guardRows()},\n  ${counters(guards ? ' and exists (select from r) and (select count(*) from g) >= 0' : ' and exists (select from r)')},\n  ${history()}\n  ${answer}`;
  return { sql, params };
}

/** An update's new data and size; answers the stored record. */
export async function updateRecordData(em: EntityManager, recordId: string, data: Record<string, unknown>, bytes: number) {
  return (await one<StoredRecord>(
    em,
    `update data_records set data = ?::jsonb, size_bytes = ?, updated_at = now() where id = ?::uuid returning ${RECORD_COLUMNS}`,
    [JSON.stringify(data), bytes, recordId],
  ))!;
}

/** Moves the table's storage by `grow` bytes, unless growing passes its quota: false then. */
export async function growStorage(em: EntityManager, tableId: string, grow: number): Promise<boolean> {
  const ok = await one(
    em,
    `update data_tables set storage_bytes = greatest(storage_bytes + ?::bigint, 0)
      where id = ?::uuid and (?::bigint <= 0 or storage_bytes + ?::bigint <= ${QUOTA_GUARD})
      returning id`,
    [grow, tableId, grow, grow, DATA_LIMITS.quotas.storage_bytes],
  );
  return ok !== null;
}

/** Soft delete of a live record; answers it as it was (null when there was none). */
export function softDeleteRecord(em: EntityManager, accountId: number, tableId: string, recordId: string) {
  return one<StoredRecord>(
    em,
    `update data_records set deleted_at = now()
      where id = ?::uuid and table_id = ?::uuid and account_id = ? and deleted_at is null
      returning ${RECORD_COLUMNS}`,
    [recordId, tableId, accountId],
  );
}

/** A deleted record's share of the table's counters is freed. */
export async function releaseRecordQuota(em: EntityManager, tableId: string, bytes: number): Promise<void> {
  await one(
    em,
    `update data_tables set records_count = greatest(records_count - 1, 0), storage_bytes = greatest(storage_bytes - ?::bigint, 0)
      where id = ?::uuid returning id`,
    [bytes, tableId],
  );
}
