import type { EntityManager } from '@mikro-orm/postgresql';
import { sql } from 'kysely';
import { tablesOf, type Row } from '../../../entities/database.js';

// Contact groups: the audience unit of campaigns, addressed by numeric id or UUID.

/** A group as its view shows it, with how many contacts it holds. */
export type GroupRow = Pick<Row<'contacts', 'contact_groups'>, 'id' | 'uid' | 'name' | 'created_at' | 'updated_at'> & {
  contacts_count?: string | number;
};

/** How a request names a group: its numeric id or its UUID (lower case). */
export type GroupRef = { id: number } | { uid: string };

const GROUP_COLUMNS = ['g.id', 'g.uid', 'g.name', 'g.created_at', 'g.updated_at'] as const;

/** The account's group named by `ref` (id, uid, name), or undefined. */
export function accountGroup(em: EntityManager, accountId: number, ref: GroupRef) {
  const q = tablesOf(em, 'contacts')
    .selectFrom('contact_groups as g')
    .select(['g.id', 'g.uid', 'g.name'])
    .where('g.account_id', '=', accountId);
  return ('id' in ref ? q.where('g.id', '=', ref.id) : q.where('g.uid', '=', ref.uid)).executeTakeFirst();
}

/** The groups with their contact counts (a count per group, read with it). */
function countedGroups(em: EntityManager) {
  return tablesOf(em, 'contacts')
    .selectFrom('contact_groups as g')
    .select(GROUP_COLUMNS)
    .select((eb) =>
      eb
        .selectFrom('contacts as c')
        .select((c) => c.fn.countAll<string>().as('n'))
        .whereRef('c.group_id', '=', 'g.id')
        .as('contacts_count'),
    );
}

export function countedGroup(em: EntityManager, accountId: number, ref: GroupRef): Promise<GroupRow | undefined> {
  const q = countedGroups(em).where('g.account_id', '=', accountId);
  return ('id' in ref ? q.where('g.id', '=', ref.id) : q.where('g.uid', '=', ref.uid)).executeTakeFirst() as Promise<GroupRow | undefined>;
}

/** One page of the account's groups, newest first, and how many match in all; `nameLike` is an escaped ILIKE pattern. */
export async function groupsPage(em: EntityManager, accountId: number, nameLike: string | null, limit: number, offset: number) {
  let counted = tablesOf(em, 'contacts').selectFrom('contact_groups as g').where('g.account_id', '=', accountId);
  let rows = countedGroups(em).where('g.account_id', '=', accountId);
  if (nameLike !== null) {
    counted = counted.where(sql<boolean>`g.name ilike ${nameLike} escape '\\'`);
    rows = rows.where(sql<boolean>`g.name ilike ${nameLike} escape '\\'`);
  }
  const total = await counted.select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow();
  const page = (await rows.orderBy('g.id', 'desc').limit(limit).offset(offset).execute()) as GroupRow[];
  return { total: Number(total.n), rows: page };
}

export function insertGroup(em: EntityManager, uid: string, accountId: number, name: string): Promise<GroupRow> {
  return tablesOf(em, 'contacts')
    .insertInto('contact_groups')
    .values({ uid, account_id: accountId, name, created_at: sql`now()`, updated_at: sql`now()` })
    .returning(['id', 'uid', 'name', 'created_at', 'updated_at'])
    .returning(sql<number>`0`.as('contacts_count'))
    .executeTakeFirstOrThrow();
}

export const renameGroupRow = (em: EntityManager, id: number, name: string) =>
  tablesOf(em, 'contacts')
    .updateTable('contact_groups')
    .set({ name, updated_at: sql`now()` })
    .where('id', '=', id)
    .execute();

export const deleteGroupRow = (em: EntityManager, id: number, accountId: number) =>
  tablesOf(em, 'contacts').deleteFrom('contact_groups').where('id', '=', id).where('account_id', '=', accountId).execute();

/** The account's groups among these ids and UUIDs (any order). */
export function groupsAmong(em: EntityManager, accountId: number, ids: number[], uids: string[]) {
  return tablesOf(em, 'contacts')
    .selectFrom('contact_groups')
    .select(['id', 'uid', 'name'])
    .where('account_id', '=', accountId)
    .where((eb) =>
      eb.or([
        eb('id', 'in', sql<number>`(select (jsonb_array_elements_text(${JSON.stringify(ids)}::jsonb))::int)`),
        eb('uid', 'in', sql<string>`(select (jsonb_array_elements_text(${JSON.stringify(uids)}::jsonb))::uuid)`),
      ]),
    )
    .execute();
}

/** A group's uid and name by id (what a campaign shows of its audience), or undefined. */
export const groupById = (em: EntityManager, id: number) =>
  tablesOf(em, 'contacts').selectFrom('contact_groups').select(['uid', 'name']).where('id', '=', id).executeTakeFirst();
