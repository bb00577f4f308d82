import type { EntityManager } from '@mikro-orm/postgresql';
import { exec, many } from '../../entities/db.js';
import { DomainError, validationFailed } from '../platform/errors.js';
import type { LoadedTable } from './tables.js';

// The unique-value guard (docs/data-tables.md, Uniqueness): one data_unique_values row per unique
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

/**
 * (record id, set_key, value) of every non-empty guard value of the records `where` selects from
 * `source` (alias r, columns id and data: data_records, or a create's own rows). The guards come as
 * one jsonb bind (the first `?`); an empty value (absent, null, '' or []) is not guarded.
 */
const guardValuesSql = (where: string, source = 'data_records r') => `
  select r.id as record_id, s.set_key,
         case when s.single then (r.data -> (s.keys ->> 0))::text
              else (select jsonb_agg(r.data -> u.k order by u.o) from jsonb_array_elements_text(s.keys) with ordinality u(k, o))::text
         end as value
    from jsonb_to_recordset(?::jsonb) as s(set_key text, keys jsonb, single boolean)
    cross join ${source}
   where ${where}
     and not exists (
       select 1 from jsonb_array_elements_text(s.keys) e(k)
        where r.data -> e.k is null or (r.data -> e.k) in ('null'::jsonb, '""'::jsonb, '[]'::jsonb))`;

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
  await exec(em, 'delete from data_unique_values where record_id = ?::uuid and table_id = ?::uuid', [recordId, t.table.id]);
  const guards = guardsOf(t);
  if (data === null || !guards.length) return;
  const values = await many<{ set_key: string; value: string }>(em, guardValuesSql('r.id = ?::uuid'), [JSON.stringify(guards), recordId]);
  if (!values.length) return;
  const setKeys = values.map((v) => v.set_key);
  const texts = values.map((v) => v.value);
  const taken = await many<{ set_key: string }>(
    em,
    `select g.set_key from data_unique_values g
       join unnest(?::text[], ?::text[]) as u(set_key, value) on g.set_key = u.set_key and g.value = u.value
      where g.table_id = ?::uuid and g.record_id <> ?::uuid`,
    [setKeys, texts, t.table.id, recordId],
  );
  if (taken.length) throw validationFailed(errorsFor(guards, new Set(taken.map((r) => r.set_key))));
  const inserted = await many<{ set_key: string }>(
    em,
    `insert into data_unique_values (table_id, set_key, value, record_id)
     select ?::uuid, u.set_key, u.value, ?::uuid from unnest(?::text[], ?::text[]) as u(set_key, value)
     on conflict do nothing returning set_key`,
    [t.table.id, recordId, setKeys, texts],
  );
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
  const taken = await many<{ set_key: string }>(
    em,
    `select distinct v.set_key from (${guardValuesSql('true', '(select null::uuid as id, ?::jsonb as data) r')}) v
       join data_unique_values g on g.table_id = ?::uuid and g.set_key = v.set_key and g.value = v.value`,
    [JSON.stringify(guards), JSON.stringify(data), t.table.id],
  );
  if (taken.length) throw validationFailed(errorsFor(guards, new Set(taken.map((r) => r.set_key))));
}

/**
 * The guard rows of a create, as a statement over the rows `source` (a CTE with table_id, id and
 * data) for a create's single statement. No `on conflict`: a value a concurrent write took fails the
 * whole statement with the guard's unique violation (the caller answers 409), so nothing is written.
 */
export function insertGuardsSql(t: LoadedTable, source: string): { sql: string; params: unknown[] } {
  return {
    sql: `insert into data_unique_values (table_id, set_key, value, record_id)
          select ?::uuid, v.set_key, v.value, v.record_id from (${guardValuesSql('true', `${source} r`)}) v
          returning set_key`,
    params: [t.table.id, JSON.stringify(guardsOf(t))],
  };
}

/** The name of the guard's primary key: a unique violation on it is a unique value taken concurrently. */
export const GUARD_CONSTRAINT = 'data_unique_values_pkey';

/**
 * Guards every live record of a table for one column or set an operator has just made unique (in the
 * operator's transaction). Records already sharing a value refuse it: 422 naming the column(s).
 * `setKey` is the column key, or `set:<key>` for a unique set.
 */
export async function backfillUniqueGuard(em: EntityManager, tableId: string, setKey: string, keys: string[]): Promise<void> {
  const guard: Guard = { set_key: setKey, keys, single: !setKey.startsWith('set:') };
  await dropUniqueGuard(em, tableId, setKey);
  const dup = await many<{ value: string }>(
    em,
    `select value from (${guardValuesSql('r.table_id = ?::uuid and r.deleted_at is null')}) v group by value having count(*) > 1 limit 1`,
    [JSON.stringify([guard]), tableId],
  );
  if (dup.length) {
    const message = `Live records already share a value here (${dup[0].value}); make them different before making this unique.`;
    throw validationFailed(Object.fromEntries(keys.map((k) => [k, [message]])), message);
  }
  await exec(
    em,
    `insert into data_unique_values (table_id, set_key, value, record_id)
     select ?::uuid, v.set_key, v.value, v.record_id from (${guardValuesSql('r.table_id = ?::uuid and r.deleted_at is null')}) v`,
    [tableId, JSON.stringify([guard]), tableId],
  );
}

/** Forgets a guard: the column or set is no longer unique (or no longer exists). */
export async function dropUniqueGuard(em: EntityManager, tableId: string, setKey: string): Promise<void> {
  await exec(em, 'delete from data_unique_values where table_id = ?::uuid and set_key = ?', [tableId, setKey]);
}
