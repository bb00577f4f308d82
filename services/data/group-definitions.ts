import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { OperatorContext } from '../platform/context.js';
import type { ReportDefinition } from '../../domain/data/index.js';
import { NAME_MAX, NUMERIC, Problems, checkNameAndSlug, slugFrom } from '../../domain/data/definition-rules.js';
import { dataNotFound, isUuid } from './tables.js';
import { freeSlug, slugTaken, throwIfAny } from './definition-rules.js';
import { accountOf } from './definition-rows.js';
import { iso } from '../platform/time.js';
import { accountTableRefs, columnTypes, slugInUse } from './store/definitions.js';
import { accountGroups, deleteGroupRow, groupOf as storedGroup, insertGroup, updateGroupRow, type DataGroupRow } from './store/groups.js';

// Data groups (docs/data-tables.md, Operator API): member tables of one account and the reports
// over them, checked whole before anything is written.

export interface GroupInput {
  name?: string;
  slug?: string;
  description?: string | null;
  icon?: string | null;
  table_ids?: string[];
  reports?: {
    key: string;
    name: string;
    table_id: string;
    measure: string;
    column?: string | null;
    date_column?: string | null;
    filter?: unknown;
  }[];
}

function groupView(g: DataGroupRow) {
  return {
    id: g.id,
    account_id: g.account_id,
    name: g.name,
    slug: g.slug,
    description: g.description,
    icon: g.icon,
    table_ids: g.table_ids,
    reports: g.reports,
    created_at: iso(g.created_at),
    updated_at: iso(g.updated_at),
  };
}

const REPORT_KEY = /^[a-z][a-z0-9_]{0,62}$/;

/** The value at fault, as the caller wrote it, so a refusal says which one (a command line names several). */
const shown = (v: unknown): string => {
  const text = typeof v === 'string' ? v : (JSON.stringify(v) ?? String(v));
  return `'${text.length > 60 ? `${text.slice(0, 59)}…` : text}'`;
};
const SYSTEM_DATES = ['$created_at', '$updated_at'];

/** Member tables of the account (distinct) and reports over them and their columns. */
async function checkGroup(em: EntityManager, accountId: number, input: GroupInput, base: DataGroupRow | null, p: Problems) {
  // Members and report tables may be named by id or slug (handy on the command line); ids are kept.
  const tables = await accountTableRefs(em, accountId);
  const resolve = (ref: unknown) => {
    const s = String(ref ?? '');
    return tables.find((t) => t.id === s.toLowerCase() || t.slug === s)?.id ?? null;
  };
  const refs = input.table_ids ?? base?.table_ids ?? [];
  const reports = (input.reports ?? base?.reports ?? []) as NonNullable<GroupInput['reports']>;
  const tableIds: string[] = [];
  refs.forEach((ref, i) => {
    const id = resolve(ref);
    if (!id) p.add(`table_ids.${i}`, `There is no table ${shown(ref)} in this account; a member is named by its id or slug.`);
    else if (tableIds.includes(id)) p.add('table_ids', `The table ${shown(ref)} is listed more than once.`);
    else tableIds.push(id);
  });
  const known = new Set(tableIds);
  const columns = known.size ? await columnTypes(em, [...known]) : [];
  const seen = new Set<string>();
  const out: ReportDefinition[] = reports.map((r, i) => {
    const f = `reports.${i}`;
    if (!REPORT_KEY.test(r.key ?? ''))
      p.add(`${f}.key`, `The report key ${shown(r.key)} is not like a column key (a-z, 0-9 and _, starting with a letter).`);
    else if (seen.has(r.key)) p.add(`${f}.key`, `The report key ${r.key} is used twice.`);
    seen.add(r.key);
    if (typeof r.name !== 'string' || !r.name.trim() || r.name.length > NAME_MAX)
      p.add(`${f}.name`, `The name must be 1 to ${NAME_MAX} characters.`);
    const tableId = resolve(r.table_id) ?? String(r.table_id ?? '');
    if (!known.has(tableId))
      p.add(`${f}.table_id`, `The table ${shown(r.table_id)} is not a member of this group; a report reads one of its member tables.`);
    const cols = columns.filter((c) => c.table_id === tableId);
    if (!['count', 'sum', 'avg'].includes(r.measure)) p.add(`${f}.measure`, `The measure ${shown(r.measure)} is not count, sum or avg.`);
    if (r.measure === 'sum' || r.measure === 'avg') {
      const c = cols.find((x) => x.key === r.column);
      if (!c || !NUMERIC.includes(c.type))
        p.add(`${f}.column`, `A ${r.measure} needs a numeric column of the report’s table; ${shown(r.column)} is not one.`);
    } else if (r.column !== undefined && r.column !== null && !cols.some((x) => x.key === r.column))
      p.add(`${f}.column`, `The column ${shown(r.column)} is not a column of the report’s table.`);
    if (r.date_column !== undefined && r.date_column !== null && !SYSTEM_DATES.includes(r.date_column)) {
      const c = cols.find((x) => x.key === r.date_column);
      if (!c || (c.type !== 'date' && c.type !== 'datetime'))
        p.add(
          `${f}.date_column`,
          `The date column ${shown(r.date_column)} is not a date or datetime column of the report’s table, $created_at or $updated_at.`,
        );
    }
    if (r.filter !== undefined && r.filter !== null && (typeof r.filter !== 'object' || Array.isArray(r.filter)))
      p.add(`${f}.filter`, 'The filter is a condition object.');
    const report: ReportDefinition = {
      key: r.key,
      name: r.name?.trim(),
      table_id: tableId,
      measure: r.measure as ReportDefinition['measure'],
    };
    if (r.column !== undefined) report.column = r.column;
    if (r.date_column !== undefined && r.date_column !== null) report.date_column = r.date_column;
    if (r.filter !== undefined && r.filter !== null) report.filter = r.filter;
    return report;
  });
  return { tableIds, reports: out };
}

