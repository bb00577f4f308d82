import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { parsePhoneNumberWithError, type CountryCode } from 'libphonenumber-js/max';
import { many, one, onePlanned } from '../../entities/db.js';
import type { AdmissionRow, RequestContext } from '../platform/context.js';
import { DomainError, validationFailed, type FieldErrors } from '../platform/errors.js';
import { DATA_LIMITS, canViewTable, masksFor, type TableAccess } from '../../domain/data/index.js';
import { checkStatusMoves, checkWrite, dataBytes, type PhoneRule, type ValueEnv } from '../../domain/data/values.js';
import { StaleDefinition, dataNotFound, isUuid, loadTable, withTableDefinition, type LoadedTable } from './tables.js';
import { presentRecord, type RecordRow, type RecordView } from './present.js';
import { changesOf, historyActor, writeHistory } from './history.js';
import { RELEASE_BEFORE_FLUSH, durableCommit } from '../platform/durable-commit.js';
import { GUARD_CONSTRAINT, hasGuards, insertGuardsSql, refuseTakenValues, syncUniqueGuards } from './unique.js';

// A record's reads and writes (Endpoints > Data tables, write rules). Each write is one
// transaction holding the record row, its history entry, its unique guards and the table's quota
// counters, so a refusal at any step leaves nothing behind. Writes made through this API carry
// source `api`, which never changes afterwards (a history entry's source is where that write came
// from: `api` for every write of this API). Last write wins: there is no version precondition.
//
// Lock order within a table: a create is one statement (createStatement) that takes the table row
// first and holds it only through that statement and its commit; updates and deletes take their
// guard rows first and the table row last (the quota update), so it is held only to the commit.

export const API_SOURCE = 'api';

/** Phones to E.164 through libphonenumber-js (full metadata: digits, not only lengths, are checked). */
export const phoneRule: PhoneRule = (raw, region) => {
  try {
    const p = parsePhoneNumberWithError(raw, region.toUpperCase() as CountryCode);
    return p.isValid() ? p.number : null;
  } catch {
    return null;
  }
};
const env: ValueEnv = { phone: phoneRule };

const RECORD_COLUMNS = 'id, seq, table_id, data, source, size_bytes, created_at, updated_at';

async function liveRecord(em: EntityManager, rc: RequestContext, t: LoadedTable, recordRef: string, lock = false) {
  if (!isUuid(recordRef)) throw dataNotFound('Record');
  const row = await one<RecordRow>(
    em,
    `select ${RECORD_COLUMNS} from data_records
      where id = ?::uuid and table_id = ?::uuid and account_id = ? and deleted_at is null${lock ? ' for update' : ''}`,
    [recordRef, t.table.id, rc.account.id],
  );
  if (!row) throw dataNotFound('Record');
  return row;
}

export async function getRecord(rc: RequestContext, tableRef: string, recordRef: string): Promise<{ record: RecordView }> {
  const t = await loadTable(rc, tableRef);
  return { record: await presentRecord(rc, t, await liveRecord(rc.em, rc, t, recordRef)) };
}

/**
 * Relation values must name a live record of the column's table that the caller can see: one
 * query for every relation value the write sets. Answers the problems by key.
 */
async function relationErrors(em: EntityManager, rc: RequestContext, t: LoadedTable, data: Record<string, unknown>, keys: string[]) {
  const errors: FieldErrors = {};
  const wanted = t.columns.filter((c) => c.type === 'relation' && keys.includes(c.key) && typeof data[c.key] === 'string');
  if (!wanted.length) return errors;
  const found = await many<{ id: string; table_id: string; access: TableAccess }>(
    em,
    `select r.id, r.table_id, tt.access from data_records r join data_tables tt on tt.id = r.table_id
      where r.id = any(?::uuid[]) and r.account_id = ? and tt.account_id = ? and r.deleted_at is null`,
    [wanted.map((c) => data[c.key] as string), rc.account.id, rc.account.id],
  );
  for (const c of wanted) {
    const hit = found.find((f) => f.id === data[c.key]);
    if (!hit || hit.table_id !== c.config.table_id || !canViewTable(hit.access, t.caller))
      errors[c.key] = ['No live record with this id exists in the related table.'];
  }
  return errors;
}

