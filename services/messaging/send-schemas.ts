import type { FromSchema } from 'json-schema-to-ts';
import { WHATSAPP_INTERACTIVE_TYPES, WHATSAPP_KINDS, WHATSAPP_LIMITS } from '../../domain/messaging/whatsapp-message.js';
import {
  MAX_RECIPIENTS_PER_REQUEST,
  RECIPIENT_CHARACTERS,
  RECIPIENT_MAX_LENGTH,
  RECIPIENT_SPACE,
} from '../../domain/messaging/recipients.js';
import { scheduleTimeSchema } from '../../domain/messaging/schedule-time.js';

// The request bodies of the two sends, stated as far as JSON Schema can state them, so OpenAPI and
// MCP clients see the rules: the message types, the payloads that may not be combined, the
// interactive and template outlines and their limits. Values are matched as the send matches them
// (any case, surrounding spaces), hence patterns rather than enums. The domain validator
// (domain/messaging/whatsapp-message.ts) still decides what a schema cannot say (inferred types,
// duplicate button ids, reply targets) and takes its limits from the same WHATSAPP_LIMITS.

/** A value from `words`, in any case, with optional surrounding spaces; empty means "not given". */
const oneOfWords = (words: readonly string[]) => `^\\s*(?i:${words.join('|')})?\\s*$`;
/** A field that must be absent, with the refusal the send words for it. */
const absent = (message: string) => ({ not: {}, 'x-error': message }) as const;

const SMS_TYPES = ['plain', 'text', 'sms', 'whatsapp'] as const;
const RECIPIENT_REQUIRED = 'The recipient field is required when recipients is not present.';
const RECIPIENTS_REQUIRED = 'The recipients field is required when recipient is not present.';
const smsTypeRule = { pattern: oneOfWords(SMS_TYPES), 'x-error': 'The message type must be one of plain, text, sms or whatsapp.' };

/**
 * The characters a recipient list may hold: printable ASCII (what phone numbers and chat ids are
 * written with) and the whitespace that separates entries. Written out, not as \\s or \\p{…}, so
 * JavaScript and every generator read the class the same way; checkRecipients refuses the rest.
 */
const JS_SPACE = RECIPIENT_SPACE;
const recipientText = { pattern: `^[ -~${JS_SPACE}]*$`, 'x-error': RECIPIENT_CHARACTERS } as const;

/** Each number at most 191 characters once split at separators, at most 1,000 distinct numbers: checked by the send. */
const recipients = {
  type: 'array',
  maxItems: MAX_RECIPIENTS_PER_REQUEST,
  items: { type: 'string', maxLength: RECIPIENT_MAX_LENGTH, ...recipientText },
  description: `Entries may hold several numbers (same separators); at most ${MAX_RECIPIENTS_PER_REQUEST} distinct recipients per request in all`,
} as const;

/** Printable ASCII other than the separators: a list holding one names at least one recipient. */
const NAMES_ONE = '[!-+\\--:<-~]';
/** At least one recipient in all (checkRecipients says the same, in the same words). */
const someRecipient = {
  anyOf: [
    {
      required: ['recipient'],
      properties: { recipient: { type: 'string', pattern: NAMES_ONE, 'x-error': RECIPIENT_REQUIRED } },
      'x-error': RECIPIENT_REQUIRED,
    },
    {
      required: ['recipients'],
      properties: { recipients: { type: 'array', contains: { type: 'string', pattern: NAMES_ONE }, 'x-error': RECIPIENTS_REQUIRED } },
      'x-error': RECIPIENTS_REQUIRED,
    },
  ],
} as const;

/** The body of POST /sms/send: the operation's input schema, and the type the service takes. */
export const smsSendBody = {
  type: 'object',
  properties: {
    recipient: {
      type: 'string',
      maxLength: 4000,
      ...recipientText,
      description: 'One or more numbers separated by comma, semicolon or whitespace',
    },
    recipients,
    sender_id: { type: 'string', maxLength: 64 },
    message: { type: 'string', maxLength: 4096, description: 'Takes precedence over body' },
    body: { type: 'string', maxLength: 4096 },
    message_type: {
      type: 'string',
      maxLength: 60,
      allOf: [smsTypeRule],
      description: 'plain, text, sms (default plain); whatsapp routes to the chat channel. Any case.',
    },
    type: { type: 'string', maxLength: 60, description: 'Alias of message_type, read only when message_type is absent' },
    schedule_time: { ...scheduleTimeSchema, description: 'ISO 8601 with offset; a future time queues the message' },
    media_url: { type: 'string', maxLength: 2048 },
    media_type: { type: 'string', maxLength: 32 },
    tenant_channel_id: { description: 'Ignored: the route is resolved from sender_id' },
  },
  if: { not: { required: ['message_type'] } },
  then: { properties: { type: { allOf: [smsTypeRule] } } },
  allOf: [someRecipient],
  // The reference page's request sample (api/http/examples.ts).
  examples: [{ recipient: '+255712345678', message: 'Your order is ready for pickup.' }],
} as const;
export type SmsSendInput = FromSchema<typeof smsSendBody>;

const L = WHATSAPP_LIMITS;
const text = (maxLength?: number) => ({ type: 'string', minLength: 1, ...(maxLength ? { maxLength } : {}) }) as const;
const whatsappTypeRule = { pattern: oneOfWords(WHATSAPP_KINDS), 'x-error': 'The selected message type is invalid.' };

