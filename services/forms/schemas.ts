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
    key: { type: 'string', pattern: '^[a-z][a-z0-9_]{0,39}$', description: 'The answer’s field name: snake_case, unique in the form' },
    type: { type: 'string', enum: QUESTION_TYPES },
    label: { type: 'string', minLength: 1, maxLength: 300, description: 'What the customer is asked' },
    required: { type: 'boolean', default: true },
    options: {
      type: 'array',
      maxItems: MAX_OPTIONS,
      description: 'choice: the options (at most 10); the answer stored is the option’s id',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['id', 'title'],
        properties: {
          id: { type: 'string', pattern: '^[A-Za-z0-9_-]{1,64}$' },
          title: { type: 'string', minLength: 1, maxLength: 24, description: 'At most 24 characters (a WhatsApp list row)' },
        },
      },
    },
    min: { type: ['number', 'string'], description: 'number: the least value; date: the earliest date (YYYY-MM-DD)' },
    max: { type: ['number', 'string'], description: 'number: the greatest value; date: the latest date (YYYY-MM-DD)' },
    integer: { type: 'boolean', description: 'number: whole numbers only' },
    min_length: { type: 'integer', minimum: 0, maximum: 1000 },
    max_length: { type: 'integer', minimum: 1, maximum: 1000, description: 'text: default 1000' },
    pattern: { type: 'string', maxLength: 200, description: 'text: a regular expression the whole answer must match' },
    error_message: {
      type: 'string',
      minLength: 1,
      maxLength: 300,
      description: 'Told when an answer does not fit (else the rule’s own message)',
    },
  },
} as const;

const definitionProperties = {
  name: { type: 'string', minLength: 1, maxLength: 160 },
  title: { type: 'string', minLength: 1, maxLength: 60, description: 'The native form’s title; default the name' },
  intro: { type: 'string', minLength: 1, maxLength: 1024, description: 'The message that opens the form; default the title' },
  submit_label: {
    type: 'string',
    minLength: 1,
    maxLength: 20,
    description: 'The native form’s button (WhatsApp flow_cta, ≤20 characters); default Start',
  },
  thank_you: { type: ['string', 'null'], maxLength: 1024, description: 'Sent once every answer is in; null (default) sends nothing' },
  remind_after_minutes: { type: 'integer', minimum: 1, maximum: 2880, description: 'Quiet minutes before the one reminder; default 60' },
  expire_after_minutes: {
    type: 'integer',
    minimum: 2,
    maximum: 2880,
    description: 'Quiet minutes before the session expires; default 240 (at most 48 h)',
  },
  max_attempts: {
    type: 'integer',
    minimum: 1,
    maximum: 10,
    description: 'Answers to one question that may fail before the session ends; default 3',
  },
  questions: { type: 'array', minItems: 1, maxItems: MAX_QUESTIONS, items: questionSchema },
} as const;

export const formBody = {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'questions'],
  properties: definitionProperties,
} as const;

export const formUpdateBody = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  description: 'Fields sent replace the draft’s; published versions never change',
  properties: definitionProperties,
} as const;

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
  properties: definitionProperties,
} as const;

export const formSchema = {
  type: 'object',
  required: ['id', 'status', 'latest_version', 'draft_changed', 'draft', 'versions', 'created_at', 'updated_at'],
  properties: {
    id: { type: 'string', description: 'frm_…' },
    status: { type: 'string', enum: ['draft', 'published'], description: 'published once a version exists' },
    latest_version: { type: ['integer', 'null'], description: 'The version a send uses by default; null before the first publish' },
    draft_changed: { type: 'boolean', description: 'The draft differs from the latest version (publish makes a new one)' },
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
    id: { type: 'string', description: '<form id>/v<version>' },
    form_id: { type: 'string' },
    version: { type: 'integer' },
    definition: definitionSchema,
    whatsapp_flow: {
      type: 'object',
      required: ['name', 'flow_json'],
      description: 'The native chat form of this version: the Flow name a send opens and its Flow JSON (complete-only, one screen)',
      properties: { name: { type: 'string' }, flow_json: { type: 'object' } },
    },
    published_at: { type: 'string' },
  },
} as const;

export const sendBody = {
  type: 'object',
  additionalProperties: false,
  description: 'Exactly one of to and conversation_id',
  properties: {
    to: { type: 'string', minLength: 1, maxLength: 32, description: 'The customer’s phone number, with its country code' },
    conversation_id: {
      type: 'string',
      minLength: 1,
      maxLength: 120,
      description: 'A chat of the account: whatsapp:<phone number id>:<customer>, or the uid of one of its messages',
    },
    sender_id: {
      type: 'string',
      minLength: 1,
      maxLength: 64,
      description: 'The account’s WhatsApp number (phone number id) to send from; default its first',
    },
    version: { type: 'integer', minimum: 1, description: 'A published version; default the latest' },
    mode: {
      type: 'string',
      enum: FORM_SESSION_MODES,
      description:
        'native (default on WhatsApp): one interactive Flow message answered with the whole form; questions: one chat message per question',
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
    id: { type: 'string', description: 'fss_…; the native form’s flow_token' },
    form_id: { type: 'string' },
    version: { type: 'integer' },
    recipient: { type: 'string' },
    conversation_id: { type: 'string' },
    mode: { type: 'string', enum: FORM_SESSION_MODES },
    status: { type: 'string', enum: FORM_SESSION_STATUSES },
    answers: { type: 'object', description: 'Accepted answers by question key (a skipped optional question: null)' },
    current_question: { type: ['string', 'null'], description: 'The question waited on (question by question)' },
    end_reason: { type: ['string', 'null'], description: 'expired: no_reply or invalid_answers; cancelled: cancelled' },
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
    recipient: { type: 'string', minLength: 1, maxLength: 32, description: 'One customer’s sessions (a phone number)' },
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
          answered: { type: 'integer', description: 'Submitted sessions that answered it' },
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
    enabled: { type: 'boolean', description: 'false: every forms path answers 403 (reason module_disabled)' },
    updated_at: { type: ['string', 'null'] },
  },
} as const;

export const settingsBody = {
  type: 'object',
  additionalProperties: false,
  required: ['enabled'],
  properties: { enabled: { type: 'boolean', description: 'Switch the Forms module on or off' } },
} as const;
