import crypto from 'node:crypto';
import { exec, many, one } from '../../entities/db.js';
import { notFound, validationFailed } from '../platform/errors.js';
import type { RequestContext } from '../platform/context.js';
import { groupView, type GroupRow } from './contact-view.js';
import { pageOf, paginationOf } from '../platform/pagination.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const INT_MAX = 2_147_483_647;

/**
 * `{group}` is the numeric id or the UUID; anything else, or a group of another account, is 404.
 * Returns the SQL condition and its parameter, for callers that join the group into a bigger query.
 */
export function groupCondition(ref: string, alias = 'g'): { sql: string; param: number | string } | null {
  if (/^\d+$/.test(ref)) {
    const id = Number(ref);
    return id > 0 && id <= INT_MAX ? { sql: `${alias}.id = ?`, param: id } : null;
  }
  return UUID.test(ref) ? { sql: `${alias}.uid = ?`, param: ref.toLowerCase() } : null;
}

export async function resolveGroup(rc: RequestContext, ref: string): Promise<{ id: number; uid: string; name: string }> {
  const cond = groupCondition(ref);
  const row =
    cond &&
    (await one<{ id: number; uid: string; name: string }>(
      rc.em,
      `select g.id, g.uid, g.name from contact_groups g where g.account_id = ? and ${cond.sql}`,
      [rc.account.id, cond.param],
    ));
  if (!row) throw notFound('Contact group');
  return row;
}

const COUNTED = `select g.*, (select count(*) from contacts c where c.group_id = g.id) as contacts_count from contact_groups g`;

export async function getGroup(rc: RequestContext, ref: string) {
  const cond = groupCondition(ref);
  const row = cond && (await one<GroupRow>(rc.em, `${COUNTED} where g.account_id = ? and ${cond.sql}`, [rc.account.id, cond.param]));
  if (!row) throw notFound('Contact group');
  return groupView(row);
}

export interface GroupListQuery {
  page?: number;
  per_page?: number;
  limit?: number;
  search?: string;
}

/** Newest first; the optional search matches the name. */
export async function listGroups(rc: RequestContext, q: GroupListQuery) {
  const { page, perPage, offset } = pageOf(q);
  const where = ['g.account_id = ?'];
  const params: unknown[] = [rc.account.id];
  if (q.search && q.search.trim() !== '') {
    where.push(`g.name ilike ? escape '\\'`);
    params.push(`%${likeEscape(q.search.trim())}%`);
  }
  const total = Number(
    (await one<{ n: string }>(rc.em, `select count(*) as n from contact_groups g where ${where.join(' and ')}`, params))!.n,
  );
  const rows = await many<GroupRow>(rc.em, `${COUNTED} where ${where.join(' and ')} order by g.id desc limit ? offset ?`, [
    ...params,
    perPage,
    offset,
  ]);
  return { groups: rows.map(groupView), pagination: paginationOf(page, perPage, total) };
}

function groupName(name: string): string {
  if (name.trim() === '') throw validationFailed({ name: ['The name field is required.'] });
  return name.trim();
}

export async function createGroup(rc: RequestContext, name: string) {
  const row = await one<GroupRow>(
    rc.em,
    `insert into contact_groups (uid, account_id, name, created_at, updated_at) values (?, ?, ?, now(), now()) returning *, 0 as contacts_count`,
    [crypto.randomUUID(), rc.account.id, groupName(name)],
  );
  return groupView(row!);
}

export async function renameGroup(rc: RequestContext, ref: string, name: string) {
  const group = await resolveGroup(rc, ref);
  await exec(rc.em, 'update contact_groups set name = ?, updated_at = now() where id = ?', [groupName(name), group.id]);
  return getGroup(rc, String(group.id));
}

/** Deletes the group with its contacts and imports (foreign keys cascade). */
export async function deleteGroup(rc: RequestContext, ref: string) {
  const group = await resolveGroup(rc, ref);
  await exec(rc.em, 'delete from contact_groups where id = ? and account_id = ?', [group.id, rc.account.id]);
  return { id: group.id, uid: group.uid, deleted: true };
}

/** Escapes LIKE wildcards so a search for "50%" finds that text, not everything. */
export const likeEscape = (s: string) => s.replace(/[\\%_]/g, (c) => `\\${c}`);
