import type { EntityManager } from '@mikro-orm/postgresql';
import { exec, many } from '../../../entities/db.js';

// The unique-value guard's statements (data_unique_values; services/data/unique.ts decides what
// they mean). The guard's value is computed by PostgreSQL from the stored row (jsonb text), never
// by us. The guards of a table travel as one jsonb bind: [{set_key, keys, single}].

/** The name of the guard's primary key: a unique violation on it is a unique value taken concurrently. */
export const GUARD_CONSTRAINT = 'data_unique_values_pkey';

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

/** Forgets the record's guard rows. */
export async function clearRecordGuards(em: EntityManager, tableId: string, recordId: string): Promise<void> {
  await exec(em, 'delete from data_unique_values where record_id = ?::uuid and table_id = ?::uuid', [recordId, tableId]);
}

/** The record's guard values, from its stored row. */
export function recordGuardValues(em: EntityManager, guardsJson: string, recordId: string) {
  return many<{ set_key: string; value: string }>(em, guardValuesSql('r.id = ?::uuid'), [guardsJson, recordId]);
}

/** Which of the values another record of the table holds (by set_key). */
export function takenByOthers(em: EntityManager, tableId: string, recordId: string, setKeys: string[], values: string[]) {
  return many<{ set_key: string }>(
    em,
    `select g.set_key from data_unique_values g
       join unnest(?::text[], ?::text[]) as u(set_key, value) on g.set_key = u.set_key and g.value = u.value
      where g.table_id = ?::uuid and g.record_id <> ?::uuid`,
    [setKeys, values, tableId, recordId],
  );
}

/** The record's guard rows; a value taken meanwhile is skipped (answers the set_keys written). */
export function insertRecordGuards(em: EntityManager, tableId: string, recordId: string, setKeys: string[], values: string[]) {
  return many<{ set_key: string }>(
    em,
    `insert into data_unique_values (table_id, set_key, value, record_id)
     select ?::uuid, u.set_key, u.value, ?::uuid from unnest(?::text[], ?::text[]) as u(set_key, value)
     on conflict do nothing returning set_key`,
    [tableId, recordId, setKeys, values],
  );
}

/** Which guards `data` (a create's data, not yet stored) would collide on. */
export function takenByData(em: EntityManager, tableId: string, guardsJson: string, data: Record<string, unknown>) {
  return many<{ set_key: string }>(
    em,
    `select distinct v.set_key from (${guardValuesSql('true', '(select null::uuid as id, ?::jsonb as data) r')}) v
       join data_unique_values g on g.table_id = ?::uuid and g.set_key = v.set_key and g.value = v.value`,
    [guardsJson, JSON.stringify(data), tableId],
  );
}

/**
 * The guard rows of a create, as a statement over the rows `source` (a CTE with table_id, id and
 * data) for a create's single statement. No `on conflict`: a value a concurrent write took fails the
 * whole statement with the guard's unique violation, so nothing is written.
 */
export function insertGuardsSql(tableId: string, guardsJson: string, source: string): { sql: string; params: unknown[] } {
  return {
    sql: `insert into data_unique_values (table_id, set_key, value, record_id)
          select ?::uuid, v.set_key, v.value, v.record_id from (${guardValuesSql('true', `${source} r`)}) v
          returning set_key`,
    params: [tableId, guardsJson],
  };
}

/** One value two live records of the table share for the guard, if any. */
export function sharedGuardValue(em: EntityManager, tableId: string, guardsJson: string) {
  return many<{ value: string }>(
    em,
    `select value from (${guardValuesSql('r.table_id = ?::uuid and r.deleted_at is null')}) v group by value having count(*) > 1 limit 1`,
    [guardsJson, tableId],
  );
}

/** Guard rows for every live record of the table. */
export async function guardLiveRecords(em: EntityManager, tableId: string, guardsJson: string): Promise<void> {
  await exec(
    em,
    `insert into data_unique_values (table_id, set_key, value, record_id)
     select ?::uuid, v.set_key, v.value, v.record_id from (${guardValuesSql('r.table_id = ?::uuid and r.deleted_at is null')}) v`,
    [tableId, guardsJson, tableId],
  );
}

/** Forgets a guard of the table. */
export async function dropGuard(em: EntityManager, tableId: string, setKey: string): Promise<void> {
  await exec(em, 'delete from data_unique_values where table_id = ?::uuid and set_key = ?', [tableId, setKey]);
}
