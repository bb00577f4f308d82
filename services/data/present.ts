import type { RequestContext } from '../platform/context.js';
import { canViewTable, masksFor } from '../../domain/data/index.js';
import { maskData, maskedTitle, titleColumn } from '../../domain/data/masks.js';
import type { LoadedTable } from './tables.js';
import { relatedTitles, type StoredRecord } from './store/records.js';
import { iso } from '../platform/time.js';

// How a record leaves the service (Resources > Data table, Record): data keys in column order,
// field masks applied for the caller to values and titles, the title and, for relations, a titles map.

export type RecordView = {
  id: string;
  data: Record<string, unknown>;
  source: string;
  created_at: string;
  updated_at: string;
  title: string | null;
  /** relation values' titles, by related record id (masked as the related table's masks say). */
  titles?: Record<string, string | null>;
};

/** The related records' titles of a page: { related id → title as this caller may see it }. */
async function relationTitles(
  rc: RequestContext,
  t: LoadedTable,
  rows: StoredRecord[],
  unmaskedRelations: { key: string; tableId: string }[],
): Promise<Map<string, string | null>> {
  const wanted = new Map<string, string>(); // related id → the table it must be in
  for (const r of rows)
    for (const rel of unmaskedRelations) {
      const id = r.data[rel.key];
      if (typeof id === 'string') wanted.set(id, rel.tableId);
    }
  const out = new Map<string, string | null>();
  if (!wanted.size) return out;
  // One query for the whole page: each related record's title value, with its table's title
  // column, masks and access (a title of a record in a table the caller cannot see stays null).
  const found = await relatedTitles(rc.em, rc.account.id, [...wanted.keys()]);
  for (const f of found) {
    if (wanted.get(f.id) !== f.table_id || !canViewTable(f.access, t.caller)) continue;
    const mask = f.title_key ? masksFor(f.masks, t.caller).get(f.title_key) : undefined;
    out.set(f.id, maskedTitle(f.value, mask));
  }
  return out;
}

/** Records as this caller may see them (one query for every relation title on the page, never one per row). */
export async function presentRecords(rc: RequestContext, t: LoadedTable, rows: StoredRecord[]): Promise<RecordView[]> {
  const masks = masksFor(t.table.masks, t.caller);
  const titleKey = titleColumn(t.table.title_column, t.columns);
  const relations = t.columns.filter((c) => c.type === 'relation');
  // A masked relation shows no id, so it gets no title either.
  const unmasked = relations
    .filter((c) => !masks.has(c.key) && c.config.table_id)
    .map((c) => ({ key: c.key, tableId: c.config.table_id! }));
  const titles = await relationTitles(rc, t, rows, unmasked);
  return rows.map((r) => {
    const data: Record<string, unknown> = {};
    for (const c of t.columns) if (c.key in r.data) data[c.key] = r.data[c.key];
    const view: RecordView = {
      id: r.id,
      data: maskData(data, masks),
      source: r.source,
      created_at: iso(r.created_at),
      updated_at: iso(r.updated_at),
      title: titleKey ? maskedTitle(r.data[titleKey], masks.get(titleKey)) : null,
    };
    if (relations.length) {
      const map: Record<string, string | null> = {};
      for (const rel of unmasked) {
        const id = r.data[rel.key];
        if (typeof id === 'string') map[id] = titles.get(id) ?? null;
      }
      view.titles = map;
    }
    return view;
  });
}

export async function presentRecord(rc: RequestContext, t: LoadedTable, row: StoredRecord): Promise<RecordView> {
  return (await presentRecords(rc, t, [row]))[0];
}
