import type { RequestContext } from '../platform/context.js';
import type { ReportDefinition } from '../../domain/data/index.js';
import { columnLabels } from './store/definitions.js';
import { accountGroups, groupOf, type DataGroupRow } from './store/groups.js';
import { dataNotFound, isUuid, namedProperties, visibleTables, type TableRow } from './tables.js';
import { iso } from '../platform/time.js';

// Data groups as an account reads them (GET /data/groups, /data/groups/{group}): an operator's
// arrangement of tables and saved reports. A caller sees a group only through the tables it may
// see: member tables it may not see are left out everywhere (counts, tables, reports), and a group
// none of whose tables it may see is not listed and not found.

/** A group with the member tables and reports this caller may see, in the group's order. */
export interface VisibleGroup {
  group: DataGroupRow;
  tables: TableRow[];
  reports: ReportDefinition[];
}

function visiblePart(group: DataGroupRow, visible: Map<string, TableRow>): VisibleGroup {
  const tables = (group.table_ids ?? []).map((id) => visible.get(id)).filter((t): t is TableRow => t !== undefined);
  const ids = new Set(tables.map((t) => t.id));
  return { group, tables, reports: (group.reports ?? []).filter((r) => ids.has(r.table_id)) };
}

export const groupObjectSchema = {
  type: 'object',
  required: ['id', 'name', 'slug', 'tables_count', 'reports_count', 'updated_at'],
  properties: {
    ...namedProperties,
    tables_count: { type: 'integer', description: 'member tables this caller may see' },
    reports_count: { type: 'integer', description: 'saved reports over those tables' },
    created_at: { type: 'string', format: 'date-time' },
    updated_at: { type: 'string', format: 'date-time' },
  },
} as const;

export function groupObject(v: VisibleGroup) {
  const g = v.group;
  return {
    id: g.id,
    name: g.name,
    slug: g.slug,
    description: g.description,
    icon: g.icon,
    tables_count: v.tables.length,
    reports_count: v.reports.length,
    created_at: iso(g.created_at),
    updated_at: iso(g.updated_at),
  };
}

export async function listGroups(rc: RequestContext) {
  const visible = new Map((await visibleTables(rc)).map((t) => [t.id, t]));
  const groups = await accountGroups(rc.em, rc.account.id);
  return {
    groups: groups
      .map((g) => visiblePart(g, visible))
      .filter((v) => v.tables.length > 0)
      .map(groupObject),
  };
}

/** The caller's group by UUID: another account's, an unknown one or one with no table the caller sees is not found. */
export async function loadGroup(rc: RequestContext, ref: string): Promise<VisibleGroup> {
  if (!isUuid(ref)) throw dataNotFound('Group');
  const group = await groupOf(rc.em, rc.account.id, ref, true);
  if (!group) throw dataNotFound('Group');
  const visible = new Map((await visibleTables(rc)).map((t) => [t.id, t]));
  const v = visiblePart(group, visible);
  if (!v.tables.length) throw dataNotFound('Group');
  return v;
}

export const groupAnswerSchema = {
  type: 'object',
  required: ['group', 'tables', 'reports'],
  properties: {
    group: groupObjectSchema,
    tables: {
      type: 'array',
      items: {
        type: 'object',
        required: ['id', 'name', 'slug', 'columns'],
        properties: {
          id: { type: 'string', format: 'uuid' },
          name: { type: 'string' },
          slug: { type: 'string' },
          description: { type: ['string', 'null'] },
          icon: { type: ['string', 'null'] },
          records_count: { type: 'integer' },
          columns: {
            type: 'array',
            items: { type: 'object', properties: { key: { type: 'string' }, label: { type: 'string' }, type: { type: 'string' } } },
          },
        },
      },
    },
    reports: {
      type: 'array',
      description: 'saved report summaries over the member tables this caller may see',
      items: {
        type: 'object',
        required: ['key', 'name', 'table_id', 'measure'],
        properties: {
          key: { type: 'string' },
          name: { type: 'string' },
          table_id: { type: 'string', format: 'uuid' },
          measure: { enum: ['count', 'sum', 'avg'] },
          column: { type: ['string', 'null'] },
          date_column: { type: ['string', 'null'] },
        },
      },
    },
  },
} as const;

export async function getGroup(rc: RequestContext, ref: string) {
  const v = await loadGroup(rc, ref);
  const ids = v.tables.map((t) => t.id);
  const columns = await columnLabels(rc.em, ids);
  return {
    group: groupObject(v),
    tables: v.tables.map((t) => ({
      id: t.id,
      name: t.name,
      slug: t.slug,
      description: t.description,
      icon: t.icon,
      records_count: t.records_count,
      columns: columns.filter((c) => c.table_id === t.id).map((c) => ({ key: c.key, label: c.label, type: c.type })),
    })),
    reports: v.reports.map((r) => ({
      key: r.key,
      name: r.name,
      table_id: r.table_id,
      measure: r.measure,
      column: r.column ?? null,
      date_column: r.date_column ?? null,
    })),
  };
}
