import { FORM_SESSION_MODES, FORM_SESSION_STATUSES, MAX_OPTIONS, MAX_QUESTIONS, QUESTION_TYPES } from '../../domain/forms/index.js';
import { pageQueryProperties, pageSchema } from '../platform/pagination.js';

// The forms family's request and answer schemas (docs/forms.md): what ajv validates, what the
// OpenAPI document and the MCP tools show. Field names follow Typeform's and WhatsApp Flows' words
// where they have one (questions with a key and a type, options with id and title, a flow_token).

const questionSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['key', 'type', 'label'],
  properties: {
    key: { type: 'string', pattern: '^[a-z][a-z0-9_]{0,39}$' },
    type: { type: 'string', enum: QUESTION_TYPES },
    label: { type: 'string', minLength: 1, maxLength: 300 },
    required: { type: 'boolean', default: true },
    options: {
      type: 'array',
      maxItems: MAX_OPTIONS,
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['id', 'title'],
        properties: {
          id: { type: 'string', pattern: '^[A-Za-z0-9_-]{1,64}$' },
          title: { type: 'string', minLength: 1, maxLength: 24 },
        },
      },
    },
    min: { type: ['number', 'string'] },
    max: { type: ['number', 'string'] },
    integer: { type: 'boolean' },
    min_length: { type: 'integer', minimum: 0, maximum: 1000 },
    max_length: { type: 'integer', minimum: 1, maximum: 1000 },
    pattern: { type: 'string', maxLength: 200 },
    error_message: {
      type: 'string',
      minLength: 1,
      maxLength: 300,
    },
  },
} as const;

const definitionProperties = {
  name: { type: 'string', minLength: 1, maxLength: 160 },
  title: { type: 'string', minLength: 1, maxLength: 60 },
  intro: { type: 'string', minLength: 1, maxLength: 1024 },
  submit_label: {
    type: 'string',
    minLength: 1,
    maxLength: 20,
  },
  thank_you: { type: ['string', 'null'], maxLength: 1024 },
  remind_after_minutes: { type: 'integer', minimum: 1, maximum: 2880 },
  expire_after_minutes: {
    type: 'integer',
    minimum: 2,
    maximum: 2880,
  },
  max_attempts: {
    type: 'integer',
    minimum: 1,
    maximum: 10,
  },
  questions: { type: 'array', minItems: 1, maxItems: MAX_QUESTIONS, items: questionSchema },
} as const;

const DEFINITION_NOTE =
  'Questions: key (snake_case, unique), type, label, required (default true); choice options [{id, title}]; number min, max, integer; ' +
  'date min, max (YYYY-MM-DD); text min_length, max_length, pattern; error_message. Defaults: title = name, intro = title, ' +
  'submit_label Start, thank_you null, remind_after_minutes 60, expire_after_minutes 240, max_attempts 3 (docs/forms.md).';

export const formBody = {
  type: 'object',
  description: DEFINITION_NOTE,
  additionalProperties: false,
  required: ['name', 'questions'],
  properties: definitionProperties,
} as const;

export const formUpdateBody = {
  type: 'object',
  description: `Fields sent replace the draft’s; published versions never change. ${DEFINITION_NOTE}`,
  additionalProperties: false,
  minProperties: 1,
  properties: definitionProperties,
} as const;

/** A stored definition as answers show it: the body create_form takes, with every default filled in (its fields are create_form's). */
const definitionSchema = {
  type: 'object',
  required: [
    'name',
    'title',
    'intro',
    'submit_label',
    'thank_you',
    'remind_after_minutes',
    'expire_after_minutes',
    'max_attempts',
    'questions',
  ],
} as const;

export const formSchema = {
  type: 'object',
  required: ['id', 'status', 'latest_version', 'draft_changed', 'draft', 'versions', 'created_at', 'updated_at'],
  properties: {
    id: { type: 'string' },
    status: { type: 'string', enum: ['draft', 'published'] },
    latest_version: { type: ['integer', 'null'] },
    draft_changed: { type: 'boolean' },
    draft: definitionSchema,
    versions: {
      type: 'array',
      items: {
        type: 'object',
        required: ['version', 'published_at'],
        properties: { version: { type: 'integer' }, published_at: { type: 'string' } },
      },
    },
    created_at: { type: 'string' },
    updated_at: { type: 'string' },
  },
} as const;

