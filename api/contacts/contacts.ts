import { HINTS, defineOperation } from '../operation.js';
import { contactSchema } from '../../services/contacts/contact-view.js';
import { pageSchema } from '../../services/platform/pagination.js';
import { createContact, getContact, updateContact, deleteContact, listContacts } from '../../services/contacts/contacts.js';
import { contactBody, contactListBody, contactListQuery } from '../../services/contacts/contact-schemas.js';
import { noInput } from '../../services/platform/storable.js';
import { deletedSchema } from '../answers.js';

const anyBody = noInput;
const one = contactSchema;
const contactList = pageSchema('contacts', contactSchema);
const deleted = deletedSchema({ id: { type: 'integer' }, uid: { type: 'string' } });

const mcpContacts = { servers: ['contacts'], scope: 'mcp:contacts' } as const;

/**
 * The five original contact paths, exactly as the contract writes them. They check only the account
 * credential (no issuer permission), so keys created before 7 September 2026 keep working here.
 * REST only: MCP clients use the contact-group tools below, which do the same.
 */
const compat = { tag: 'Contacts', auth: 'rest' } as const;
const g = '/api/v3/contacts/{group_id}';
export const contactCompatOperations = [
  defineOperation({
    ...compat,
    name: 'store_contact_compat',
    method: 'POST',
    path: `${g}/store`,
    summary: 'Create a contact in a group ({group_id}: numeric id or UUID)',
    body: contactBody,
    output: { kind: 'resource', status: 201, description: 'The contact', schema: one },
    handler: async ({ rc }, { group_id, ...contact }) => createContact(rc, group_id, contact),
  }),
  defineOperation({
    ...compat,
    name: 'search_contact_compat',
    method: 'POST',
    path: `${g}/search/{uid}`,
    summary: 'Read one contact of the group by uid or numeric id',
    body: anyBody,
    output: { kind: 'resource', status: 200, description: 'The contact', schema: one },
    handler: async ({ rc }, { group_id, uid }) => getContact(rc, group_id, uid),
  }),
  defineOperation({
    ...compat,
    name: 'update_contact_compat',
    method: 'PATCH',
    path: `${g}/update/{uid}`,
    summary: 'Replace a contact (phone required again; only is_subscribed is kept when omitted)',
    body: contactBody,
    output: { kind: 'resource', status: 200, description: 'The contact', schema: one },
    handler: async ({ rc }, { group_id, uid, ...contact }) => updateContact(rc, group_id, uid, contact),
  }),
  defineOperation({
    ...compat,
    name: 'delete_contact_compat',
    method: 'DELETE',
    path: `${g}/delete/{uid}`,
    summary: 'Delete a contact of the group',
    output: { kind: 'outcome', status: 200, description: 'Deleted', schema: deleted },
    handler: async ({ rc }, { group_id, uid }) => deleteContact(rc, group_id, uid),
  }),
  defineOperation({
    ...compat,
    name: 'list_contacts_compat',
    method: 'POST',
    path: `${g}/all`,
    summary: "List the group's contacts, newest updated first",
    body: contactListBody,
    description: 'Body: search, page, limit (default 20, at most 100). Answers the contacts and the pagination object.',
    output: { kind: 'list', status: 200, description: 'A page of contacts', schema: contactList },
    // The body's field types are checked by the service (numbers may arrive as strings here).
    handler: async ({ rc }, { group_id, ...query }) => listContacts(rc, group_id, query),
  }),
];

/** The same records under /contact-groups/{group}/contacts, with the issuer permissions the contract names. */
const rest = { tag: 'Contacts', auth: 'rest' } as const;
const c = '/api/v3/contact-groups/{group}/contacts';
export const contactOperations = [
  defineOperation({
    ...rest,
    name: 'list_contacts',
    method: 'GET',
    path: c,
    permission: 'contacts.view',
    summary: "List a group's contacts, newest updated first",
    query: contactListQuery,
    output: { kind: 'list', status: 200, description: 'A page of contacts', schema: contactList },
    mcp: { ...mcpContacts, annotations: HINTS.read },
    handler: async ({ rc }, { group, ...query }) => listContacts(rc, group, query),
  }),
  defineOperation({
    ...rest,
    name: 'create_contact',
    method: 'POST',
    path: c,
    permission: 'contacts.create',
    summary: 'Create a contact in the group',
    body: contactBody,
    output: { kind: 'resource', status: 201, description: 'The contact', schema: one },
    mcp: { ...mcpContacts, elevation: 'mcp:write', annotations: HINTS.write },
    handler: async ({ rc }, { group, ...contact }) => createContact(rc, group, contact),
  }),
  defineOperation({
    ...rest,
    name: 'get_contact',
    method: 'GET',
    path: `${c}/{contact}`,
    permission: 'contacts.view',
    summary: 'Read a contact by uid or numeric id',
    query: noInput,
    output: { kind: 'resource', status: 200, description: 'The contact', schema: one },
    mcp: { ...mcpContacts, annotations: HINTS.read },
    handler: async ({ rc }, { group, contact }) => getContact(rc, group, contact),
  }),
  defineOperation({
    ...rest,
    name: 'update_contact',
    method: 'PATCH',
    path: `${c}/{contact}`,
    permission: 'contacts.edit',
    summary: 'Replace a contact (same rules as the update path)',
    body: contactBody,
    output: { kind: 'resource', status: 200, description: 'The contact', schema: one },
    mcp: {
      ...mcpContacts,
      elevation: 'mcp:write',
      annotations: HINTS.remove,
    },
    handler: async ({ rc }, { group, contact, ...fields }) => updateContact(rc, group, contact, fields),
  }),
  defineOperation({
    ...rest,
    name: 'delete_contact',
    method: 'DELETE',
    path: `${c}/{contact}`,
    permission: 'contacts.delete',
    summary: 'Delete a contact',
    output: { kind: 'outcome', status: 200, description: 'Deleted', schema: deleted },
    mcp: {
      ...mcpContacts,
      elevation: 'mcp:delete',
      annotations: HINTS.remove,
    },
    handler: async ({ rc }, { group, contact }) => deleteContact(rc, group, contact),
  }),
];
