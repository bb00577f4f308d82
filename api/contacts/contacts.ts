import { HINTS, defineOperation } from '../operation.js';
import { contactSchema } from '../../services/contacts/contact-view.js';
import { pageSchema, pageQueryProperties } from '../../services/platform/pagination.js';
import {
  createContact,
  getContact,
  updateContact,
  deleteContact,
  listContacts,
  type ContactListQuery,
} from '../../services/contacts/contacts.js';
import { noInput, storableObject } from '../../services/platform/storable.js';

// Field types and limits are checked by domain/contacts.ts too (shared with the bulk import, so both
// answer the same messages); the schema states the same rules, worded the same way, so the document
// admits exactly what the server accepts.
const textOrNumber = (field: string, maxLength?: number) =>
  ({
    allOf: [{ type: ['string', 'number', 'null'], 'x-error': `The ${field} must be a string.` }, ...(maxLength ? [{ maxLength }] : [])],
  }) as const;

const SUBSCRIBED = 'The is subscribed field must be true or false.';
/** A number, or text with something besides spaces (what counts as "sent" for a phone). */
const nonBlank = (field: string) =>
  ({
    anyOf: [{ type: 'number' }, { type: 'string', pattern: '^[^\\u0000]*[^\\s\\u0000][^\\u0000]*$' }],
    'x-error': `The ${field} field is required.`,
  }) as const;

export const contactBody = {
  type: 'object',
  description:
    'Any other top-level field is stored under custom_field_values (a custom_field_values object is itself one custom key): ' +
    'text, numbers, booleans, null, or arrays and objects of those nested at most four levels. ' +
    'Reserved: PHONE, phone_number, country_code, name, NAME, FIRST_NAME, LAST_NAME, is_subscribed, _token.',
  properties: {
    PHONE: {
      ...textOrNumber('PHONE', 64),
      description:
        'string or number; required unless phone_number is sent, and wins over it. Non-digits are removed; ' +
        'a matching country_code is removed from the front, then one trunk zero when a country code is present',
    },
    phone_number: { ...textOrNumber('phone number', 64), description: 'alias of PHONE' },
    country_code: {
      allOf: [
        ...textOrNumber('country code', 8).allOf,
        // Blank, or holding at least one digit (a calling code); NUL is refused everywhere.
        { pattern: '^(?:\\s*|[^\\u0000]*\\d[^\\u0000]*)$', 'x-error': 'The country code must be a calling code such as 255.' },
      ],
      description: 'calling code, e.g. 255 or +255; never inferred from a leading plus in the phone',
    },
    name: { ...textOrNumber('name', 160), description: 'wins over NAME; else FIRST_NAME and LAST_NAME joined; else the normalized phone' },
    NAME: textOrNumber('NAME', 160),
    FIRST_NAME: textOrNumber('FIRST NAME'),
    LAST_NAME: textOrNumber('LAST NAME'),
    is_subscribed: {
      anyOf: [
        { type: ['boolean', 'null'], 'x-error': SUBSCRIBED },
        { enum: [0, 1], 'x-error': SUBSCRIBED },
        {
          type: 'string',
          pattern: '^\\s*(?:[Tt][Rr][Uu][Ee]|[Ff][Aa][Ll][Ss][Ee]|[Yy][Ee][Ss]|[Nn][Oo]|1|0)?\\s*$',
          'x-error': SUBSCRIBED,
        },
      ],
      description: 'boolean (also 1/0, "true"/"false"); true on create when omitted, kept on update when omitted',
    },
  },
  additionalProperties: storableObject.additionalProperties,
  // A phone is required: PHONE, or phone_number when PHONE is absent or blank.
  if: { not: { required: ['phone_number'], properties: { phone_number: nonBlank('phone number') } } },
  then: { required: ['PHONE'], properties: { PHONE: nonBlank('PHONE') } },
} as const;

const listBody = {
  type: 'object',
  properties: {
    search: { ...textOrNumber('search', 191), description: 'string (a number is accepted); matches the name or the national phone_number' },
    page: { type: ['integer', 'string', 'null'], description: 'integer from 1 (a numeric string is accepted; anything else reads as 1)' },
    limit: { type: ['integer', 'string', 'null'], description: 'integer, default 20, at most 100; wins over per_page' },
    per_page: { type: ['integer', 'string', 'null'], description: 'integer; limit wins' },
  },
} as const;

export const contactListQuery = {
  type: 'object',
  properties: {
    search: { type: 'string', maxLength: 191, description: 'matches the name or the national phone_number' },
    ...pageQueryProperties,
  },
} as const;

const anyBody = noInput;
const one = contactSchema;
export const contactList = pageSchema('contacts', contactSchema);
export const deleted = {
  type: 'object',
  required: ['id', 'uid', 'deleted'],
  properties: { id: { type: 'integer' }, uid: { type: 'string' }, deleted: { const: true } },
} as const;

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
    body: listBody,
    description: 'Body: search, page, limit (default 20, at most 100). Answers the contacts and the pagination object.',
    output: { kind: 'list', status: 200, description: 'A page of contacts', schema: contactList },
    // The body's field types are checked by the service (numbers may arrive as strings here).
    handler: async ({ rc }, { group_id, ...query }) => listContacts(rc, group_id, query as ContactListQuery),
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
