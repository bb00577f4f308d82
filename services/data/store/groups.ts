import type { EntityManager } from '@mikro-orm/postgresql';
import { many, one } from '../../../entities/db.js';
import { tablesOf, type Row } from '../../../entities/database.js';
import type { ReportDefinition } from '../../../domain/data/index.js';

// Data groups (data_groups): an operator's arrangement of an account's tables and saved reports.

const GROUP_FIELDS = [
  'id',
  'account_id',
  'name',
  'slug',
  'description',
  'icon',
  'table_ids',
  'reports',
  'created_at',
  'updated_at',
] as const;
const GROUP_TEXT = GROUP_FIELDS.join(', ');
export type DataGroupRow = Pick<Row<'data', 'data_groups'>, (typeof GROUP_FIELDS)[number]>;

/** Every group of the account, by name. */
export function accountGroups(em: EntityManager, accountId: number): Promise<DataGroupRow[]> {
  return tablesOf(em, 'data')
    .selectFrom('data_groups')
    .select(GROUP_FIELDS)
    .where('account_id', '=', accountId)
    .orderBy('name')
    .orderBy('id')
    .execute();
}

/** The account's group by UUID or slug; locked when `forUpdate`. */
export function groupOf(em: EntityManager, accountId: number, ref: string, byId: boolean, forUpdate = false) {
  const lock = forUpdate ? ' for update' : '';
  return one<DataGroupRow>(
    em,
    `select ${GROUP_TEXT} from data_groups where ${byId ? 'id = ?::uuid' : 'slug = ?'} and account_id = ?${lock}`,
    [ref, accountId],
  );
}

/** Slug and reports of the account's groups holding the table. */
export function groupsWithTable(em: EntityManager, accountId: number, tableId: string) {
  return many<{ slug: string; reports: ReportDefinition[] }>(
    em,
    'select slug, reports from data_groups where account_id = ? and jsonb_exists(table_ids, ?)',
    [accountId, tableId],
  );
}

export interface GroupWrite {
  name: string;
  slug: string;
  description: string | null;
  icon: string | null;
  table_ids: string[];
  reports: ReportDefinition[];
}

/** A new group; null when the account already has one with the slug. */
export function insertGroup(em: EntityManager, id: string, accountId: number, g: GroupWrite) {
  return one<DataGroupRow>(
    em,
    `insert into data_groups (id, account_id, name, slug, description, icon, table_ids, reports, created_at, updated_at)
     values (?, ?, ?, ?, ?, ?, ?::jsonb, ?::jsonb, now(), now())
     on conflict (account_id, slug) do nothing returning ${GROUP_TEXT}`,
    [id, accountId, g.name, g.slug, g.description, g.icon, JSON.stringify(g.table_ids), JSON.stringify(g.reports)],
  );
}

export async function updateGroupRow(em: EntityManager, groupId: string, g: GroupWrite): Promise<DataGroupRow> {
  return (await one<DataGroupRow>(
    em,
    `update data_groups set name = ?, slug = ?, description = ?, icon = ?, table_ids = ?::jsonb, reports = ?::jsonb, updated_at = now()
      where id = ?::uuid returning ${GROUP_TEXT}`,
    [g.name, g.slug, g.description, g.icon, JSON.stringify(g.table_ids), JSON.stringify(g.reports), groupId],
  ))!;
}

export async function deleteGroupRow(em: EntityManager, groupId: string): Promise<void> {
  await tablesOf(em, 'data').deleteFrom('data_groups').where('id', '=', groupId).execute();
}
