import type { Client } from '@temporalio/client';
import { groupImport, insertImport } from './store/imports.js';
import { notFound, validationFailed } from '../platform/errors.js';
import type { RequestContext } from '../platform/context.js';
import type { Config } from '../../config.js';
import { csvToObjects, CsvError } from './csv.js';
import { MAX_IMPORT_ROWS, isObject } from '../../domain/contacts/contact-import.js';
import { startWorkflow } from '../../temporal/starters.js';
import type { ContactImportInput } from '../../workflows/contacts/contact-import.js';
import { contactImportStarter } from '../../workflows/contacts/contact-import.starter.js';
import { resolveGroup } from './contact-groups.js';
import type { ImportRequest } from './contact-schemas.js';
import { importView } from './contact-view.js';

export interface ImportServiceDeps {
  temporal: Client;
  config: Config;
}

interface Staged {
  data: unknown;
  line?: number;
  note?: string;
}

/** The request's rows as they will be staged: JSON entries as sent, CSV records keyed by the header. */
export function stageRows(input: ImportRequest): { format: 'json' | 'csv'; rows: Staged[] } {
  const format = input.format ?? (input.csv !== undefined ? 'csv' : 'json');
  if (input.csv !== undefined && input.contacts !== undefined)
    throw validationFailed({ contacts: ['Send either contacts or csv, not both.'] });
  if (format === 'json') {
    if (input.contacts === undefined) throw validationFailed({ contacts: ['The contacts field is required.'] });
    return { format, rows: input.contacts.map((c) => (isObject(c) ? { data: c } : { data: {}, note: 'The contact must be an object.' })) };
  }
  if (input.csv === undefined) throw validationFailed({ csv: ['The csv field is required when format is csv.'] });
  let table;
  try {
    table = csvToObjects(input.csv);
  } catch (err) {
    if (err instanceof CsvError) throw validationFailed({ csv: [`The CSV could not be read: ${err.message}.`] });
    throw err;
  }
  if (!table.header.includes('PHONE') && !table.header.includes('phone_number')) {
    throw validationFailed({ csv: ['The CSV header must name a PHONE or phone_number column.'] });
  }
  if (table.rows.length === 0) throw validationFailed({ csv: ['The CSV has no contact rows.'] });
  if (table.rows.length > MAX_IMPORT_ROWS)
    throw validationFailed({ csv: [`The CSV may not have more than ${MAX_IMPORT_ROWS} contact rows.`] });
  return {
    format,
    rows: table.rows.map((r) => ({
      data: r.values,
      line: r.line,
      ...(r.extraCells ? { note: 'The row has more cells than the header.' } : {}),
    })),
  };
}

/**
 * Stages the rows and starts the import workflow inside one transaction: if the start fails nothing
 * is kept, and if the commit fails the workflow finds no import and ends. Either the caller gets
 * 202 and the import runs, or it gets an error and nothing happened.
 */
export async function createImport(rc: RequestContext, deps: ImportServiceDeps, groupRef: string, input: ImportRequest) {
  const group = await resolveGroup(rc, groupRef);
  const { format, rows } = stageRows(input);
  const row = await rc.em.transactional(async (em) => {
    const imp = await insertImport(em, rc.account.id, group.id, format, rows);
    await startImportWorkflow(deps, rc.account.id, Number(imp.id));
    return imp;
  });
  return importView({ ...row, group_uid: group.uid });
}

async function startImportWorkflow(deps: ImportServiceDeps, accountId: number, importId: number) {
  const input: ContactImportInput = { accountId, importId, batchSize: deps.config.contactImportBatchSize };
  await startWorkflow(deps, contactImportStarter, { accountId, importId }, [input]);
}

export async function getImport(rc: RequestContext, groupRef: string, importRef: string) {
  const group = await resolveGroup(rc, groupRef);
  const row = /^\d{1,18}$/.test(importRef) ? await groupImport(rc.em, rc.account.id, group.id, Number(importRef)) : null;
  if (!row) throw notFound('Contact import');
  return importView({ ...row, group_uid: group.uid });
}
