import crypto from 'node:crypto';
import { accountGroup, countedGroup, deleteGroupRow, groupsPage, insertGroup, renameGroupRow, type GroupRef } from './store/groups.js';
import { notFound, validationFailed } from '../platform/errors.js';
import type { RequestContext } from '../platform/context.js';
import { groupView } from './contact-view.js';
import { pageAnswer, pageOf } from '../platform/pagination.js';
import type { GroupListQuery } from './contact-schemas.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const INT_MAX = 2_147_483_647;

/** `{group}` is the numeric id or the UUID; anything else is no group (404, as a group of another account is). */
export function groupRef(ref: string): GroupRef | null {
  if (/^\d+$/.test(ref)) {
    const id = Number(ref);
    return id > 0 && id <= INT_MAX ? { id } : null;
  }
  return UUID.test(ref) ? { uid: ref.toLowerCase() } : null;
}

export async function resolveGroup(rc: RequestContext, ref: string): Promise<{ id: number; uid: string; name: string }> {
  const key = groupRef(ref);
  const row = key && (await accountGroup(rc.em, rc.account.id, key));
  if (!row) throw notFound('Contact group');
  return row;
}

export async function getGroup(rc: RequestContext, ref: string) {
  const key = groupRef(ref);
  const row = key && (await countedGroup(rc.em, rc.account.id, key));
  if (!row) throw notFound('Contact group');
  return groupView(row);
}

/** Newest first; the optional search matches the name. */
export async function listGroups(rc: RequestContext, q: GroupListQuery) {
  const page = pageOf(q);
  const nameLike = q.search && q.search.trim() !== '' ? `%${likeEscape(q.search.trim())}%` : null;
  const { total, rows } = await groupsPage(rc.em, rc.account.id, nameLike, page.perPage, page.offset);
  return pageAnswer('groups', rows.map(groupView), page, total);
}

function groupName(name: string): string {
  if (name.trim() === '') throw validationFailed({ name: ['The name field is required.'] });
  return name.trim();
}

export async function createGroup(rc: RequestContext, name: string) {
  return groupView(await insertGroup(rc.em, crypto.randomUUID(), rc.account.id, groupName(name)));
}

export async function renameGroup(rc: RequestContext, ref: string, name: string) {
  const group = await resolveGroup(rc, ref);
  await renameGroupRow(rc.em, group.id, groupName(name));
  return getGroup(rc, String(group.id));
}

/** Deletes the group with its contacts and imports (foreign keys cascade). */
export async function deleteGroup(rc: RequestContext, ref: string) {
  const group = await resolveGroup(rc, ref);
  await deleteGroupRow(rc.em, group.id, rc.account.id);
  return { id: group.id, uid: group.uid, deleted: true as const };
}

/** Escapes LIKE wildcards so a search for "50%" finds that text, not everything. */
export const likeEscape = (s: string) => s.replace(/[\\%_]/g, (c) => `\\${c}`);