const buttonAction = {
  type: 'object',
  required: ['buttons'],
  properties: {
    buttons: {
      type: 'array',
      minItems: 1,
      maxItems: L.buttons,
      items: {
        type: 'object',
        required: ['type', 'reply'],
        properties: {
          type: { const: 'reply' },
          reply: { type: 'object', required: ['id', 'title'], properties: { id: text(L.buttonId), title: text(L.buttonTitle) } },
        },
      },
    },
  },
} as const;
const listAction = {
  type: 'object',
  required: ['button', 'sections'],
  properties: {
    button: text(),
    sections: {
      type: 'array',
      minItems: 1,
      items: {
        type: 'object',
        required: ['rows'],
        properties: {
          rows: {
            type: 'array',
            minItems: 1,
            items: {
              type: 'object',
              required: ['id', 'title'],
              properties: { id: text(), title: text(L.rowTitle), description: { type: 'string', maxLength: L.rowDescription } },
            },
          },
        },
      },
    },
  },
} as const;
/** Reply buttons and lists are checked to the contract's limits; other interactive types are the provider's to judge. */
const interactive = {
  type: 'object',
  required: ['type'],
  properties: {
    type: { enum: WHATSAPP_INTERACTIVE_TYPES },
    body: { type: 'object', properties: { text: text(L.interactiveBody) } },
    action: { type: 'object' },
  },
  allOf: [
    {
      if: { properties: { type: { const: 'button' } }, required: ['type'] },
      then: { required: ['body', 'action'], properties: { body: { required: ['text'] }, action: buttonAction } },
    },
    {
      if: { properties: { type: { const: 'list' } }, required: ['type'] },
      then: { required: ['body', 'action'], properties: { body: { required: ['text'] }, action: listAction } },
    },
  ],
} as const;
const template = {
  type: 'object',
  required: ['name'],
  properties: {
    name: text(L.templateName),
    language: { type: 'string', maxLength: L.templateLanguage, description: 'Defaults to en' },
    components: {
      type: 'array',
      items: {
        type: 'object',
        required: ['type', 'parameters'],
        properties: {
          type: text(),
          parameters: {
            type: 'array',
            items: {
              type: 'object',
              required: ['type'],
              properties: { type: text() },
              if: { properties: { type: { const: 'text' } }, required: ['type'] },
              then: { required: ['text'], properties: { text: text() } },
            },
          },
        },
      },
    },
  },
} as const;

const reactionExcludes = {
  properties: {
    message: absent('A reaction cannot carry text.'),
    body: absent('A reaction cannot carry text.'),
    media_url: absent('A reaction cannot carry media.'),
    template: absent('A reaction cannot be combined with a template.'),
    interactive: absent('A reaction cannot be combined with interactive content.'),
  },
} as const;
const templateExcludes = {
  properties: {
    media_url: absent('A template cannot be combined with media_url.'),
    interactive: absent('A template cannot be combined with an interactive payload.'),
  },
} as const;
const interactiveExcludes = { properties: { media_url: absent('An interactive payload cannot be combined with media_url.') } } as const;
const kindIs = (kind: string) => ({ properties: { message_type: { const: kind } }, required: ['message_type'] }) as const;

/** The body of POST /whatsapp/send. */
export const whatsappSendBody = {
  type: 'object',
  properties: {
    recipient: {
      type: 'string',
      maxLength: 4000,
      ...recipientText,
      description: 'One or more numbers separated by comma, semicolon or whitespace',
    },
    recipients,
    sender_id: { type: 'string', maxLength: 64, description: 'A provider phone-number id of the account (not a local channel id)' },
    message: { type: 'string', maxLength: L.message },
    body: { type: 'string', maxLength: L.message },
    message_type: {
      type: 'string',
      maxLength: 60,
      allOf: [whatsappTypeRule],
      description: `${WHATSAPP_KINDS.join(', ')} (any case); inferred from the payload when absent`,
    },
    type: { type: 'string', maxLength: 60, description: 'Alias of message_type, read only when message_type is absent' },
    schedule_time: scheduleTimeSchema,
    in_reply_to_gateway_id: {
      type: 'string',
      maxLength: L.providerId,
      description: 'Provider message id (gateway_message_id); a local uid is not valid',
    },
    media_url: { type: 'string', maxLength: L.mediaUrl },
    media_type: { type: 'string', maxLength: L.mediaType },
    template,
    interactive,
    reaction: { type: 'object', properties: { message_id: { type: 'string', maxLength: L.providerId }, emoji: { type: 'string' } } },
  },
  // One payload per message: a reaction carries nothing else; a template or an interactive payload no media.
  dependentSchemas: { reaction: reactionExcludes, template: templateExcludes, interactive: interactiveExcludes },
  allOf: [
    { if: { not: { required: ['message_type'] } }, then: { properties: { type: { allOf: [whatsappTypeRule] } } } },
    { if: kindIs('reaction'), then: reactionExcludes },
    { if: kindIs('template'), then: { ...templateExcludes, required: ['template'] } },
    { if: kindIs('interactive'), then: { ...interactiveExcludes, required: ['interactive'] } },
    { if: kindIs('text'), then: { anyOf: [{ required: ['message'] }, { required: ['body'] }] } },
    someRecipient,
  ],
} as const;
