import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { OperatorContext } from '../platform/context.js';
import { DomainError } from '../platform/errors.js';
import { searchColumns } from '../../domain/data/index.js';
import { Problems, checkNameAndSlug, sameList, slugFrom } from '../../domain/data/definition-rules.js';
import { checkColumn, type ColumnDraft, type ColumnInput } from '../../domain/data/column-rules.js';
import { DEFAULT_SETTINGS, checkSettings, type TableSettings } from '../../domain/data/table-rules.js';
import { columnsOf } from './tables.js';
import {
  accountTables,
  columnsOfTables,
  deleteTableAndContents,
  insertTable,
  relationLinksTo,
  slugInUse,
  updateTableSettings,
} from './store/definitions.js';
import { backfillUniqueGuard, dropUniqueGuard } from './unique.js';
import { accountFacts, checkQuotas, freeSlug, nameField, slugTaken, throwIfAny } from './definition-rules.js';
import { accountOf, columnRows, insertColumn, tableOf, tableView, type DefinitionColumn, type TableView } from './definition-rows.js';
import { askDrops, requestIndexes, type DefinitionDeps } from './definition-indexes.js';

// What an operator defines (docs/data-tables.md, Operator API): tables (this file), their columns
// (column-definitions.ts) and data groups (group-definitions.ts). Every request is checked whole
// before anything is written and written in one transaction, so a refusal leaves nothing behind;
// index builds and drops are asked for only after that transaction commits.

export type { DefinitionDeps, TableSettings, TableView };

export interface TableInput extends TableSettings {
  name: string;
  columns: ColumnInput[];
}

export async function createTable(oc: OperatorContext, deps: DefinitionDeps, account: string, input: TableInput): Promise<TableView> {
  const accountId = await accountOf(oc, account);
  const { tableId, created } = await oc.em.transactional(async (tx) => {
    const facts = await accountFacts(tx, accountId);
    const p = new Problems();
    const name = input.name.trim();
    checkNameAndSlug(name, input.slug, p);
    const seen = new Set<string>();
    const drafts = input.columns.map((raw, i) => {
      const d = checkColumn(raw, `columns.${i}`, p, facts);
      if (d && seen.has(d.key)) p.add(`columns.${i}.key`, `The key ${d.key} is used twice.`);
      if (d) seen.add(d.key);
      return d;
    });
    const columns = drafts.filter((d): d is ColumnDraft => d !== null);
    const settings = checkSettings(input, DEFAULT_SETTINGS, columns, p, facts);
    throwIfAny(p);
    checkQuotas(settings.quotas, columns);

    const slug = input.slug ?? (await freeSlug(tx, 'tables', accountId, slugFrom(name)));
    const id = randomUUID();
    const inserted = await insertTable(tx, id, accountId, {
      name,
      slug,
      description: input.description ?? null,
      icon: input.icon ?? null,
      title_column: settings.title_column,
      retention: settings.retention,
      legal_hold: input.legal_hold ?? false,
      access: settings.access,
      masks: settings.masks,
      status_fields: settings.status_fields,
      unique_sets: settings.unique_sets,
      quotas: settings.quotas,
    });
    if (!inserted) throw slugTaken('table', slug);
    const rows: DefinitionColumn[] = [];
    for (const [position, c] of columns.entries()) rows.push(await insertColumn(tx, accountId, id, c, position));
    return { tableId: id, created: rows };
  });
  oc.log.info({ actor: 'operator', account: accountId, table: tableId }, 'data table created');
  await requestIndexes(oc, deps, accountId, tableId, {
    build: created.filter((c) => c.indexed),
    drop: [],
    search: searchColumns(created).length > 0,
  });
  return readTable(oc, String(accountId), tableId);
}

export async function listTables(oc: OperatorContext, account: string): Promise<TableView[]> {
  const accountId = await accountOf(oc, account);
  const tables = await accountTables(oc.em, accountId);
  const columns = tables.length
    ? await columnsOfTables(
        oc.em,
        tables.map((t) => t.id),
      )
    : [];
  return tables.map((t) =>
    tableView(
      t,
      columns.filter((c) => c.table_id === t.id),
    ),
  );
}