async function groupOf(em: EntityManager, accountId: number, ref: string, forUpdate = false): Promise<DataGroupRow> {
  const row = await storedGroup(em, accountId, ref, isUuid(ref), forUpdate);
  if (!row) throw dataNotFound('Group');
  return row;
}

export async function createGroup(oc: OperatorContext, account: string, input: GroupInput & { name: string }) {
  const accountId = await accountOf(oc, account);
  const row = await oc.em.transactional(async (tx) => {
    const p = new Problems();
    const name = input.name.trim();
    checkNameAndSlug(name, input.slug, p);
    const { tableIds, reports } = await checkGroup(tx, accountId, input, null, p);
    throwIfAny(p);
    const slug = input.slug ?? (await freeSlug(tx, 'groups', accountId, slugFrom(name)));
    const row = await insertGroup(tx, randomUUID(), accountId, {
      name,
      slug,
      description: input.description ?? null,
      icon: input.icon ?? null,
      table_ids: tableIds,
      reports,
    });
    if (!row) throw slugTaken('group', slug);
    return row;
  });
  oc.log.info({ actor: 'operator', account: accountId, group: row.id }, 'data group created');
  return groupView(row);
}

export async function listGroups(oc: OperatorContext, account: string) {
  const accountId = await accountOf(oc, account);
  return (await accountGroups(oc.em, accountId)).map(groupView);
}

export async function readGroup(oc: OperatorContext, account: string, ref: string) {
  const accountId = await accountOf(oc, account);
  return groupView(await groupOf(oc.em, accountId, ref));
}

export async function updateGroup(oc: OperatorContext, account: string, ref: string, input: GroupInput) {
  const accountId = await accountOf(oc, account);
  const row = await oc.em.transactional(async (tx) => {
    const group = await groupOf(tx, accountId, ref, true);
    const p = new Problems();
    const name = input.name === undefined ? group.name : input.name.trim();
    checkNameAndSlug(name, input.slug, p);
    const { tableIds, reports } = await checkGroup(tx, accountId, input, group, p);
    throwIfAny(p);
    if (input.slug !== undefined && input.slug !== group.slug) {
      if (await slugInUse(tx, 'groups', accountId, input.slug, group.id)) throw slugTaken('group', input.slug);
    }
    return updateGroupRow(tx, group.id, {
      name,
      slug: input.slug ?? group.slug,
      description: input.description === undefined ? group.description : input.description,
      icon: input.icon === undefined ? group.icon : input.icon,
      table_ids: tableIds,
      reports,
    });
  });
  return groupView(row);
}

export async function deleteGroup(oc: OperatorContext, account: string, ref: string): Promise<{ deleted: true }> {
  const accountId = await accountOf(oc, account);
  const group = await groupOf(oc.em, accountId, ref);
  await deleteGroupRow(oc.em, group.id);
  return { deleted: true };
}
