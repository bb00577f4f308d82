import type { FromSchema } from 'json-schema-to-ts';
import { MAX_IMPORT_ROWS } from '../../domain/contacts/contact-import.js';
import { pageQueryProperties } from '../platform/pagination.js';
import { storableObject, storableValue } from '../platform/storable.js';

// The request schemas of the contacts family: the operations state them (api/contacts/) and the
// services take their input types from them, so a field is declared once.

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

export const contactListBody = {
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
/** What a contact list reads: the compat list's loose body (numbers may arrive as strings); the REST list's query is a narrower case of it. */
export type ContactListQuery = FromSchema<typeof contactListBody>;

// Contact groups and bulk imports.

export const groupBody = {
  type: 'object',
  required: ['name'],
  properties: { name: { type: 'string', minLength: 1, maxLength: 160 } },
} as const;

export const groupListQuery = {
  type: 'object',
  properties: {
    search: { type: 'string', maxLength: 160, description: 'matches the group name' },
    ...pageQueryProperties,
  },
} as const;

export const importBody = {
  type: 'object',
  description: `Either contacts (JSON objects with the fields of a contact create) or csv (a header row naming the fields, e.g. PHONE,NAME,city). At most ${MAX_IMPORT_ROWS} rows.`,
  properties: {
    format: { enum: ['json', 'csv'], description: 'defaults to csv when csv is sent, else json' },
    contacts: { type: 'array', minItems: 1, maxItems: MAX_IMPORT_ROWS, items: storableValue },
    csv: { type: 'string', minLength: 1, description: 'RFC 4180: comma separated, double quotes, first record is the header' },
  },
} as const;
export type GroupListQuery = FromSchema<typeof groupListQuery>;
export type ImportRequest = FromSchema<typeof importBody>;
