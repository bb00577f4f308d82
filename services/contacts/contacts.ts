import {
  contactsPage,
  deleteContactRow,
  groupContact,
  groupContactExists,
  insertContact,
  updateContactRow,
  type ContactRef,
  type ContactRow,
  type ContactValues,
} from './store/contacts.js';
import { notFound, validationFailed } from '../platform/errors.js';
import type { RequestContext } from '../platform/context.js';
import { parseContact, type ContactFields } from '../../domain/contacts/contacts.js';
import { resolveGroup, likeEscape } from './contact-groups.js';
import { contactView } from './contact-view.js';
import { pageAnswer, pageOf } from '../platform/pagination.js';
import type { ContactListQuery } from './contact-schemas.js';
import { newUid } from '../platform/ids.js';

// Contacts live inside a group: every lookup is scoped by account and group, so a contact of
// another group or account answers 404 exactly like a missing one.

/** `{uid}` / `{contact}`: the public uid or the numeric id. */
function contactRef(ref: string): ContactRef | null {
  if (/^\d+$/.test(ref)) return ref.length <= 18 ? { id: Number(ref) } : null;
  return ref.length <= 40 ? { uid: ref } : null;
}

function parsed(body: Record<string, unknown>): ContactValues {
  const r = parseContact(body);
  if (!r.ok) throw validationFailed(r.errors);
  return valuesOf(r.contact);
}

const valuesOf = (c: ContactFields): ContactValues => ({
  name: c.name,
  countryCode: c.countryCode,
  phoneNumber: c.phoneNumber,
  fullPhoneNumber: c.fullPhoneNumber,
  isSubscribed: c.isSubscribed ?? null,
  customFieldValues: c.customFieldValues,
});

const withGroupUid = (row: ContactRow, groupUid: string) => contactView({ ...row, group_uid: groupUid });

export async function createContact(rc: RequestContext, groupRef: string, body: Record<string, unknown>) {
  const group = await resolveGroup(rc, groupRef);
  const c = parsed(body);
  const row = await insertContact(rc.em, newUid('ctc'), rc.account.id, group.id, c);
  return withGroupUid(row, group.uid);
}

export async function getContact(rc: RequestContext, groupRef: string, ref: string) {
  const group = await resolveGroup(rc, groupRef);
  const key = contactRef(ref);
  const row = key && (await groupContact(rc.em, rc.account.id, group.id, key));
  if (!row) throw notFound('Contact');
  return withGroupUid(row, group.uid);
}

/**
 * Replaces the contact from the payload: the phone is required again, the name is derived again and
 * the custom-field map is replaced whole; only is_subscribed keeps its stored value when omitted.
 */
export async function updateContact(rc: RequestContext, groupRef: string, ref: string, body: Record<string, unknown>) {
  const group = await resolveGroup(rc, groupRef);
  const key = contactRef(ref);
  if (!key) throw notFound('Contact');
  // The contact's existence is checked before the payload, so a wrong address answers 404, not 422.
  if (!(await groupContactExists(rc.em, rc.account.id, group.id, key))) throw notFound('Contact');
  const row = await updateContactRow(rc.em, rc.account.id, group.id, key, parsed(body));
  if (!row) throw notFound('Contact');
  return withGroupUid(row, group.uid);
}

export async function deleteContact(rc: RequestContext, groupRef: string, ref: string) {
  const group = await resolveGroup(rc, groupRef);
  const key = contactRef(ref);
  const row = key && (await deleteContactRow(rc.em, rc.account.id, group.id, key));
  if (!row) throw notFound('Contact');
  return { id: Number(row.id), uid: row.uid, deleted: true as const };
}

/** Newest updated first; search matches the name or the national phone_number. */
export async function listContacts(rc: RequestContext, groupRef: string, q: ContactListQuery) {
  const group = await resolveGroup(rc, groupRef);
  const { page, perPage, offset } = pageOf(q);
  const term = typeof q.search === 'string' || typeof q.search === 'number' ? String(q.search).trim() : '';
  const digits = term.replace(/\D/g, '');
  // Separators in the search text ("712-345") must not hide a stored number (712345678).
  const search =
    term === '' ? null : { like: `%${likeEscape(term)}%`, digitsLike: digits !== '' && digits !== term ? `%${digits}%` : null };
  const { total, rows } = await contactsPage(rc.em, { accountId: rc.account.id, groupId: group.id, search, limit: perPage, offset });
  return pageAnswer(
    'contacts',
    rows.map((r) => withGroupUid(r, group.uid)),
    { page, perPage },
    total,
  );
}
