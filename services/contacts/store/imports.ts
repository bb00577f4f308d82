import type { EntityManager } from '@mikro-orm/postgresql';
import { exec, many, one } from '../../../entities/db.js';
import type { Row } from '../../../entities/database.js';

// Bulk imports: the import's progress row, its staged rows, and the batches that write contacts.
// A batch's statements run in one transaction, so `processed_rows` is also the resume cursor.

type ImportRecord = Row<'contacts', 'contact_imports'>;

/** An import as its view shows it (the group's uid is added by the caller). */
export type ImportRow = Pick<
  ImportRecord,
  | 'id'
  | 'group_id'
  | 'format'
  | 'status'
  | 'total_rows'
  | 'processed_rows'
  | 'created_count'
  | 'updated_count'
  | 'failed_count'
  | 'problems'
  | 'problems_truncated'
  | 'error_message'
  | 'created_at'
  | 'updated_at'
  | 'started_at'
  | 'finished_at'
>;

const COLUMNS =
  'id, group_id, format, status, total_rows, processed_rows, created_count, updated_count, failed_count, problems, problems_truncated, ' +
  'error_message, created_at, updated_at, started_at, finished_at';

/** A new import, queued, with its rows staged (`rows`: JSON entries of data, line and note, in order). */
export async function insertImport(em: EntityManager, accountId: number, groupId: number, format: 'json' | 'csv', rows: unknown[]) {
  const imp = (await one<ImportRow>(
    em,
    `insert into contact_imports (account_id, group_id, format, status, total_rows, problems, created_at, updated_at)
       values (?, ?, ?, 'queued', ?, '[]'::jsonb, now(), now()) returning ${COLUMNS}`,
    [accountId, groupId, format, rows.length],
  ))!;
  await exec(
    em,
    `insert into contact_import_rows (import_id, row_no, line, data, note)
       select ?, t.ord, (t.value->>'line')::int, t.value->'data', t.value->>'note' from jsonb_array_elements(?::jsonb) with ordinality as t(value, ord)`,
    [imp.id, JSON.stringify(rows)],
  );
  return imp;
}

export const groupImport = (em: EntityManager, accountId: number, groupId: number, id: number) =>
  one<ImportRow>(em, `select ${COLUMNS} from contact_imports where account_id = ? and group_id = ? and id = ?`, [accountId, groupId, id]);

/** The import locked for its next batch, with how many problems it holds. */
export const lockImport = (em: EntityManager, id: number) =>
  one<Pick<ImportRecord, 'account_id' | 'group_id' | 'processed_rows' | 'total_rows'> & { problem_count: number }>(
    em,
    `select account_id, group_id, processed_rows, total_rows, jsonb_array_length(problems) as problem_count
       from contact_imports where id = ? for update`,
    [id],
  );

/** Up to `limit` staged rows after row `afterRow`, in order. */
export const stagedRows = (em: EntityManager, importId: number, afterRow: number, limit: number) =>
  many<Pick<Row<'contacts', 'contact_import_rows'>, 'row_no' | 'line' | 'data' | 'note'>>(
    em,
    'select row_no, line, data, note from contact_import_rows where import_id = ? and row_no > ? order by row_no limit ?',
    [importId, afterRow, limit],
  );

/** The group's contacts with these full numbers (the lowest id per number), ignoring contacts without a national number. */
export const contactsByNumber = (em: EntityManager, groupId: number, numbers: string[]) =>
  many<Pick<Row<'contacts', 'contacts'>, 'id' | 'full_phone_number'>>(
    em,
    `select distinct on (full_phone_number) id, full_phone_number from contacts
      where group_id = ? and phone_number <> '' and full_phone_number in (select jsonb_array_elements_text(?::jsonb))
      order by full_phone_number, id`,
    [groupId, JSON.stringify(numbers)],
  );

const WRITE_COLUMNS =
  'name text, country_code text, phone_number text, full_phone_number text, is_subscribed boolean, custom_field_values jsonb';

/** New contacts of the group, in order (`contacts`: JSON entries of uid, ord and the written fields). */
export const insertImportedContacts = (em: EntityManager, accountId: number, groupId: number, contacts: string) =>
  exec(
    em,
    `insert into contacts (uid, account_id, group_id, name, country_code, phone_number, full_phone_number, is_subscribed, custom_field_values, created_at, updated_at)
       select v.uid, ?, ?, v.name, v.country_code, v.phone_number, v.full_phone_number, coalesce(v.is_subscribed, true), v.custom_field_values, now(), now()
         from jsonb_to_recordset(?::jsonb) as v(uid text, ord int, ${WRITE_COLUMNS}) order by v.ord`,
    [accountId, groupId, contacts],
  );

/** Replaces matched contacts of the group (`contacts`: JSON entries of id and the written fields). */
export const updateImportedContacts = (em: EntityManager, groupId: number, contacts: string) =>
  exec(
    em,
    `update contacts c set name = v.name, country_code = v.country_code, phone_number = v.phone_number, full_phone_number = v.full_phone_number,
              is_subscribed = coalesce(v.is_subscribed, c.is_subscribed), custom_field_values = v.custom_field_values, updated_at = now()
         from jsonb_to_recordset(?::jsonb) as v(id bigint, ${WRITE_COLUMNS}) where c.id = v.id and c.group_id = ?`,
    [contacts, groupId],
  );

/** Moves the cursor past a batch, adds its counts and problems, and drops its staged rows. */
export async function recordBatch(
  em: EntityManager,
  importId: number,
  b: { processed: number; created: number; updated: number; failed: number; problems: unknown[]; truncated: boolean },
) {
  await exec(
    em,
    `update contact_imports set processed_rows = ?, created_count = created_count + ?, updated_count = updated_count + ?, failed_count = failed_count + ?,
            problems = problems || ?::jsonb, problems_truncated = problems_truncated or ?, status = 'running', updated_at = now()
      where id = ?`,
    [b.processed, b.created, b.updated, b.failed, JSON.stringify(b.problems), b.truncated, importId],
  );
  await exec(em, 'delete from contact_import_rows where import_id = ? and row_no <= ?', [importId, b.processed]);
}

/** Marks the import running (once); null when it is not there. */
export const beginImport = (em: EntityManager, id: number) =>
  one<Pick<ImportRecord, 'id' | 'group_id' | 'format' | 'total_rows'>>(
    em,
    `update contact_imports set status = case when status = 'queued' then 'running' else status end,
                started_at = coalesce(started_at, now()), updated_at = now() where id = ? returning id, group_id, format, total_rows`,
    [id],
  );

/** Completes the import unless it failed; answers it as it stands, or null. */
export const completeImport = (em: EntityManager, id: number) =>
  one<ImportRow>(
    em,
    `update contact_imports set status = 'completed', finished_at = coalesce(finished_at, now()), updated_at = now()
          where id = ? and status <> 'failed' returning ${COLUMNS}`,
    [id],
  );

/** Fails the import unless it completed. */
export const failImport = (em: EntityManager, id: number, message: string) =>
  exec(
    em,
    `update contact_imports set status = 'failed', error_message = ?, finished_at = coalesce(finished_at, now()), updated_at = now()
          where id = ? and status <> 'completed'`,
    [message, id],
  );