export const formListSchema = pageSchema('forms', formSchema);
export const formListQuery = { type: 'object', additionalProperties: false, properties: { ...pageQueryProperties } } as const;

export const versionSchema = {
  type: 'object',
  required: ['id', 'form_id', 'version', 'definition', 'whatsapp_flow', 'published_at'],
  properties: {
    id: { type: 'string' },
    form_id: { type: 'string' },
    version: { type: 'integer' },
    definition: definitionSchema,
    whatsapp_flow: {
      type: 'object',
      required: ['name', 'flow_json'],
      properties: { name: { type: 'string' }, flow_json: { type: 'object' } },
    },
    published_at: { type: 'string' },
  },
} as const;

export const sendBody = {
  type: 'object',
  description:
    'Exactly one of to (a phone number) and conversation_id (whatsapp:<phone number id>:<customer>, or a message uid). ' +
    'mode native (default): one WhatsApp Flow message; questions: one chat message per question. version: default the latest.',
  additionalProperties: false,
  properties: {
    to: { type: 'string', minLength: 1, maxLength: 32 },
    conversation_id: {
      type: 'string',
      minLength: 1,
      maxLength: 120,
    },
    sender_id: {
      type: 'string',
      minLength: 1,
      maxLength: 64,
    },
    version: { type: 'integer', minimum: 1 },
    mode: {
      type: 'string',
      enum: FORM_SESSION_MODES,
    },
  },
} as const;

export const sessionSchema = {
  type: 'object',
  required: [
    'id',
    'form_id',
    'version',
    'recipient',
    'conversation_id',
    'mode',
    'status',
    'answers',
    'current_question',
    'end_reason',
    'created_at',
    'updated_at',
    'submitted_at',
    'ended_at',
  ],
  properties: {
    id: { type: 'string' },
    form_id: { type: 'string' },
    version: { type: 'integer' },
    recipient: { type: 'string' },
    conversation_id: { type: 'string' },
    mode: { type: 'string', enum: FORM_SESSION_MODES },
    status: { type: 'string', enum: FORM_SESSION_STATUSES },
    answers: { type: 'object' },
    current_question: { type: ['string', 'null'] },
    end_reason: { type: ['string', 'null'] },
    created_at: { type: 'string' },
    updated_at: { type: 'string' },
    submitted_at: { type: ['string', 'null'] },
    ended_at: { type: ['string', 'null'] },
  },
} as const;

export const sessionListSchema = pageSchema('sessions', sessionSchema);
export const sessionListQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    ...pageQueryProperties,
    status: { type: 'string', enum: FORM_SESSION_STATUSES },
    recipient: { type: 'string', minLength: 1, maxLength: 32 },
  },
} as const;

export const summarySchema = {
  type: 'object',
  required: ['form_id', 'sessions', 'questions'],
  properties: {
    form_id: { type: 'string' },
    sessions: {
      type: 'object',
      required: ['total', 'active', 'submitted', 'expired', 'cancelled'],
      properties: {
        total: { type: 'integer' },
        active: { type: 'integer' },
        submitted: { type: 'integer' },
        expired: { type: 'integer' },
        cancelled: { type: 'integer' },
      },
    },
    questions: {
      type: 'array',
      items: {
        type: 'object',
        required: ['key', 'type', 'label', 'answered'],
        properties: {
          key: { type: 'string' },
          type: { type: 'string' },
          label: { type: 'string' },
          answered: { type: 'integer' },
          options: {
            type: 'array',
            items: {
              type: 'object',
              required: ['id', 'title', 'count'],
              properties: { id: { type: 'string' }, title: { type: 'string' }, count: { type: 'integer' } },
            },
          },
          min: { type: ['number', 'null'] },
          max: { type: ['number', 'null'] },
          average: { type: ['number', 'null'] },
        },
      },
    },
  },
} as const;

export const settingsSchema = {
  type: 'object',
  required: ['enabled', 'updated_at'],
  properties: {
    enabled: { type: 'boolean' },
    updated_at: { type: ['string', 'null'] },
  },
} as const;

export const settingsBody = {
  type: 'object',
  additionalProperties: false,
  required: ['enabled'],
  properties: { enabled: { type: 'boolean' } },
} as const;
