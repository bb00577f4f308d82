import { proxyActivities, continueAsNew, workflowInfo, defineQuery, setHandler, ActivityFailure, log } from '@temporalio/workflow';
import type { ContactActivities } from '../../activities/contacts/contact-import.js';

export interface ContactImportInput {
  accountId: number;
  importId: number;
  batchSize: number;
}

export interface ContactImportState {
  phase: 'starting' | 'importing' | 'completed' | 'failed' | 'abandoned';
  processed: number;
  total: number;
  /** Batches written by this run (continue-as-new starts a fresh count). */
  batches: number;
}

export const importStateQuery = defineQuery<ContactImportState>('state');

// A batch is one short transaction; a worker that dies holding one is noticed after this timeout.
const db = proxyActivities<ContactActivities>({
  startToCloseTimeout: '15 seconds',
  retry: { initialInterval: '500 milliseconds', backoffCoefficient: 2, maximumInterval: '30 seconds', maximumAttempts: 20 },
});
// The API starts this workflow just before it commits the import, so the first read may come too
// early; a short retry covers that, and an import that never appears was rolled back.
const begin = proxyActivities<ContactActivities>({
  startToCloseTimeout: '10 seconds',
  retry: { initialInterval: '200 milliseconds', backoffCoefficient: 2, maximumInterval: '10 seconds', maximumAttempts: 10 },
});

// Each batch adds six events; starting afresh after 50 keeps every run near 300 events. With the
// default batch of 500 rows an import (at most 10,000 rows) fits one run; small batches continue.
const BATCHES_PER_RUN = 50;

/**
 * A bulk contact import: batches of staged rows are written by an activity that moves the import's
 * cursor in the same transaction, so the workflow only loops until the cursor reaches the end.
 * Progress lives in contact_imports (the API reads it there); the query mirrors it for operators.
 */
export async function contactImportWorkflow(input: ContactImportInput): Promise<ContactImportState> {
  const state: ContactImportState = { phase: 'starting', processed: 0, total: 0, batches: 0 };
  setHandler(importStateQuery, () => state);
  try {
    await begin.beginContactImport({ importId: input.importId });
  } catch (err) {
    if (!(err instanceof ActivityFailure)) throw err;
    log.warn('contact import never became visible', { importId: input.importId });
    state.phase = 'abandoned';
    return state;
  }

  state.phase = 'importing';
  try {
    for (;;) {
      const out = await db.processContactImportBatch({ importId: input.importId, batchSize: input.batchSize });
      state.batches += 1;
      state.processed = out.processed;
      state.total = out.total;
      if (out.state === 'gone') {
        // The group (and with it the import) was deleted while importing.
        state.phase = 'abandoned';
        return state;
      }
      if (out.state === 'done') break;
      if (state.batches >= BATCHES_PER_RUN || workflowInfo().continueAsNewSuggested)
        await continueAsNew<typeof contactImportWorkflow>(input);
    }
  } catch (err) {
    if (!(err instanceof ActivityFailure)) throw err;
    log.error('contact import failed', { importId: input.importId, reason: err.cause?.message ?? err.message });
    await db.failContactImport({
      importId: input.importId,
      message: 'The import stopped before the end; rows after the processed count were not imported.',
    });
    state.phase = 'failed';
    return state;
  }
  await db.finishContactImport({ importId: input.importId });
  state.phase = 'completed';
  return state;
}