function refuse(errors: FieldErrors) {
  if (Object.keys(errors).length) throw validationFailed(errors, 'The record data is invalid.');
}

function refuseOversize(bytes: number): number {
  if (bytes > DATA_LIMITS.recordBytes)
    throw new DomainError('invalid', `The record is ${bytes} bytes serialized; at most ${DATA_LIMITS.recordBytes} are allowed.`, {
      field: 'data',
      errors: { data: [`The record may not be larger than ${DATA_LIMITS.recordBytes} bytes serialized (it is ${bytes}).`] },
    });
  return bytes;
}

/** The 402 of a guarded quota update that matched no row: which quota, its limit and what is used. */
async function quotaRefusal(em: EntityManager, t: LoadedTable, addBytes: number, addRecord: boolean): Promise<never> {
  const now = (await one<{ records_count: number; storage_bytes: string; records: string; storage: string }>(
    em,
    `select records_count, storage_bytes::text as storage_bytes,
            coalesce((quotas->>'records')::bigint, ?::bigint)::text as records,
            coalesce((quotas->>'storage_bytes')::bigint, ?::bigint)::text as storage
       from data_tables where id = ?::uuid`,
    [DATA_LIMITS.quotas.records, DATA_LIMITS.quotas.storage_bytes, t.table.id],
  ))!;
  const records = addRecord && now.records_count >= Number(now.records);
  const [quota, limit, used] = records
    ? ['records', Number(now.records), now.records_count]
    : ['storage_bytes', Number(now.storage), Number(now.storage_bytes)];
  throw new DomainError(
    'quota',
    records
      ? `This table holds its quota of ${limit} records.`
      : `This write needs ${addBytes} more bytes; the table uses ${used} of its ${limit} byte storage quota.`,
    { code: 'quota_exceeded', details: { quota, limit, used } },
  );
}

const QUOTA_GUARD = `coalesce((quotas->>'storage_bytes')::bigint, ?::bigint)`;

