import type { EntityManager } from '@mikro-orm/postgresql';
import type { OperatorContext } from '../platform/context.js';
import { DomainError, validationFailed } from '../platform/errors.js';
import { searchColumns, type ColumnUi } from '../../domain/data/index.js';
import { Problems, sameList } from '../../domain/data/definition-rules.js';
import { checkColumn, type ColumnInput } from '../../domain/data/column-rules.js';
import { checkSettings } from '../../domain/data/table-rules.js';
import type { TableRow } from './tables.js';
import { backfillUniqueGuard, dropUniqueGuard } from './unique.js';
import { accountFacts, checkQuotas, nameField } from './definition-rules.js';
import { accountOf, columnOf, columnRows, insertColumn, tableOf, type DefinitionColumn, type TableView } from './definition-rows.js';
import { askDrops, requestIndexes, type DefinitionDeps } from './definition-indexes.js';
import { readTable } from './table-definitions.js';
import { deleteColumnRow, dropRecordValues, setColumnPosition, updateColumnDefinition } from './store/definitions.js';
import { groupsWithTable } from './store/groups.js';

// The columns of a table (docs/data-tables.md, Operator API): added, changed and deleted one at a
// time, each checked against the table's settings and quotas, with positions kept 0..n-1.

export type { ColumnInput };

export interface ColumnPatch {
  label?: string;
  required?: boolean;
  unique?: boolean;
  indexed?: boolean;
  config?: Record<string, unknown>;
  ui?: Record<string, unknown>;
  position?: number;
}

/** Moves one column to `to` (clamped) and numbers every column 0..n-1 in the resulting order. */
async function renumber(em: EntityManager, columns: DefinitionColumn[], moved: DefinitionColumn | null, to: number) {
  const rest = columns.filter((c) => c !== moved);
  if (moved) rest.splice(Math.max(0, Math.min(to, rest.length)), 0, moved);
  for (const [i, c] of rest.entries())
    if (c.position !== i) {
      await setColumnPosition(em, c.id, i);
      c.position = i;
    }
}

export async function addColumn(
  oc: OperatorContext,
  deps: DefinitionDeps,
  account: string,
  ref: string,
  input: ColumnInput,
): Promise<TableView> {
  const accountId = await accountOf(oc, account);
  const { table, column, search } = await oc.em.transactional(async (tx) => {
    const table = await tableOf(tx, accountId, ref, true);
    const columns = await columnRows(tx, table.id);
    const facts = await accountFacts(tx, accountId, table.id);
    const p = new Problems();
    const draft = checkColumn(input, 'column', p, facts);
    // Errors say the body's field names: this body is one column.
    const errors = Object.fromEntries(Object.entries(p.errors).map(([k, v]) => [k.replace(/^column\./, ''), v]));
    if (draft && columns.some((c) => c.key === draft.key)) (errors.key ??= []).push(`The table already has a column ${draft.key}.`);
    if (Object.keys(errors).length || !draft) throw validationFailed(errors);
    checkQuotas(table.quotas, [...columns, draft]);
    const column = await insertColumn(tx, accountId, table.id, draft, columns.length);
    await renumber(tx, [...columns, column], column, input.position ?? columns.length);
    if (draft.unique) await backfillUniqueGuard(tx, table.id, draft.key, [draft.key]);
    const search = !sameList(searchColumns(columns), searchColumns([...columns, column]));
    return { table, column, search };
  });
  oc.log.info({ actor: 'operator', account: accountId, table: table.id, column: column.key }, 'data column added');
  await requestIndexes(oc, deps, accountId, table.id, { build: column.indexed ? [column] : [], drop: [], search });
  return readTable(oc, String(accountId), table.id);
}

