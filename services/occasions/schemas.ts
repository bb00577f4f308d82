import type { FromSchema } from 'json-schema-to-ts';
import { OCCASION_KEY_PATTERN, OCCASION_KINDS, SEND_TIME_PATTERN, HOLIDAY_COUNTRIES } from '../../domain/occasions/index.js';

// The occasions family's request and answer schemas: the operations state them (api/occasions/) and
// the services take their types from them, so a field is declared once.

const overrideProperties = {
  name: { type: ['string', 'null'], minLength: 1, maxLength: 160, description: 'What the card is called; required on a custom occasion' },
  enabled: {
    type: ['boolean', 'null'],
    description: 'true schedules the greeting (a Temporal Schedule); false removes its schedule. Off by default',
  },
  message: {
    type: ['string', 'null'],
    minLength: 1,
    maxLength: 4096,
    description:
      'The SMS text: {{name}}, {{phone}}, {{phone_number}}, {{country_code}}, {{cf:<key>}} per contact; {{occasion}} is the card’s name',
  },
  send_time: { type: ['string', 'null'], pattern: SEND_TIME_PATTERN, description: 'HH:MM in the workspace’s time zone' },
  sender_id: { type: ['string', 'null'], maxLength: 64, description: 'A sender id of the account; null: the account’s default SMS route' },
  date: {
    type: ['string', 'null'],
    pattern: '^(?:[0-9]{4}-)?[0-9]{2}-[0-9]{2}$',
    description:
      'A holiday’s own day: MM-DD every year (02-29 is sent on 28 February in other years) or YYYY-MM-DD that year only. ' +
      'A day that does not exist (02-30, 2027-02-29) is 422',
  },
  date_field: {
    type: ['string', 'null'],
    minLength: 1,
    maxLength: 64,
    description: 'A contact-date occasion: the contact custom field holding each contact’s date (YYYY-MM-DD, MM-DD or --MM-DD)',
  },
  contact_group_ids: {
    type: ['array', 'null'],
    maxItems: 100,
    items: { type: 'integer', minimum: 1 },
    description: 'Greet only contacts of these groups; null: every group',
  },
} as const;

/** PUT: the card's whole set of overrides (a field left out inherits); PATCH: the fields sent (null inherits). */
export const occasionBody = {
  type: 'object',
  additionalProperties: false,
  properties: {
    kind: {
      enum: OCCASION_KINDS,
      description: 'A custom occasion only (a key the catalogue does not hold): holiday (a date) or contact_date',
    },
    ...overrideProperties,
  },
} as const;
export type OccasionBody = FromSchema<typeof occasionBody>;

export const occasionListQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    kind: { enum: OCCASION_KINDS, description: 'Only cards of this kind' },
    enabled: { type: 'boolean', description: 'Only cards switched on (true) or off (false)' },
  },
} as const;

export const defaultsBody = {
  type: 'object',
  additionalProperties: false,
  properties: {
    country: {
      type: ['string', 'null'],
      enum: [...HOLIDAY_COUNTRIES, null],
      description: `Whose public holidays the catalogue offers (ISO 3166-1 alpha-2): ${HOLIDAY_COUNTRIES.join(', ')}`,
    },
    time_zone: {
      type: ['string', 'null'],
      minLength: 1,
      maxLength: 64,
      description: 'IANA time zone of every greeting’s day and send time; default: the country’s capital, else UTC',
    },
    message: {
      type: ['string', 'null'],
      minLength: 1,
      maxLength: 4096,
      description: 'Every card’s text unless it has its own; {{occasion}} is the card’s name',
    },
    send_time: overrideProperties.send_time,
    sender_id: overrideProperties.sender_id,
    contact_group_ids: overrideProperties.contact_group_ids,
  },
} as const;
export type DefaultsBody = FromSchema<typeof defaultsBody>;

const fieldNames = ['name', 'enabled', 'message', 'send_time', 'sender_id', 'date', 'date_field', 'contact_group_ids'] as const;
const nullableString = { type: ['string', 'null'] } as const;
const groupIds = { type: ['array', 'null'], items: { type: 'integer' } } as const;

export const occasionSchema = {
  type: 'object',
  required: [
    'id',
    'key',
    'kind',
    'custom',
    'name',
    'enabled',
    'message',
    'send_time',
    'time_zone',
    'sender_id',
    'date',
    'rule',
    'date_field',
    'contact_group_ids',
    'next_date',
    'schedule_id',
    'overrides',
    'inherited',
    'inherited_from',
    'last_campaign',
    'updated_at',
  ],
  properties: {
    id: { type: 'string', description: 'The occasion key (the same as key)' },
    key: { type: 'string', pattern: OCCASION_KEY_PATTERN },
    kind: { enum: OCCASION_KINDS },
    custom: { type: 'boolean', description: 'true: the account’s own occasion; false: one of the catalogue' },
    name: { type: 'string' },
    enabled: { type: 'boolean' },
    message: { type: 'string' },
    send_time: { type: 'string' },
    time_zone: { type: 'string', description: 'The workspace’s time zone (occasions/defaults)' },
    sender_id: nullableString,
    date: {
      ...nullableString,
      description: 'A holiday’s day (MM-DD or YYYY-MM-DD); null for a moving holiday (see rule) or a contact date',
    },
    rule: { ...nullableString, description: 'A moving holiday’s rule, in words' },
    date_field: { ...nullableString, description: 'A contact-date occasion’s contact field' },
    contact_group_ids: groupIds,
    next_date: {
      ...nullableString,
      description: 'A holiday’s next day on or after today (YYYY-MM-DD); null for a contact date (greeted every day) or a day that is past',
    },
    schedule_id: { ...nullableString, description: 'The Temporal Schedule sending it; null when switched off or with no day to come' },
    overrides: {
      type: 'object',
      description: 'What the account stored for this card, and nothing else',
      properties: Object.fromEntries(fieldNames.map((f) => [f, {}])),
    },
    inherited: {
      type: 'array',
      items: { enum: fieldNames },
      description: 'The fields that fell through to the workspace defaults or the catalogue',
    },
    inherited_from: {
      type: 'object',
      description: 'Where each inherited field’s value came from',
      additionalProperties: { enum: ['workspace', 'catalogue'] },
    },
    last_campaign: {
      type: ['object', 'null'],
      description: 'The latest greeting campaign of this occasion (read it at /campaign/{uid}/view)',
      properties: {
        uid: { type: 'string' },
        business_key: { type: ['string', 'null'] },
        status: { type: 'string' },
        created_at: { type: ['string', 'null'] },
      },
    },
    updated_at: { ...nullableString, description: 'When the overrides last changed; null when nothing is stored' },
  },
} as const;

export const occasionListSchema = {
  type: 'object',
  required: ['occasions', 'country', 'time_zone'],
  properties: {
    occasions: { type: 'array', items: occasionSchema },
    country: { ...nullableString, description: 'Whose holidays the catalogue offers' },
    time_zone: { type: 'string' },
  },
} as const;

export const defaultsSchema = {
  type: 'object',
  required: ['country', 'time_zone', 'message', 'send_time', 'sender_id', 'contact_group_ids', 'inherited', 'updated_at'],
  properties: {
    country: nullableString,
    time_zone: { type: 'string' },
    message: nullableString,
    send_time: { type: 'string' },
    sender_id: nullableString,
    contact_group_ids: groupIds,
    inherited: {
      type: 'array',
      items: { enum: ['time_zone', 'send_time'] },
      description: 'Defaults of the workspace that are the catalogue’s (time_zone from the country, send_time 09:00)',
    },
    updated_at: nullableString,
  },
} as const;