export async function readTable(oc: OperatorContext, account: string, ref: string): Promise<TableView> {
  const accountId = await accountOf(oc, account);
  const table = await tableOf(oc.em, accountId, ref);
  return tableView(table, await columnsOf(oc, table.id));
}

export async function updateTable(oc: OperatorContext, account: string, ref: string, input: TableSettings): Promise<TableView> {
  const accountId = await accountOf(oc, account);
  const tableId = await oc.em.transactional(async (tx) => {
    const table = await tableOf(tx, accountId, ref, true);
    const columns = await columnRows(tx, table.id);
    const facts = await accountFacts(tx, accountId, table.id);
    const p = new Problems();
    const name = input.name === undefined ? table.name : input.name.trim();
    checkNameAndSlug(name, input.slug, p);
    const settings = checkSettings(input, table, columns, p, facts);
    if (settings.quotas.columns < columns.length)
      p.add('quotas.columns', `The table already has ${columns.length} columns; delete some before lowering its quota.`);
    const indexed = columns.filter((c) => c.indexed).length;
    if (settings.quotas.indexes < indexed)
      p.add('quotas.indexes', `The table already has ${indexed} indexed columns; unindex some before lowering its quota.`);
    throwIfAny(p);

    if (input.slug !== undefined && input.slug !== table.slug) {
      if (await slugInUse(tx, 'tables', accountId, input.slug, table.id)) throw slugTaken('table', input.slug);
    }
    // A set that is new or names other columns guards every live record from now on; a set gone forgets its guard.
    const before = new Map(table.unique_sets.map((u) => [u.key, u.columns]));
    const after = new Map(settings.unique_sets.map((u) => [u.key, u.columns]));
    for (const [key, cols] of before) if (!sameList(cols, after.get(key) ?? [])) await dropUniqueGuard(tx, table.id, `set:${key}`);
    for (const [key, cols] of after)
      if (!sameList(cols, before.get(key) ?? [])) {
        try {
          await backfillUniqueGuard(tx, table.id, `set:${key}`, cols);
        } catch (err) {
          throw nameField(err, `unique_sets.${settings.unique_sets.findIndex((u) => u.key === key)}.columns`);
        }
      }
    await updateTableSettings(tx, table.id, {
      name,
      slug: input.slug ?? table.slug,
      description: input.description === undefined ? table.description : input.description,
      icon: input.icon === undefined ? table.icon : input.icon,
      title_column: settings.title_column,
      retention: settings.retention,
      legal_hold: input.legal_hold ?? table.legal_hold,
      access: settings.access,
      masks: settings.masks,
      status_fields: settings.status_fields,
      unique_sets: settings.unique_sets,
      quotas: settings.quotas,
    });
    return table.id;
  });
  oc.log.info({ actor: 'operator', account: accountId, table: tableId }, 'data table updated');
  return readTable(oc, String(accountId), tableId);
}

/** Relation columns of other tables that point at this one: the table cannot go while they do. */
async function refusedByRelations(em: EntityManager, accountId: number, tableId: string) {
  const links = await relationLinksTo(em, accountId, tableId);
  if (links.length)
    throw new DomainError(
      'conflict',
      `Other tables link to this one (${links.map((l) => `${l.slug}.${l.key}`).join(', ')}); delete those columns first.`,
      { code: 'conflict' },
    );
}

export async function deleteTable(oc: OperatorContext, deps: DefinitionDeps, account: string, ref: string): Promise<{ deleted: true }> {
  const accountId = await accountOf(oc, account);
  const table = await tableOf(oc.em, accountId, ref);
  await refusedByRelations(oc.em, accountId, table.id);
  const indexed = (await columnRows(oc.em, table.id)).filter((c) => c.indexed || c.index_name);
  await askDrops(oc, deps, accountId, table.id, indexed);
  await oc.em.transactional(async (tx) => {
    const locked = await tableOf(tx, accountId, table.id, true);
    await refusedByRelations(tx, accountId, locked.id);
    await deleteTableAndContents(tx, accountId, locked.id);
  });
  oc.log.info({ actor: 'operator', account: accountId, table: table.id }, 'data table deleted');
  // The search index of a table that is gone: the index workflow finds no table and drops it.
  if (table.search_index_status !== null) await requestIndexes(oc, deps, accountId, table.id, { build: [], drop: [], search: true });
  return { deleted: true };
}
