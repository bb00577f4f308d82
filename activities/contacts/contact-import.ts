import { ApplicationFailure } from '@temporalio/activity';
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import {
  beginImport,
  completeImport,
  contactsByNumber,
  failImport,
  insertImportedContacts,
  lockImport,
  recordBatch,
  stagedRows,
  updateImportedContacts,
} from '../../services/contacts/store/imports.js';
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

const writeJson = (w: ContactWrite, extra: Record<string, unknown> = {}) => ({
  ...extra,
  name: w.name,
  country_code: w.countryCode,
  phone_number: w.phoneNumber,
  full_phone_number: w.fullPhoneNumber,
  is_subscribed: w.isSubscribed ?? null,
  custom_field_values: w.customFieldValues,
});

/**
 * One batch in one transaction: the contacts, the progress counters, the problems, the cursor
 * (processed_rows) and the removal of the staged rows commit together. A retry after a crash either
 * sees the batch done (cursor moved) or redoes it from scratch (rolled back): never twice.
 */
async function importBatch(em: EntityManager, importId: number, batchSize: number): Promise<BatchOutcome> {
  const imp = await lockImport(em, importId);
  if (!imp) return { state: 'gone', processed: 0, total: 0 };
  if (imp.processed_rows >= imp.total_rows) return { state: 'done', processed: imp.processed_rows, total: imp.total_rows };
  const staged = (await stagedRows(em, importId, imp.processed_rows, batchSize)).map((r): StagedRow => ({
    rowNo: r.row_no,
    line: r.line,
    data: r.data,
    note: r.note,
  }));
  if (staged.length === 0) throw ApplicationFailure.nonRetryable(`contact import ${importId} lost its staged rows`, 'ImportRowsMissing');

  const numbers = numbersToMatch(staged);
  const existing = numbers.length === 0 ? [] : await contactsByNumber(em, imp.group_id, numbers);
  const plan = planBatch(staged, new Map(existing.map((e) => [e.full_phone_number, Number(e.id)])));

  if (plan.inserts.length > 0) {
    await insertImportedContacts(
      em,
      imp.account_id,
      imp.group_id,
      JSON.stringify(plan.inserts.map((w, ord) => writeJson(w, { uid: newUid('ctc'), ord }))),
    );
  }
  if (plan.updates.size > 0) {
    await updateImportedContacts(em, imp.group_id, JSON.stringify([...plan.updates].map(([id, w]) => writeJson(w, { id }))));
  }
  const processed = staged[staged.length - 1].rowNo;
  const { keep, truncated } = capProblems(imp.problem_count, plan.problems);
  await recordBatch(em, importId, {
    processed,
    created: plan.created,
    updated: plan.updated,
    failed: plan.failed,
    problems: keep,
    truncated,
  });
  return { state: processed >= imp.total_rows ? 'done' : 'more', processed, total: imp.total_rows };
}

/** From the import's start to its finish, as the row records them (the same figure on a retried activity). */
const elapsedMs = (r: { started_at: Date | string | null; finished_at: Date | string | null }) =>
  r.started_at && r.finished_at ? new Date(r.finished_at).getTime() - new Date(r.started_at).getTime() : null;

export function createContactActivities(deps: ContactActivityDeps) {
  return {
    /** Marks the import running. Not found yet means the API has not committed it: retried, then given up by the workflow. */
    async beginContactImport(input: { importId: number }): Promise<void> {
      const row = await beginImport(deps.orm.em.fork(), input.importId);
      if (!row) throw ApplicationFailure.retryable(`contact import ${input.importId} is not visible`, 'ImportNotVisible');
      deps.log.info(
        { importId: input.importId, groupId: row.group_id, format: row.format, rows: row.total_rows },
        'contact import started',
      );
    },

    async processContactImportBatch(input: { importId: number; batchSize: number }): Promise<BatchOutcome> {
      const outcome = await deps.orm.em.fork().transactional((em) => importBatch(em, input.importId, input.batchSize));
      deps.log.debug({ importId: input.importId, ...outcome }, 'contact import batch');
      return outcome;
    },

    async finishContactImport(input: { importId: number }): Promise<ImportSummary | null> {
      const row = await completeImport(deps.orm.em.fork(), input.importId);
      if (row) deps.log.info({ importId: input.importId, ...importCounts(row), ms: elapsedMs(row) }, 'contact import finished');
      return row && importCounts(row);
    },

    async failContactImport(input: { importId: number; message: string }): Promise<void> {
      await failImport(deps.orm.em.fork(), input.importId, input.message);
      deps.log.warn({ importId: input.importId, reason: input.message }, 'contact import failed');
    },
  };
}

export type ContactActivities = ReturnType<typeof createContactActivities>;
