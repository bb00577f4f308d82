import type { FromSchema } from 'json-schema-to-ts';
import { IDENTITY_KINDS, LEAD_STAGES } from '../../domain/leads/index.js';
import { pageQueryProperties, pageSchema } from '../platform/pagination.js';
import { storableValue } from '../platform/storable.js';

// The leads family's request and answer schemas: the operations state them (api/leads/) and the
// services take their types from them, so a field is declared once (docs/leads.md).

/** A note's text, at most this many characters (a longer one is 422, nothing written). */
export const NOTE_MAX = 10_000;
export const LABELS_MAX = 50;

const text = (max: number, description?: string) =>
  ({ type: ['string', 'null'], maxLength: max, ...(description ? { description } : {}) }) as const;
const stage = { enum: LEAD_STAGES, description: 'new, contacted, qualified, opportunity, won, lost, unqualified' } as const;
const reason = {
  type: 'string',
  minLength: 1,
  maxLength: 1000,
  description: 'Why: required into lost or unqualified (reason_required) and out of won (won_locked)',
} as const;
const label = { type: 'string', minLength: 1, maxLength: 64, pattern: '\\S' } as const;
const fields = {
  type: 'object',
  maxProperties: 100,
  propertyNames: { maxLength: 64 },
  additionalProperties: storableValue,
  description: 'Custom properties: your own keys; a key sent as null is removed',
} as const;

/** The ways a request names the person (at least one of them is needed to upsert). */
const identityProperties = {
  phone: {
    type: 'string',
    maxLength: 64,
    description:
      'Any common form: +255 754 123 456, 255754123456, 00255…, 0754-123-456 (national: read in country, else the account’s country)',
  },
  email: { type: 'string', maxLength: 254, description: 'Matched without case' },
  chat_id: { type: 'string', maxLength: 191, description: 'A chat-channel id of the person (a WhatsApp id)' },
} as const;

const leadFieldProperties = {
  name: text(160),
  company: text(160),
  source: text(64, 'Where the lead came from (web_form, whatsapp, referral…)'),
  fields,
} as const;

export const upsertBody = {
  type: 'object',
  additionalProperties: false,
  description:
    'Finds the person by phone (any form), e-mail, chat id, conversation_id or call_id, and updates that lead; none found, creates one.',
  properties: {
    ...identityProperties,
    conversation_id: {
      type: 'string',
      maxLength: 191,
      description: 'A conversation (whatsapp:<sender>:<customer>): attached to the lead, its customer identifies the person',
    },
    call_id: { type: 'string', maxLength: 191, description: 'A call: attached to the lead, and finds it again later' },
    country: {
      type: 'string',
      pattern: '^[A-Za-z]{2}$',
      description: 'ISO 3166-1 alpha-2 to read a national phone number in; default the account’s country',
    },
    ...leadFieldProperties,
    stage,
    reason,
    labels: { type: 'array', maxItems: LABELS_MAX, items: label, description: 'Added to the lead’s labels' },
    assignee_id: { type: ['integer', 'null'], minimum: 1, description: 'A user of the account (needs leads.assign); null: unassigned' },
    note: { type: 'string', minLength: 1, maxLength: NOTE_MAX, description: 'Added to the lead’s timeline' },
  },
} as const;
export type UpsertBody = FromSchema<typeof upsertBody>;

export const updateBody = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  description: 'Changes the fields sent. A new phone, email or chat_id replaces the lead’s own (another lead holding it: 409).',
  properties: {
    phone: { ...identityProperties.phone, type: ['string', 'null'] },
    email: { ...identityProperties.email, type: ['string', 'null'] },
    chat_id: { ...identityProperties.chat_id, type: ['string', 'null'] },
    country: upsertBody.properties.country,
    ...leadFieldProperties,
    stage,
    reason,
  },
} as const;
export type UpdateBody = FromSchema<typeof updateBody>;

export const stageBody = {
  type: 'object',
  additionalProperties: false,
  required: ['stage'],
  properties: { stage, reason },
} as const;

export const assignBody = {
  type: 'object',
  additionalProperties: false,
  required: ['assignee_id'],
  properties: { assignee_id: { type: ['integer', 'null'], minimum: 1, description: 'An active user of the account; null: the pool' } },
} as const;

export const labelsBody = {
  type: 'object',
  additionalProperties: false,
  required: ['labels'],
  properties: { labels: { type: 'array', minItems: 1, maxItems: LABELS_MAX, items: label } },
} as const;

