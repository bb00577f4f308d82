import { many, one } from '../../entities/db.js';
import { notFound, validationFailed } from '../platform/errors.js';
import type { RequestContext } from '../platform/context.js';
import { parseContact, type ContactFields } from '../../domain/contacts/contacts.js';
import { resolveGroup, likeEscape } from './contact-groups.js';
import { contactView, type ContactRow } from './contact-view.js';
import { pageOf, paginationOf } from '../platform/pagination.js';
import { newUid } from '../platform/ids.js';

// Contacts live inside a group: every lookup is scoped by account and group, so a contact of
// another group or account answers 404 exactly like a missing one.

/** `{uid}` / `{contact}`: the public uid or the numeric id. */
function contactCondition(ref: string): { sql: string; param: string | number } | null {
  if (/^\d+$/.test(ref)) return ref.length <= 18 ? { sql: 'c.id = ?', param: Number(ref) } : null;
  return ref.length <= 40 ? { sql: 'c.uid = ?', param: ref } : null;
}

function parsed(body: Record<string, unknown>): ContactFields {
  const r = parseContact(body);
  if (!r.ok) throw validationFailed(r.errors);
  return r.contact;
}

const withGroupUid = (row: Omit<ContactRow, 'group_uid'>, groupUid: string) => contactView({ ...row, group_uid: groupUid });

export async function createContact(rc: RequestContext, groupRef: string, body: Record<string, unknown>) {
  const group = await resolveGroup(rc, groupRef);
  const c = parsed(body);
  const row = await one<ContactRow>(
    rc.em,
    `insert into contacts (uid, account_id, group_id, name, country_code, phone_number, full_phone_number, is_subscribed, custom_field_values, created_at, updated_at)
     values (?, ?, ?, ?, ?, ?, ?, ?, ?::jsonb, now(), now()) returning *`,
    [
      newUid('ctc'),
      rc.account.id,
      group.id,
      c.name,
      c.countryCode,
      c.phoneNumber,
      c.fullPhoneNumber,
      c.isSubscribed ?? true,
      JSON.stringify(c.customFieldValues),
    ],
  );
  return withGroupUid(row!, group.uid);
}

export async function getContact(rc: RequestContext, groupRef: string, contactRef: string) {
  const group = await resolveGroup(rc, groupRef);
  const cond = contactCondition(contactRef);
  const row =
    cond &&
    (await one<ContactRow>(rc.em, `select c.* from contacts c where c.account_id = ? and c.group_id = ? and ${cond.sql}`, [
      rc.account.id,
      group.id,
      cond.param,
    ]));
  if (!row) throw notFound('Contact');
  return withGroupUid(row, group.uid);
}

/**
 * Replaces the contact from the payload: the phone is required again, the name is derived again and
 * the custom-field map is replaced whole; only is_subscribed keeps its stored value when omitted.
 */
export async function updateContact(rc: RequestContext, groupRef: string, contactRef: string, body: Record<string, unknown>) {
  const group = await resolveGroup(rc, groupRef);
  const cond = contactCondition(contactRef);
  if (!cond) throw notFound('Contact');
  // The contact's existence is checked before the payload, so a wrong address answers 404, not 422.
  const exists = await one(rc.em, `select 1 from contacts c where c.account_id = ? and c.group_id = ? and ${cond.sql}`, [
    rc.account.id,
    group.id,
    cond.param,
  ]);
  if (!exists) throw notFound('Contact');
  const c = parsed(body);
  const row = await one<ContactRow>(
    rc.em,
    `update contacts c set name = ?, country_code = ?, phone_number = ?, full_phone_number = ?, is_subscribed = coalesce(?::boolean, c.is_subscribed),
            custom_field_values = ?::jsonb, updated_at = now()
      where c.account_id = ? and c.group_id = ? and ${cond.sql} returning c.*`,
    [
      c.name,
      c.countryCode,
      c.phoneNumber,
      c.fullPhoneNumber,
      c.isSubscribed ?? null,
      JSON.stringify(c.customFieldValues),
      rc.account.id,
      group.id,
      cond.param,
    ],
  );
  if (!row) throw notFound('Contact');
  return withGroupUid(row, group.uid);
}

export async function deleteContact(rc: RequestContext, groupRef: string, contactRef: string) {
  const group = await resolveGroup(rc, groupRef);
  const cond = contactCondition(contactRef);
  const row =
    cond &&
    (await one<{ id: string; uid: string }>(
      rc.em,
      `delete from contacts c where c.account_id = ? and c.group_id = ? and ${cond.sql} returning c.id, c.uid`,
      [rc.account.id, group.id, cond.param],
    ));
  if (!row) throw notFound('Contact');
  return { id: Number(row.id), uid: row.uid, deleted: true };
}

export interface ContactListQuery {
  search?: string | number;
  page?: number | string;
  per_page?: number | string;
  limit?: number | string;
}

/** Newest updated first; search matches the name or the national phone_number. */
export async function listContacts(rc: RequestContext, groupRef: string, q: ContactListQuery) {
  const group = await resolveGroup(rc, groupRef);
  const { page, perPage, offset } = pageOf(q);
  const where = ['c.account_id = ?', 'c.group_id = ?'];
  const params: unknown[] = [rc.account.id, group.id];
  const term = typeof q.search === 'string' || typeof q.search === 'number' ? String(q.search).trim() : '';
  if (term !== '') {
    const digits = term.replace(/\D/g, '');
    const alternatives = ['c.name ilike ?', 'c.phone_number like ?'];
    params.push(`%${likeEscape(term)}%`, `%${likeEscape(term)}%`);
    // Separators in the search text ("712-345") must not hide a stored number (712345678).
    if (digits !== '' && digits !== term) {
      alternatives.push('c.phone_number like ?');
      params.push(`%${digits}%`);
    }
    where.push(`(${alternatives.join(' or ')})`);
  }
  const total = Number((await one<{ n: string }>(rc.em, `select count(*) as n from contacts c where ${where.join(' and ')}`, params))!.n);
  const rows = await many<ContactRow>(
    rc.em,
    `select c.* from contacts c where ${where.join(' and ')} order by c.updated_at desc, c.id desc limit ? offset ?`,
    [...params, perPage, offset],
  );
  return { contacts: rows.map((r) => withGroupUid(r, group.uid)), pagination: paginationOf(page, perPage, total) };
}
