import { DATA_LIMITS, type FieldType } from './vocabulary.js';
import type { ColumnDef, FieldMask, StatusField, TableAccess, TableQuotas, TableRetention, UniqueSet } from './definitions.js';
import { KEY, NAME_MAX, NOT_UNIQUE, isInt, labelOf, validPermission, type AccountFacts, type Problems } from './definition-rules.js';

// A table's settings as an operator defines them, checked against the table's columns: title
// column, retention, grants, masks, status fields, unique sets and quotas. Pure: the account's
// users come in as facts.

/** Table settings as a request gives them (shapes checked by the schema, meaning checked here). */
export interface TableSettings {
  name?: string;
  slug?: string;
  description?: string | null;
  icon?: string | null;
  title_column?: string | null;
  retention?: { history_days?: number | null; deleted_records_days?: number | null };
  legal_hold?: boolean;
  access?: { view?: { permissions?: string[]; users?: number[] }; write?: { permissions?: string[]; users?: number[] } };
  masks?: { column: string; unless_permission: string; style: string }[];
  status_fields?: {
    column: string;
    label?: string;
    required?: boolean;
    strict?: boolean;
    initial?: string[];
    moves?: { from: string; to: string; permission?: string | null }[];
  }[];
  unique_sets?: { key: string; columns: string[] }[];
  quotas?: Partial<TableQuotas>;
}

const TITLE_TYPES: readonly FieldType[] = ['text', 'long_text', 'email', 'phone'];

/** The settings a table keeps, from the stored ones (or the defaults) with the request's applied. */
export interface Settings {
  title_column: string | null;
  retention: TableRetention;
  access: TableAccess;
  masks: FieldMask[];
  status_fields: StatusField[];
  unique_sets: UniqueSet[];
  quotas: TableQuotas;
}

export const DEFAULT_SETTINGS: Settings = {
  title_column: null,
  retention: { history_days: null, deleted_records_days: null },
  access: { view: { permissions: [], users: [] }, write: { permissions: [], users: [] } },
  masks: [],
  status_fields: [],
  unique_sets: [],
  quotas: { ...DATA_LIMITS.quotas },
};

/**
 * The table-level settings checked against the table's columns: title column, grants, masks,
 * status fields, unique sets, quotas and retention. Fields the request does not give keep `base`.
 */
