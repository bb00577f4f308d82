import type { AppDeps } from '../app.js';
import { successOf, emptyQuery, type RouteDef } from '../registry.js';
import { contactSchema } from '../../services/contact-view.js';
import { paginationSchema, pageQueryProperties } from '../../services/pagination.js';
import { createContact, getContact, updateContact, deleteContact, listContacts } from '../../services/contacts.js';

// Field types are checked by domain/contacts.ts (shared with the bulk import, so both answer the
// same messages); the schema carries the limits and documents the fields.
export const contactBody = {
  type: 'object',
  description: 'Any other top-level field is stored under custom_field_values (a custom_field_values object is itself one custom key). '
    + 'Reserved: PHONE, phone_number, country_code, name, NAME, FIRST_NAME, LAST_NAME, is_subscribed, _token.',
  properties: {
    PHONE: { maxLength: 64, description: 'string or number; required unless phone_number is sent, and wins over it. Non-digits are removed; '
      + 'a matching country_code is removed from the front, then one trunk zero when a country code is present' },
    phone_number: { maxLength: 64, description: 'alias of PHONE' },
    country_code: { maxLength: 8, description: 'calling code, e.g. 255 or +255; never inferred from a leading plus in the phone' },
    name: { maxLength: 160, description: 'wins over NAME; else FIRST_NAME and LAST_NAME joined; else the normalized phone' },
    NAME: { maxLength: 160 },
    FIRST_NAME: { description: 'string' },
    LAST_NAME: { description: 'string' },
    is_subscribed: { description: 'boolean (also 1/0, "true"/"false"); true on create when omitted, kept on update when omitted' },
  },
  additionalProperties: true,
} as const;

const listBody = {
  type: 'object',
  properties: {
    search: { maxLength: 191, description: 'string (a number is accepted); matches the name or the national phone_number' },
    page: { description: 'integer from 1 (a numeric string is accepted)' },
    limit: { description: 'integer, default 20, at most 100; wins over per_page' },
    per_page: { description: 'integer; limit wins' },
  },
} as const;

export const contactListQuery = {
  type: 'object',
  properties: {
    search: { type: 'string', maxLength: 191, description: 'matches the name or the national phone_number' },
    ...pageQueryProperties,
  },
} as const;

const anyBody = { type: 'object', properties: {}, additionalProperties: true } as const;
const one = successOf(contactSchema);
export const contactList = successOf({ type: 'object', required: ['contacts', 'pagination'], properties: { contacts: { type: 'array', items: contactSchema }, pagination: paginationSchema } });
export const deleted = successOf({ type: 'object', required: ['id', 'uid', 'deleted'], properties: { id: { type: 'integer' }, uid: { type: 'string' }, deleted: { const: true } } });
const ok = (data: unknown, status = 200) => ({ status, body: { status: 'success', data } });

/**
 * The five original contact paths, exactly as the contract writes them. They check only the account
 * credential (no issuer permission), so keys created before 7 September 2026 keep working here.
 */
export function contactCompatRoutes(_deps: AppDeps): RouteDef[] {
  const base = { tag: 'Contacts', auth: 'rest' as const };
  const g = '/api/v3/contacts/{group_id}';
  return [
    {
      ...base, method: 'POST', path: `${g}/store`, summary: 'Create a contact in a group ({group_id}: numeric id or UUID)', body: contactBody,
      response: { status: 201, description: 'The contact', schema: one },
      handler: async ({ rc, params, body }) => ok(await createContact(rc, params.group_id, body), 201),
    },
    {
      ...base, method: 'POST', path: `${g}/search/{uid}`, summary: 'Read one contact of the group by uid or numeric id', body: anyBody,
      response: { status: 200, description: 'The contact', schema: one },
      handler: async ({ rc, params }) => ok(await getContact(rc, params.group_id, params.uid)),
    },
    {
      ...base, method: 'PATCH', path: `${g}/update/{uid}`, summary: 'Replace a contact (phone required again; only is_subscribed is kept when omitted)', body: contactBody,
      response: { status: 200, description: 'The contact', schema: one },
      handler: async ({ rc, params, body }) => ok(await updateContact(rc, params.group_id, params.uid, body)),
    },
    {
      ...base, method: 'DELETE', path: `${g}/delete/{uid}`, summary: 'Delete a contact of the group',
      response: { status: 200, description: 'Deleted', schema: deleted },
      handler: async ({ rc, params }) => ok(await deleteContact(rc, params.group_id, params.uid)),
    },
    {
      ...base, method: 'POST', path: `${g}/all`, summary: 'List the group\'s contacts, newest updated first', body: listBody,
      description: 'Body: search, page, limit (default 20, at most 100). Answers the contacts and the pagination object.',
      response: { status: 200, description: 'A page of contacts', schema: contactList },
      handler: async ({ rc, params, body }) => ok(await listContacts(rc, params.group_id, body)),
    },
  ];
}

/** The same records under /contact-groups/{group}/contacts, with the issuer permissions the contract names. */
export function contactRestRoutes(_deps: AppDeps): RouteDef[] {
  const base = { tag: 'Contacts', auth: 'rest' as const };
  const c = '/api/v3/contact-groups/{group}/contacts';
  return [
    {
      ...base, method: 'GET', path: c, permission: 'contacts.view', summary: 'List a group\'s contacts, newest updated first', query: contactListQuery,
      response: { status: 200, description: 'A page of contacts', schema: contactList },
      handler: async ({ rc, params, query }) => ok(await listContacts(rc, params.group, query)),
    },
    {
      ...base, method: 'POST', path: c, permission: 'contacts.create', summary: 'Create a contact in the group', body: contactBody,
      response: { status: 201, description: 'The contact', schema: one },
      handler: async ({ rc, params, body }) => ok(await createContact(rc, params.group, body), 201),
    },
    {
      ...base, method: 'GET', path: `${c}/{contact}`, permission: 'contacts.view', summary: 'Read a contact by uid or numeric id', query: emptyQuery,
      response: { status: 200, description: 'The contact', schema: one },
      handler: async ({ rc, params }) => ok(await getContact(rc, params.group, params.contact)),
    },
    {
      ...base, method: 'PATCH', path: `${c}/{contact}`, permission: 'contacts.edit', summary: 'Replace a contact (same rules as the update path)', body: contactBody,
      response: { status: 200, description: 'The contact', schema: one },
      handler: async ({ rc, params, body }) => ok(await updateContact(rc, params.group, params.contact, body)),
    },
    {
      ...base, method: 'DELETE', path: `${c}/{contact}`, permission: 'contacts.delete', summary: 'Delete a contact',
      response: { status: 200, description: 'Deleted', schema: deleted },
      handler: async ({ rc, params }) => ok(await deleteContact(rc, params.group, params.contact)),
    },
  ];
}
