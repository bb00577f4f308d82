// How one batch of import rows becomes contact writes. Pure: the activity loads the rows and the
// group's existing numbers, this decides, the activity writes the result in one transaction.
import { parseContact, type ContactFields } from './contacts.js';

export const PROBLEM_CAP = 200;
export const MAX_IMPORT_ROWS = 10_000;

export interface StagedRow {
  rowNo: number;
  line: number | null;
  data: unknown;
  note: string | null;
}
export interface RowProblem {
  row: number;
  line?: number;
  field: string;
  message: string;
}
export interface ContactWrite extends ContactFields {
  rowNo: number;
}

export interface BatchPlan {
  inserts: ContactWrite[];
  /** Keyed by the id of the existing contact the row replaces. */
  updates: Map<number, ContactWrite>;
  created: number;
  updated: number;
  failed: number;
  problems: RowProblem[];
}

/** A later row for the same number replaces the earlier one, except that an omitted is_subscribed keeps its value. */
const replace = (prev: ContactWrite | undefined, next: ContactWrite): ContactWrite => ({
  ...next,
  isSubscribed: next.isSubscribed ?? prev?.isSubscribed,
});

/**
 * Rows are judged by the same rules as a single create. A valid row whose full number matches a
 * contact already in the group (or an earlier row of the import) replaces it, as an update would;
 * rows without a number are always new contacts. `existing` maps full numbers to contact ids.
 */
export function planBatch(rows: StagedRow[], existing: ReadonlyMap<string, number>): BatchPlan {
  const plan: BatchPlan = { inserts: [], updates: new Map(), created: 0, updated: 0, failed: 0, problems: [] };
  const pendingInsert = new Map<string, number>();
  for (const r of rows) {
    const where = { row: r.rowNo, ...(r.line !== null ? { line: r.line } : {}) };
    const note = r.note ?? (isObject(r.data) ? null : 'The contact must be an object.');
    if (note !== null) {
      plan.failed += 1;
      plan.problems.push({ ...where, field: 'row', message: note });
      continue;
    }
    const parsed = parseContact(r.data as Record<string, unknown>);
    if (!parsed.ok) {
      plan.failed += 1;
      for (const [field, messages] of Object.entries(parsed.errors))
        for (const message of messages) plan.problems.push({ ...where, field, message });
      continue;
    }
    const write: ContactWrite = { ...parsed.contact, rowNo: r.rowNo };
    const key = write.phoneNumber === '' ? null : write.fullPhoneNumber;
    const existingId = key === null ? undefined : existing.get(key);
    if (key !== null && existingId !== undefined) {
      plan.updates.set(existingId, replace(plan.updates.get(existingId), write));
      plan.updated += 1;
    } else if (key !== null && pendingInsert.has(key)) {
      const idx = pendingInsert.get(key)!;
      plan.inserts[idx] = replace(plan.inserts[idx], write);
      plan.updated += 1;
    } else {
      if (key !== null) pendingInsert.set(key, plan.inserts.length);
      plan.inserts.push(write);
      plan.created += 1;
    }
  }
  return plan;
}

/** Numbers a batch needs looked up among the group's contacts. */
export function numbersToMatch(rows: StagedRow[]): string[] {
  const out = new Set<string>();
  for (const r of rows) {
    if (r.note !== null || !isObject(r.data)) continue;
    const parsed = parseContact(r.data as Record<string, unknown>);
    if (parsed.ok && parsed.contact.phoneNumber !== '') out.add(parsed.contact.fullPhoneNumber);
  }
  return [...out];
}

/** Appends problems up to the stored cap; reports whether some had to be left out. */
export function capProblems(storedCount: number, incoming: RowProblem[]): { keep: RowProblem[]; truncated: boolean } {
  const room = Math.max(0, PROBLEM_CAP - storedCount);
  return { keep: incoming.slice(0, room), truncated: incoming.length > room };
}

export const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