export const noteBody = {
  type: 'object',
  additionalProperties: false,
  required: ['body'],
  properties: { body: { type: 'string', minLength: 1, maxLength: NOTE_MAX, pattern: '\\S' } },
} as const;

export const mergeBody = {
  type: 'object',
  additionalProperties: false,
  required: ['lead_id'],
  properties: {
    lead_id: { type: 'integer', minimum: 1, maximum: 2_147_483_647, description: 'The lead merged into this one; it is deleted' },
  },
} as const;

export const leadListQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    ...pageQueryProperties,
    stage,
    assignee: { type: 'string', pattern: '^(?:[0-9]{1,10}|me|none)$', description: 'A user id, me, or none (the unassigned pool)' },
    label: { type: 'string', minLength: 1, maxLength: 64 },
    q: { type: 'string', minLength: 1, maxLength: 100, description: 'Part of the name, e-mail, phone or company' },
  },
} as const;

export const activityListQuery = {
  type: 'object',
  additionalProperties: false,
  properties: { ...pageQueryProperties, kind: { type: 'string', maxLength: 32, description: 'Only this kind (note, stage_changed…)' } },
} as const;

export const settingsBody = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  properties: {
    ai_access: {
      enum: ['write', 'read', 'none'],
      description: 'What AI assistants (MCP connections) may do with leads: write, only read, or nothing (ai_not_allowed)',
    },
  },
} as const;

export const operatorSettingsBody = {
  ...settingsBody,
  properties: {
    ...settingsBody.properties,
    enabled: { type: 'boolean', description: 'false switches the leads module off: every lead path answers 403' },
  },
} as const;

// ---- Answers -----------------------------------------------------------------------------------

const dateTime = { type: 'string', format: 'date-time' } as const;
const nullable = { type: ['string', 'null'] } as const;
const nullableId = { type: ['integer', 'null'] } as const;

const leadProperties = {
  id: { type: 'integer' },
  name: nullable,
  phone: { ...nullable, description: 'E.164' },
  email: nullable,
  chat_id: nullable,
  company: nullable,
  source: nullable,
  stage,
  stage_reason: nullable,
  labels: { type: 'array', items: { type: 'string' } },
  fields: { type: 'object' },
  assignee_id: nullableId,
  added_by: { ...nullableId, description: 'The user who added it' },
  conversation_id: nullable,
  call_id: nullable,
  identities: {
    type: 'array',
    description: 'Every way the person is found',
    items: {
      type: 'object',
      required: ['kind', 'value'],
      properties: { kind: { enum: IDENTITY_KINDS }, value: { type: 'string' } },
    },
  },
  merged_ids: { type: 'array', items: { type: 'integer' } },
  closed_at: { type: ['string', 'null'], format: 'date-time' },
  created_at: dateTime,
  updated_at: dateTime,
} as const;

export const leadSchema = {
  type: 'object',
  required: Object.keys(leadProperties) as (keyof typeof leadProperties)[],
  properties: leadProperties,
} as const;

export const upsertSchema = {
  type: 'object',
  required: [...leadSchema.required, 'created', 'matched_by', 'duplicate_ids'],
  properties: {
    ...leadProperties,
    created: { type: 'boolean', description: 'true: no lead named the person, this one was made' },
    matched_by: { enum: [...IDENTITY_KINDS, null], description: 'The identity the lead was found by; null when created' },
    duplicate_ids: {
      type: 'array',
      items: { type: 'integer' },
      description: 'Other leads you can see that the request also named (merge them with POST /leads/{lead}/merge)',
    },
  },
} as const;

export const leadListSchema = pageSchema('leads', leadSchema);

export const activitySchema = {
  type: 'object',
  required: ['id', 'kind', 'body', 'data', 'actor', 'user_id', 'created_at'],
  properties: {
    id: { type: 'integer' },
    kind: { type: 'string', description: 'note, created, updated, stage_changed, assigned, label_added, label_removed, merged' },
    body: { ...nullable, description: 'A note’s text' },
    data: { type: 'object' },
    actor: { type: 'string' },
    user_id: nullableId,
    created_at: dateTime,
  },
} as const;

export const activityListSchema = pageSchema('activities', activitySchema);

export const settingsSchema = {
  type: 'object',
  required: ['enabled', 'ai_access', 'updated_at'],
  properties: {
    enabled: { type: 'boolean', description: 'Set by the operator; false: every lead path answers 403' },
    ai_access: { enum: ['write', 'read', 'none'] },
    updated_at: { type: ['string', 'null'], format: 'date-time' },
  },
} as const;
