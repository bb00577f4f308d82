import type { EntityManager } from '@mikro-orm/postgresql';
import type { RequestContext } from '../platform/context.js';
import { DomainError } from '../platform/errors.js';
import { DATA_LIMITS, masksFor, type FieldType, type HistoryAction, type HistoryActor } from '../../domain/data/index.js';
import { maskValue } from '../../domain/data/masks.js';
import { dataNotFound, isUuid, loadTable, type LoadedTable } from './tables.js';
import { recordEverHeld } from './store/records.js';
import { historyPage, insertHistory } from './store/history.js';

// Record history (Resources > Data table, History entry): one row per write, in the write's
// transaction. A row keeps {column: {before, after}} for the fields the write changed; a create
// lists every value it stored (before null), a delete every value the record held (after null). A
// PATCH that moves a status field is written as action `status_transition` (its `changed` still
// lists every field that write changed), so a status history can be read from the action alone.

export type Changes = Record<string, { before: unknown; after: unknown }>;

/** Who wrote, for the entry's `actor`: kind and ids, never a secret. */
export function historyActor(rc: RequestContext): HistoryActor {
  const a = rc.actor;
  switch (a.kind) {
    case 'api_key':
    case 'mcp_credential':
      return { kind: a.kind, key_id: a.key.id, name: a.key.name, user_id: a.issuer?.id ?? a.key.user_id ?? null };
    case 'oauth_client':
      return { kind: a.kind, client_id: a.clientId, user_id: a.issuer.id };
    case 'operator':
      return { kind: 'operator' };
    case 'system':
      return { kind: 'system', name: a.process };
  }
}

/** The changes between two stored data objects, for `keys`. */
export function changesOf(keys: readonly string[], before: Record<string, unknown>, after: Record<string, unknown>): Changes {
  const out: Changes = {};
  for (const k of keys) out[k] = { before: before[k] ?? null, after: after[k] ?? null };
  return out;
}

export async function writeHistory(
  em: EntityManager,
  rc: RequestContext,
  t: LoadedTable,
  entry: { recordId: string; action: HistoryAction; changes: Changes; source: string },
): Promise<void> {
  await insertHistory(em, {
    accountId: rc.account.id,
    tableId: t.table.id,
    recordId: entry.recordId,
    action: entry.action,
    changes: entry.changes,
    actor: historyActor(rc),
    source: entry.source,
  });
}

// `before` / `next_before`: opaque to clients, the entry id underneath (h1.<id> in base64url).
const encodeBefore = (id: string) => Buffer.from(`h1.${id}`).toString('base64url');
function decodeBefore(s: string): string {
  const m = /^[A-Za-z0-9_-]{1,40}$/.test(s) ? /^h1\.([1-9]\d{0,18})$/.exec(Buffer.from(s, 'base64url').toString()) : null;
  if (!m || BigInt(m[1]) > 9_223_372_036_854_775_807n)
    throw new DomainError('invalid', 'The before cursor is not one this service gave out: pass next_before back unchanged.', {
      field: 'before',
      errors: { before: ['The before cursor is invalid.'] },
    });
  return m[1];
}

export type HistoryEntryView = {
  id: string;
  record: string;
  action: HistoryAction;
  changed: string[];
  before: Record<string, unknown>;
  after: Record<string, unknown>;
  actor: HistoryActor;
  source: string;
  reason: string | null;
  created_at: string;
};

/**
 * A record's history, newest first, at most 50 a page; readable after the record was deleted
 * (only a record id this table never held is 404). Masks apply to before and after values as to
 * the record itself.
 */
export async function recordHistory(
  rc: RequestContext,
  tableRef: string,
  recordRef: string,
  before?: string,
): Promise<{
  entries: HistoryEntryView[];
  has_more: boolean;
  next_before: string | null;
  columns: { key: string; label: string; type: FieldType }[];
}> {
  const t = await loadTable(rc, tableRef);
  if (!isUuid(recordRef)) throw dataNotFound('Record');
  const beforeId = before === undefined || before === '' ? null : decodeBefore(before);
  if (!(await recordEverHeld(rc.em, rc.account.id, t.table.id, recordRef))) throw dataNotFound('Record');
  const page = DATA_LIMITS.historyPage;
  const rows = await historyPage(rc.em, rc.account.id, t.table.id, recordRef, beforeId, page + 1);
  const more = rows.length > page;
  const shown = rows.slice(0, page);
  const masks = masksFor(t.table.masks, t.caller);
  const masked = (k: string, v: unknown) => {
    const m = masks.get(k);
    return m ? maskValue(m.style, v) : v;
  };
  const order = new Map(t.columns.map((c, i) => [c.key, i]));
  const entries = shown.map((r): HistoryEntryView => {
    // Column order, then keys of columns dropped since (by name).
    const changed = Object.keys(r.changes).sort((a, b) => (order.get(a) ?? Infinity) - (order.get(b) ?? Infinity) || a.localeCompare(b));
    return {
      id: r.id,
      record: r.record_id,
      action: r.action,
      changed,
      before: Object.fromEntries(changed.map((k) => [k, masked(k, r.changes[k].before)])),
      after: Object.fromEntries(changed.map((k) => [k, masked(k, r.changes[k].after)])),
      actor: r.actor,
      source: r.source,
      reason: r.reason,
      created_at: new Date(r.created_at).toISOString(),
    };
  });
  return {
    entries,
    has_more: more,
    next_before: more ? encodeBefore(shown[shown.length - 1].id) : null,
    columns: t.columns.map((c) => ({ key: c.key, label: c.label, type: c.type })),
  };
}
