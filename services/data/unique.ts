import type { EntityManager } from '@mikro-orm/postgresql';
import { DomainError, validationFailed } from '../platform/errors.js';
import type { LoadedTable } from './tables.js';
import {
  GUARD_CONSTRAINT,
  clearRecordGuards,
  dropGuard,
  guardLiveRecords,
  insertGuardsSql as guardsInsertSql,
  insertRecordGuards,
  recordGuardValues,
  sharedGuardValue,
  takenByData,
  takenByOthers,
} from './store/unique.js';

// The unique-value guard (docs/data-tables.md, Uniqueness): one guard row per unique
// column and per unique set of each live record. The guard's value is computed by PostgreSQL from
// the stored row (jsonb text), never by us, so the same value always reads the same whatever JSON
// the caller sent. Keys travel as bind parameters; nothing of a definition is written into SQL text.

/** One guard of a table: a unique column (set_key = its key) or a unique set (set_key = `set:<key>`). */
interface Guard {
  set_key: string;
  keys: string[];
  /** A single column's value is its jsonb text; a set's the JSON array of its columns' values. */
  single: boolean;
}

const ALREADY_USED = 'This value is already used by another record.';

function guardsOf(t: LoadedTable): Guard[] {
  return [
    ...t.columns.filter((c) => c.unique).map((c) => ({ set_key: c.key, keys: [c.key], single: true })),
    ...t.table.unique_sets.map((s) => ({ set_key: `set:${s.key}`, keys: s.columns, single: false })),
  ];
}

function errorsFor(guards: Guard[], setKeys: Iterable<string>): Record<string, string[]> {
  const errors: Record<string, string[]> = {};
  for (const sk of setKeys) for (const k of guards.find((g) => g.set_key === sk)?.keys ?? []) errors[k] = [ALREADY_USED];
  return errors;
}

/**
 * Brings one record's guard rows in line with its stored data, inside the write's transaction and
 * after the record row was written (`data` null: the record is gone or deleted). A value another
 * record holds is a 422 naming the column (or every column of the set); one a concurrent write took
 * between our look and our insert is a 409 (the insert does nothing on conflict, so the
 * transaction stays usable and the caller's rollback is clean).
 */
export async function syncUniqueGuards(
  em: EntityManager,
  t: LoadedTable,
  recordId: string,
  data: Record<string, unknown> | null,
): Promise<void> {
  await clearRecordGuards(em, t.table.id, recordId);
  const guards = guardsOf(t);
  if (data === null || !guards.length) return;
  const values = await recordGuardValues(em, JSON.stringify(guards), recordId);
  if (!values.length) return;
  const setKeys = values.map((v) => v.set_key);
  const texts = values.map((v) => v.value);
  const taken = await takenByOthers(em, t.table.id, recordId, setKeys, texts);
  if (taken.length) throw validationFailed(errorsFor(guards, new Set(taken.map((r) => r.set_key))));
  const inserted = await insertRecordGuards(em, t.table.id, recordId, setKeys, texts);
  if (inserted.length < values.length)
    throw new DomainError('conflict', 'Another record took this value at the same time.', { code: 'conflict' });
}

/** Whether the table guards any values (unique columns or sets): a table with none skips every guard statement. */
export const hasGuards = (t: LoadedTable) => t.columns.some((c) => c.unique) || t.table.unique_sets.length > 0;

/**
 * A create's look before it saves: a value another record already holds is a 422 naming the column
 * (or every column of the set), as syncUniqueGuards answers it. `data` is what the create will
 * store (auto numbers, issued only when saving, are left out: the table's counter makes them unique).
 */
export async function refuseTakenValues(em: EntityManager, t: LoadedTable, data: Record<string, unknown>): Promise<void> {
  const guards = guardsOf(t);
  if (!guards.length) return;
  const taken = await takenByData(em, t.table.id, JSON.stringify(guards), data);
  if (taken.length) throw validationFailed(errorsFor(guards, new Set(taken.map((r) => r.set_key))));
}

/**
 * The guard rows of a create, as a statement over the rows `source` (a CTE with table_id, id and
 * data) for a create's single statement. No `on conflict`: a value a concurrent write took fails the
 * whole statement with the guard's unique violation (the caller answers 409), so nothing is written.
 */
export function insertGuardsSql(t: LoadedTable, source: string): { sql: string; params: unknown[] } {
  return guardsInsertSql(t.table.id, JSON.stringify(guardsOf(t)), source);
}

export { GUARD_CONSTRAINT };

/**
 * Guards every live record of a table for one column or set an operator has just made unique (in the
 * operator's transaction). Records already sharing a value refuse it: 422 naming the column(s).
 * `setKey` is the column key, or `set:<key>` for a unique set.
 */
export async function backfillUniqueGuard(em: EntityManager, tableId: string, setKey: string, keys: string[]): Promise<void> {
  const guard: Guard = { set_key: setKey, keys, single: !setKey.startsWith('set:') };
  await dropUniqueGuard(em, tableId, setKey);
  const dup = await sharedGuardValue(em, tableId, JSON.stringify([guard]));
  if (dup.length) {
    const message = `Live records already share a value here (${dup[0].value}); make them different before making this unique.`;
    throw validationFailed(Object.fromEntries(keys.map((k) => [k, [message]])), message);
  }
  await guardLiveRecords(em, tableId, JSON.stringify([guard]));
}

/** Forgets a guard: the column or set is no longer unique (or no longer exists). */
export async function dropUniqueGuard(em: EntityManager, tableId: string, setKey: string): Promise<void> {
  await dropGuard(em, tableId, setKey);
}