export function checkSettings(
  input: TableSettings,
  base: Settings,
  columns: readonly Pick<ColumnDef, 'key' | 'type' | 'config'>[],
  p: Problems,
  facts: AccountFacts,
): Settings {
  const byKey = new Map(columns.map((c) => [c.key, c]));
  const out: Settings = structuredClone(base);

  if (input.title_column !== undefined) out.title_column = input.title_column;
  if (out.title_column !== null) {
    const c = byKey.get(out.title_column);
    if (!c || !TITLE_TYPES.includes(c.type))
      p.add('title_column', `The title column must be the key of a ${TITLE_TYPES.join(', ')} column of the table.`);
  }

  if (input.retention !== undefined) {
    out.retention = { ...out.retention, ...input.retention };
    for (const k of ['history_days', 'deleted_records_days'] as const) {
      const v = out.retention[k];
      if (v !== null && !isInt(v, 1, 36_500)) p.add(`retention.${k}`, 'Days must be a whole number from 1 to 36500, or null to keep.');
    }
  }

  if (input.access !== undefined) {
    for (const side of ['view', 'write'] as const) {
      const g = input.access[side] ?? { permissions: [], users: [] };
      const permissions = g.permissions ?? [];
      const users = g.users ?? [];
      permissions.forEach((perm, i) => {
        if (!validPermission(perm))
          p.add(`access.${side}.permissions.${i}`, 'A grant is a known permission or a data.grants.<name> permission.');
      });
      users.forEach((u, i) => {
        if (!facts.userIds.has(u)) p.add(`access.${side}.users.${i}`, 'A grant names users of this account by id.');
      });
      out.access[side] = { permissions: [...new Set(permissions)], users: [...new Set(users)] };
    }
  }

  if (input.masks !== undefined) {
    const seen = new Set<string>();
    out.masks = input.masks.map((m, i) => {
      if (!byKey.has(m.column)) p.add(`masks.${i}.column`, 'A mask names a column of the table.');
      else if (seen.has(m.column)) p.add(`masks.${i}.column`, 'A column has at most one mask.');
      seen.add(m.column);
      if (!validPermission(m.unless_permission))
        p.add(`masks.${i}.unless_permission`, 'The unless_permission is a known permission or a data.grants.<name> permission.');
      if (!['full', 'last4', 'email'].includes(m.style)) p.add(`masks.${i}.style`, 'The style is full, last4 or email.');
      return { column: m.column, unless_permission: m.unless_permission, style: m.style as FieldMask['style'] };
    });
  } else
    out.masks.forEach((m, i) => {
      if (!byKey.has(m.column)) p.add(`masks.${i}.column`, `The mask names ${m.column}, which is gone.`);
    });

  if (input.status_fields !== undefined) {
    const seen = new Set<string>();
    out.status_fields = input.status_fields.map((s, i) => {
      const f = `status_fields.${i}`;
      const c = byKey.get(s.column);
      const keys = new Set((c?.config.options ?? []).map((o) => o.key));
      if (!c || c.type !== 'select') p.add(`${f}.column`, 'A status field is a select column of the table; its options are the states.');
      else if (seen.has(s.column)) p.add(`${f}.column`, 'A column carries at most one status field.');
      seen.add(s.column);
      const state = (v: unknown, field: string, any = false) => {
        if (c?.type === 'select' && !(any && v === '*') && !keys.has(v as string))
          p.add(field, `${JSON.stringify(v)} is not an option of ${s.column}${any ? " (or '*', any state)" : ''}.`);
      };
      const initial = [...new Set(s.initial ?? [])];
      initial.forEach((v, j) => state(v, `${f}.initial.${j}`));
      if (s.required && !initial.length) p.add(`${f}.initial`, 'A required status field names the states records may start in.');
      const moves = (s.moves ?? []).map((m, j) => {
        state(m.from, `${f}.moves.${j}.from`, true);
        state(m.to, `${f}.moves.${j}.to`);
        if (m.permission !== undefined && m.permission !== null && !validPermission(m.permission))
          p.add(`${f}.moves.${j}.permission`, 'The permission is a known permission or a data.grants.<name> permission.');
        return { from: m.from, to: m.to, permission: m.permission ?? null };
      });
      const label = s.label ?? (c ? labelOf(s.column) : s.column);
      if (!label || label.length > NAME_MAX) p.add(`${f}.label`, `The label must be 1 to ${NAME_MAX} characters.`);
      return { column: s.column, label, required: s.required ?? false, strict: s.strict ?? true, initial, moves };
    });
  } else {
    // Stored status fields stay valid only while their column and its options do (a PATCH of options, a deleted column).
    out.status_fields.forEach((s, i) => {
      const c = byKey.get(s.column);
      const keys = new Set((c?.config.options ?? []).map((o) => o.key));
      const states = [...s.initial, ...s.moves.flatMap((m) => [m.from, m.to])].filter((v) => v !== '*');
      const lost = states.filter((v) => !keys.has(v));
      if (!c || c.type !== 'select' || lost.length)
        p.add(`status_fields.${i}`, `The status field on ${s.column} needs the states ${[...new Set(lost)].join(', ') || s.column}.`);
    });
  }

  if (input.unique_sets !== undefined) {
    const seen = new Set<string>();
    out.unique_sets = input.unique_sets.map((u, i) => {
      const f = `unique_sets.${i}`;
      if (typeof u.key !== 'string' || !KEY.test(u.key)) p.add(`${f}.key`, 'A unique set key is like a column key.');
      else if (seen.has(u.key)) p.add(`${f}.key`, `The unique set key ${u.key} is used twice.`);
      seen.add(u.key);
      const cols = u.columns ?? [];
      if (cols.length < 2 || cols.length > 5 || new Set(cols).size !== cols.length)
        p.add(`${f}.columns`, 'A unique set names 2 to 5 different columns.');
      cols.forEach((k, j) => {
        const c = byKey.get(k);
        if (!c) p.add(`${f}.columns.${j}`, `${k} is not a column of the table.`);
        else if (NOT_UNIQUE.includes(c.type)) p.add(`${f}.columns.${j}`, `A ${c.type} column cannot be part of a unique set.`);
      });
      return { key: u.key, columns: [...cols] };
    });
  } else
    out.unique_sets.forEach((u, i) => {
      const gone = u.columns.filter((k) => !byKey.has(k));
      if (gone.length) p.add(`unique_sets.${i}`, `The unique set ${u.key} names ${gone.join(', ')}, which is gone.`);
    });

  if (input.quotas !== undefined) {
    out.quotas = { ...out.quotas, ...input.quotas };
    for (const [k, v] of Object.entries(out.quotas))
      if (!isInt(v, 1, Number.MAX_SAFE_INTEGER)) p.add(`quotas.${k}`, 'A quota is a whole number of at least 1.');
  }
  return out;
}