/** What a create stores, ready for its statement (values checked, auto numbers still to issue). */
export interface CreateRow {
  id: string;
  accountId: number;
  tableId: string;
  /** The checked data, keys in column order, without auto numbers. */
  data: Record<string, unknown>;
  /** The table's auto_number columns: each gets the number the table's counter issues. */
  autoKeys: string[];
  /** dataBytes of the stored data with every auto number at 0 (each issued number adds its digits beyond one). */
  bytes: number;
  actor: Record<string, unknown>;
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
  row: CreateRow,
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

/** The driver's error (however wrapped) when it is PostgreSQL's `code`. */
function pgError(err: unknown, code: string): { constraint?: string; table?: string; column?: string } | null {
  for (let e = err as { code?: unknown; cause?: unknown } | undefined, i = 0; e && i < 5; e = e.cause as typeof e, i++)
    if (e.code === code) return e as { constraint?: string };
  return null;
}

/**
 * Why a create's guarded UPDATE matched no row: the table went, its definition changed since the
 * values were checked (StaleDefinition: checked again on the new one), the record outgrew 8,192
 * bytes with its auto number, or a quota.
 */
async function createRefusal(em: EntityManager, t: LoadedTable, row: CreateRow): Promise<never> {
  const now = await one<{ n: string; v: string }>(
    em,
    'select auto_number_seq::text as n, definition_version::text as v from data_tables where id = ?::uuid and account_id = ?',
    [t.table.id, row.accountId],
  );
  if (!now) throw dataNotFound('Table');
  if (row.definitionVersion !== undefined && now.v !== row.definitionVersion) throw new StaleDefinition();
  const bytes = row.bytes + row.autoKeys.length * (String(BigInt(now.n) + 1n).length - 1);
  if (row.autoKeys.length) refuseOversize(bytes);
  return quotaRefusal(em, t, bytes, true);
}

export function createRecord(rc: RequestContext, tableRef: string, input: Record<string, unknown>): Promise<{ record: RecordView }> {
  return withTableDefinition(rc, tableRef, 'write', (t) => createIn(rc, t, input));
}

async function createIn(rc: RequestContext, t: LoadedTable, input: Record<string, unknown>): Promise<{ record: RecordView }> {
  const checked = checkWrite(t.columns, input, null, env, t.table.status_fields);
  const keys = Object.keys(checked.data);
  refuse({ ...(await relationErrors(rc.em, rc, t, checked.data, keys)), ...checked.errors });
  const autoKeys = t.columns.filter((c) => c.type === 'auto_number').map((c) => c.key);
  const withZeros = autoKeys.length ? { ...checked.data, ...Object.fromEntries(autoKeys.map((k) => [k, 0])) } : checked.data;
  // Column order, as the stored data is kept: the size counts the commas the auto numbers add.
  const sized = autoKeys.length
    ? Object.fromEntries(t.columns.filter((c) => c.key in withZeros).map((c) => [c.key, withZeros[c.key]]))
    : withZeros;
  const row: CreateRow = {
    id: randomUUID(),
    accountId: rc.account.id,
    tableId: t.table.id,
    data: checked.data,
    autoKeys,
    bytes: refuseOversize(dataBytes(sized)),
    actor: historyActor(rc),
    source: API_SOURCE,
    definitionVersion: String(t.table.definition_version),
  };
  const guarded = hasGuards(t);
  // A value another record holds is a 422 found before saving; one taken meanwhile fails the statement (409).
  if (guarded) await refuseTakenValues(rc.em, t, checked.data);
  const own = !rc.em.isInTransaction();
  // The request's authentication made by this statement too, when the door asked for it (one round trip).
  const admission = own && rc.admission?.pending ? rc.admission : undefined;
  const { sql, params } = createStatement(row, guarded ? insertGuardsSql(t, 'r') : null, own, admission?.sql());
  let created: (RecordRow & Partial<AdmissionRow>) | null;
  try {
    // A handful of shapes (auto numbers, guards, admission), each planned once per connection.
    created = await onePlanned<RecordRow & Partial<AdmissionRow>>(rc.em, sql, params);
    // First: a refused admission wrote nothing, and its refusal is the answer.
    if (admission) admission.settle(created as AdmissionRow);
  } catch (err) {
    // The history entry's table id is the counted table row's: null when the guarded UPDATE matched nothing.
    const uncounted = pgError(err, '23502');
    if (uncounted && uncounted.table === 'data_record_history' && uncounted.column === 'table_id') return createRefusal(rc.em, t, row);
    const unique = pgError(err, '23505');
    // A deadlock needs a create that takes the table row first (auto numbers) and a write that took a guard value first.
    if ((unique && unique.constraint === GUARD_CONSTRAINT) || (guarded && pgError(err, '40P01')))
      throw new DomainError('conflict', 'Another record took this value at the same time.', { code: 'conflict' });
    throw err;
  }
  if (!created?.id) return createRefusal(rc.em, t, row);
  if (own) await durableCommit(rc.em);
  rc.log.debug({ table: t.table.id, record: row.id }, 'data record created');
  return { record: await presentRecord(rc, t, created) };
}

/**
 * PATCH: the sent keys merged into the stored data (null or an empty value clears). Status fields
 * are judged against the current record: a move no listed move allows is 409 (strict machines),
 * a listed move whose permission the caller lacks is 403. A write that changes nothing stores
 * nothing (no history entry, updated_at kept).
 */
export async function updateRecord(
  rc: RequestContext,
  tableRef: string,
  recordRef: string,
  input: Record<string, unknown>,
): Promise<{ record: RecordView }> {
  const t = await loadTable(rc, tableRef, 'write');
  if (!isUuid(recordRef)) throw dataNotFound('Record');
  const row = await rc.em.transactional(async (tx) => {
    const current = await liveRecord(tx, rc, t, recordRef, true);
    const checked = checkWrite(t.columns, input, current.data, env, t.table.status_fields);
    refuse({ ...(await relationErrors(tx, rc, t, checked.data, checked.changed)), ...checked.errors });
    const moves = checkStatusMoves(t.table.status_fields, current.data, checked.data, t.caller);
    const masks = masksFor(t.table.masks, t.caller);
    for (const m of moves) {
      // The state a record is in is its stored value: a caller who sees that column masked is not told it.
      const hidden = masks.has(m.column);
      const details = hidden ? { column: m.column, to: m.to } : { column: m.column, from: m.from, to: m.to };
      const from = hidden ? '' : ` from ${m.from ?? 'no state'}`;
      if (m.refusal === 'illegal')
        throw new DomainError('conflict', `${m.column} may not move${from} to ${m.to ?? 'no state'}.`, {
          code: 'conflict',
          field: m.column,
          details: { ...details, reason: 'illegal_transition' },
        });
      if (m.refusal === 'forbidden')
        throw new DomainError('forbidden', `You may not move ${m.column}${from} to ${m.to ?? 'no state'}.`, {
          code: 'permission_denied',
          field: m.column,
          details: { ...details, reason: 'transition_permission' },
        });
    }
    if (!checked.changed.length) return current;
    const bytes = refuseOversize(dataBytes(checked.data));
    const updated = (await one<RecordRow>(
      tx,
      `update data_records set data = ?::jsonb, size_bytes = ?, updated_at = now() where id = ?::uuid returning ${RECORD_COLUMNS}`,
      [JSON.stringify(checked.data), bytes, current.id],
    ))!;
    await writeHistory(tx, rc, t, {
      recordId: current.id,
      action: moves.length ? 'status_transition' : 'update',
      changes: changesOf(checked.changed, current.data, checked.data),
      source: API_SOURCE,
    });
    if (hasGuards(t)) await syncUniqueGuards(tx, t, current.id, checked.data);
    const grow = bytes - current.size_bytes;
    if (grow !== 0) {
      const ok = await one(
        tx,
        `update data_tables set storage_bytes = greatest(storage_bytes + ?::bigint, 0)
          where id = ?::uuid and (?::bigint <= 0 or storage_bytes + ?::bigint <= ${QUOTA_GUARD})
          returning id`,
        [grow, t.table.id, grow, grow, DATA_LIMITS.quotas.storage_bytes],
      );
      if (!ok) await quotaRefusal(tx, t, grow, false);
    }
    return updated;
  });
  return { record: await presentRecord(rc, t, row) };
}

/** Soft delete: the record leaves every read, its quota and unique values are freed, history stays. A repeat is 404. */
export async function deleteRecord(rc: RequestContext, tableRef: string, recordRef: string): Promise<{ ok: true; deleted: 1 }> {
  const t = await loadTable(rc, tableRef, 'write');
  if (!isUuid(recordRef)) throw dataNotFound('Record');
  await rc.em.transactional(async (tx) => {
    const gone = await one<RecordRow>(
      tx,
      `update data_records set deleted_at = now()
        where id = ?::uuid and table_id = ?::uuid and account_id = ? and deleted_at is null
        returning ${RECORD_COLUMNS}`,
      [recordRef, t.table.id, rc.account.id],
    );
    if (!gone) throw dataNotFound('Record');
    await writeHistory(tx, rc, t, {
      recordId: gone.id,
      action: 'delete',
      changes: changesOf(Object.keys(gone.data), gone.data, {}),
      source: API_SOURCE,
    });
    if (hasGuards(t)) await syncUniqueGuards(tx, t, gone.id, null);
    await one(
      tx,
      `update data_tables set records_count = greatest(records_count - 1, 0), storage_bytes = greatest(storage_bytes - ?::bigint, 0)
        where id = ?::uuid returning id`,
      [gone.size_bytes, t.table.id],
    );
  });
  return { ok: true, deleted: 1 };
}
