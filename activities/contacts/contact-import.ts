import { ApplicationFailure } from '@temporalio/activity';
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import { exec, many, one } from '../../entities/db.js';
import { planBatch, numbersToMatch, capProblems, type StagedRow, type ContactWrite } from '../../domain/contacts/contact-import.js';
import { newUid } from '../../services/platform/ids.js';
import { importCounts } from '../../services/contacts/contact-view.js';
import type { Logger } from '../../logger.js';

export interface ContactActivityDeps {
  orm: MikroORM;
  log: Logger;
}
export interface BatchOutcome {
  state: 'more' | 'done' | 'gone';
  processed: number;
  total: number;
}
/** What the import workflow ends with: the import's counts, as its view shows them. */
export type ImportSummary = ReturnType<typeof importCounts>;

interface ImportLock {
  account_id: number;
  group_id: number;
  processed_rows: number;
  total_rows: number;
  problem_count: number;
}

const writeJson = (w: ContactWrite, extra: Record<string, unknown> = {}) => ({
  ...extra,
  name: w.name,
  country_code: w.countryCode,
  phone_number: w.phoneNumber,
  full_phone_number: w.fullPhoneNumber,
  is_subscribed: w.isSubscribed ?? null,
  custom_field_values: w.customFieldValues,
});
const COLUMNS = 'name text, country_code text, phone_number text, full_phone_number text, is_subscribed boolean, custom_field_values jsonb';

/**
 * One batch in one transaction: the contacts, the progress counters, the problems, the cursor
 * (processed_rows) and the removal of the staged rows commit together. A retry after a crash either
 * sees the batch done (cursor moved) or redoes it from scratch (rolled back): never twice.
 */
async function importBatch(em: EntityManager, importId: number, batchSize: number): Promise<BatchOutcome> {
  const imp = await one<ImportLock>(
    em,
    `select account_id, group_id, processed_rows, total_rows, jsonb_array_length(problems) as problem_count
       from contact_imports where id = ? for update`,
    [importId],
  );
  if (!imp) return { state: 'gone', processed: 0, total: 0 };
  if (imp.processed_rows >= imp.total_rows) return { state: 'done', processed: imp.processed_rows, total: imp.total_rows };
  const staged = (
    await many<{ row_no: number; line: number | null; data: unknown; note: string | null }>(
      em,
      'select row_no, line, data, note from contact_import_rows where import_id = ? and row_no > ? order by row_no limit ?',
      [importId, imp.processed_rows, batchSize],
    )
  ).map((r): StagedRow => ({ rowNo: r.row_no, line: r.line, data: r.data, note: r.note }));
  if (staged.length === 0) throw ApplicationFailure.nonRetryable(`contact import ${importId} lost its staged rows`, 'ImportRowsMissing');

  const numbers = numbersToMatch(staged);
  const existing =
    numbers.length === 0
      ? []
      : await many<{ id: string; full_phone_number: string }>(
          em,
          `select distinct on (full_phone_number) id, full_phone_number from contacts
      where group_id = ? and phone_number <> '' and full_phone_number in (select jsonb_array_elements_text(?::jsonb))
      order by full_phone_number, id`,
          [imp.group_id, JSON.stringify(numbers)],
        );
  const plan = planBatch(staged, new Map(existing.map((e) => [e.full_phone_number, Number(e.id)])));

  if (plan.inserts.length > 0) {
    await exec(
      em,
      `insert into contacts (uid, account_id, group_id, name, country_code, phone_number, full_phone_number, is_subscribed, custom_field_values, created_at, updated_at)
       select v.uid, ?, ?, v.name, v.country_code, v.phone_number, v.full_phone_number, coalesce(v.is_subscribed, true), v.custom_field_values, now(), now()
         from jsonb_to_recordset(?::jsonb) as v(uid text, ord int, ${COLUMNS}) order by v.ord`,
      [imp.account_id, imp.group_id, JSON.stringify(plan.inserts.map((w, ord) => writeJson(w, { uid: newUid('ctc'), ord })))],
    );
  }
  if (plan.updates.size > 0) {
    await exec(
      em,
      `update contacts c set name = v.name, country_code = v.country_code, phone_number = v.phone_number, full_phone_number = v.full_phone_number,
              is_subscribed = coalesce(v.is_subscribed, c.is_subscribed), custom_field_values = v.custom_field_values, updated_at = now()
         from jsonb_to_recordset(?::jsonb) as v(id bigint, ${COLUMNS}) where c.id = v.id and c.group_id = ?`,
      [JSON.stringify([...plan.updates].map(([id, w]) => writeJson(w, { id }))), imp.group_id],
    );
  }
  const processed = staged[staged.length - 1].rowNo;
  const { keep, truncated } = capProblems(imp.problem_count, plan.problems);
  await exec(
    em,
    `update contact_imports set processed_rows = ?, created_count = created_count + ?, updated_count = updated_count + ?, failed_count = failed_count + ?,
            problems = problems || ?::jsonb, problems_truncated = problems_truncated or ?, status = 'running', updated_at = now()
      where id = ?`,
    [processed, plan.created, plan.updated, plan.failed, JSON.stringify(keep), truncated, importId],
  );
  await exec(em, 'delete from contact_import_rows where import_id = ? and row_no <= ?', [importId, processed]);
  return { state: processed >= imp.total_rows ? 'done' : 'more', processed, total: imp.total_rows };
}

export function createContactActivities(deps: ContactActivityDeps) {
  return {
    /** Marks the import running. Not found yet means the API has not committed it: retried, then given up by the workflow. */
    async beginContactImport(input: { importId: number }): Promise<void> {
      const row = await one(
        deps.orm.em.fork(),
        `update contact_imports set status = case when status = 'queued' then 'running' else status end,
                started_at = coalesce(started_at, now()), updated_at = now() where id = ? returning id`,
        [input.importId],
      );
      if (!row) throw ApplicationFailure.retryable(`contact import ${input.importId} is not visible`, 'ImportNotVisible');
    },

    async processContactImportBatch(input: { importId: number; batchSize: number }): Promise<BatchOutcome> {
      const outcome = await deps.orm.em.fork().transactional((em) => importBatch(em, input.importId, input.batchSize));
      deps.log.debug({ importId: input.importId, ...outcome }, 'contact import batch');
      return outcome;
    },

    async finishContactImport(input: { importId: number }): Promise<ImportSummary | null> {
      const row = await one<Parameters<typeof importCounts>[0]>(
        deps.orm.em.fork(),
        `update contact_imports set status = 'completed', finished_at = coalesce(finished_at, now()), updated_at = now()
          where id = ? and status <> 'failed' returning *`,
        [input.importId],
      );
      return row && importCounts(row);
    },

    async failContactImport(input: { importId: number; message: string }): Promise<void> {
      await exec(
        deps.orm.em.fork(),
        `update contact_imports set status = 'failed', error_message = ?, finished_at = coalesce(finished_at, now()), updated_at = now()
          where id = ? and status <> 'completed'`,
        [input.message, input.importId],
      );
    },
  };
}

export type ContactActivities = ReturnType<typeof createContactActivities>;