export async function updateColumn(
  oc: OperatorContext,
  deps: DefinitionDeps,
  account: string,
  ref: string,
  columnRef: string,
  input: ColumnPatch,
): Promise<TableView> {
  const accountId = await accountOf(oc, account);
  const { table, work } = await oc.em.transactional(async (tx) => {
    const table = await tableOf(tx, accountId, ref, true);
    const columns = await columnRows(tx, table.id);
    const column = columnOf(columns, columnRef);
    const facts = await accountFacts(tx, accountId, table.id);
    const p = new Problems();
    const merged: Record<string, unknown> = { ...column.config, ...(input.config ?? {}) };
    for (const k of Object.keys(merged)) if (merged[k] === null) delete merged[k];
    const draft = checkColumn(
      {
        key: column.key,
        label: input.label ?? column.label,
        type: column.type,
        stored_type: column.stored_type,
        required: input.required ?? column.required,
        unique: input.unique ?? column.unique,
        indexed: input.indexed ?? column.indexed,
        config: merged,
      },
      'column',
      p,
      facts,
    )!;
    draft.ui = { ...column.ui, ...(input.ui ?? {}) } as ColumnUi;
    const next = columns.map((c) => (c === column ? { ...c, ...draft } : c));
    // The table's settings must still hold with the new options (a status field's states).
    checkSettings({}, table, next, p, facts);
    const errors = Object.fromEntries(Object.entries(p.errors).map(([k, v]) => [k.replace(/^column\./, ''), v]));
    if (Object.keys(errors).length) throw validationFailed(errors);
    checkQuotas(table.quotas, next);

    // indexed: true again on a failed build asks for another try.
    const building = draft.indexed && (!column.indexed || (input.indexed === true && column.index_status === 'failed'));
    const dropping = !draft.indexed && column.indexed;
    await updateColumnDefinition(tx, column.id, {
      label: draft.label,
      required: draft.required,
      unique: draft.unique,
      indexed: draft.indexed,
      index_status: building ? 'pending' : dropping ? 'dropping' : column.index_status,
      index_error: building ? null : column.index_error,
      config: draft.config,
      ui: draft.ui,
    });
    if (draft.unique && !column.unique) {
      try {
        await backfillUniqueGuard(tx, table.id, column.key, [column.key]);
      } catch (err) {
        throw nameField(err, 'unique');
      }
    } else if (!draft.unique && column.unique) await dropUniqueGuard(tx, table.id, column.key);
    if (input.position !== undefined) await renumber(tx, columns, column, input.position);
    const search = !sameList(searchColumns(next), searchColumns(columns));
    return { table, work: { build: building ? [column] : [], drop: dropping ? [column] : [], search } };
  });
  oc.log.info({ actor: 'operator', account: accountId, table: table.id, column: columnRef }, 'data column updated');
  await requestIndexes(oc, deps, accountId, table.id, work);
  return readTable(oc, String(accountId), table.id);
}

/** What still names a column: the table's settings and group reports. It cannot go while they do. */
async function referencesTo(em: EntityManager, table: TableRow, key: string): Promise<string[]> {
  const refs: string[] = [];
  if (table.title_column === key) refs.push('the title column');
  if (table.status_fields.some((s) => s.column === key)) refs.push('a status field');
  if (table.masks.some((m) => m.column === key)) refs.push('a mask');
  for (const u of table.unique_sets) if (u.columns.includes(key)) refs.push(`the unique set ${u.key}`);
  const groups = await groupsWithTable(em, table.account_id, table.id);
  for (const g of groups)
    for (const r of g.reports)
      if (r.table_id === table.id && (r.column === key || r.date_column === key)) refs.push(`the report ${r.key} of group ${g.slug}`);
  return refs;
}

export async function deleteColumn(
  oc: OperatorContext,
  deps: DefinitionDeps,
  account: string,
  ref: string,
  columnRef: string,
): Promise<TableView> {
  const accountId = await accountOf(oc, account);
  const table = await tableOf(oc.em, accountId, ref);
  const column = columnOf(await columnRows(oc.em, table.id), columnRef);
  const refs = await referencesTo(oc.em, table, column.key);
  if (refs.length)
    throw new DomainError('conflict', `The column ${column.key} is used by ${refs.join(', ')}; change that first.`, { code: 'conflict' });
  if (column.indexed || column.index_name) await askDrops(oc, deps, accountId, table.id, [column]);
  const search = await oc.em.transactional(async (tx) => {
    const locked = await tableOf(tx, accountId, table.id, true);
    const columns = await columnRows(tx, locked.id);
    const current = columnOf(columns, column.id);
    const again = await referencesTo(tx, locked, current.key);
    if (again.length)
      throw new DomainError('conflict', `The column ${current.key} is used by ${again.join(', ')}; change that first.`, {
        code: 'conflict',
      });
    await deleteColumnRow(tx, current.id);
    await dropUniqueGuard(tx, locked.id, current.key);
    await dropRecordValues(tx, locked.id, current.key);
    const rest = columns.filter((c) => c !== current);
    await renumber(tx, rest, null, 0);
    return !sameList(searchColumns(columns), searchColumns(rest));
  });
  oc.log.info({ actor: 'operator', account: accountId, table: table.id, column: column.key }, 'data column deleted');
  await requestIndexes(oc, deps, accountId, table.id, { build: [], drop: [], search });
  return readTable(oc, String(accountId), table.id);
}
