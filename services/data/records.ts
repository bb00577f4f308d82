import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { parsePhoneNumberWithError, type CountryCode } from 'libphonenumber-js/max';
import { onePlanned } from '../../entities/db.js';
import type { AdmissionRow, RequestContext } from '../platform/context.js';
import { DomainError, validationFailed, type FieldErrors } from '../platform/errors.js';
import { DATA_LIMITS, canViewTable, masksFor } from '../../domain/data/index.js';
import { checkStatusMoves, checkWrite, dataBytes, type PhoneRule, type ValueEnv } from '../../domain/data/values.js';
import { StaleDefinition, dataNotFound, isUuid, loadTable, withTableDefinition, type LoadedTable } from './tables.js';
import { presentRecord, type RecordView } from './present.js';
import { changesOf, historyActor, writeHistory } from './history.js';
import { durableCommit } from '../platform/durable-commit.js';
import {
  createStatement,
  growStorage,
  liveRecord as storedLiveRecord,
  quotaUse,
  relationTargets,
  releaseRecordQuota,
  softDeleteRecord,
  tableCounters,
  uncountedCreate,
  updateRecordData,
  type NewRecord,
  type StoredRecord,
} from './store/records.js';
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

export { createStatement };

async function liveRecord(em: EntityManager, rc: RequestContext, t: LoadedTable, recordRef: string, lock = false) {
  if (!isUuid(recordRef)) throw dataNotFound('Record');
  const row = await storedLiveRecord(em, rc.account.id, t.table.id, recordRef, lock);
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
  const found = await relationTargets(
    em,
    rc.account.id,
    wanted.map((c) => data[c.key] as string),
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
  const now = await quotaUse(em, t.table.id);
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
async function createRefusal(em: EntityManager, t: LoadedTable, row: NewRecord): Promise<never> {
  const now = await tableCounters(em, row.accountId, t.table.id);
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
  const row: NewRecord = {
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
  let created: (StoredRecord & Partial<AdmissionRow>) | null;
  try {
    // A handful of shapes (auto numbers, guards, admission), each planned once per connection.
    created = await onePlanned<StoredRecord & Partial<AdmissionRow>>(rc.em, sql, params);
    // First: a refused admission wrote nothing, and its refusal is the answer.
    if (admission) admission.settle(created as AdmissionRow);
  } catch (err) {
    // The history entry's table id is the counted table row's: null when the guarded UPDATE matched nothing.
    const uncounted = pgError(err, '23502');
    if (uncounted && uncountedCreate(uncounted)) return createRefusal(rc.em, t, row);
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
    const updated = await updateRecordData(tx, current.id, checked.data, bytes);
    await writeHistory(tx, rc, t, {
      recordId: current.id,
      action: moves.length ? 'status_transition' : 'update',
      changes: changesOf(checked.changed, current.data, checked.data),
      source: API_SOURCE,
    });
    if (hasGuards(t)) await syncUniqueGuards(tx, t, current.id, checked.data);
    const grow = bytes - current.size_bytes;
    if (grow !== 0) {
      if (!(await growStorage(tx, t.table.id, grow))) await quotaRefusal(tx, t, grow, false);
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
    const gone = await softDeleteRecord(tx, rc.account.id, t.table.id, recordRef);
    if (!gone) throw dataNotFound('Record');
    await writeHistory(tx, rc, t, {
      recordId: gone.id,
      action: 'delete',
      changes: changesOf(Object.keys(gone.data), gone.data, {}),
      source: API_SOURCE,
    });
    if (hasGuards(t)) await syncUniqueGuards(tx, t, gone.id, null);
    await releaseRecordQuota(tx, t.table.id, gone.size_bytes);
  });
  return { ok: true, deleted: 1 };
}
