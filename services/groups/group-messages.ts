import type { FromSchema } from 'json-schema-to-ts';
import { GROUP_LIMITS } from '../../domain/groups/index.js';
import { prepareWhatsAppMessage, WHATSAPP_LIMITS, WHATSAPP_MEDIA_KINDS, type WhatsAppSendInput } from '../../domain/messaging/index.js';
import { chatSenderOf, createOutboundMessages, messageRef } from '../messaging/index.js';
import { providerRegistry } from '../../providers/index.js';
import type { RequestContext } from '../platform/context.js';
import { DomainError, notFound, providerFailure, validationFailed, type FieldErrors } from '../platform/errors.js';
import { NOT_BLANK, TRIM_WHITESPACE } from '../../domain/platform/text-patterns.js';
import { loadGroup } from './group-row.js';
import { groupWindowOpen } from './store.js';
import { awaitGroupChange, groupMessageRequest, requireActive, requireSendPermission, type MemberServiceDeps } from './members.js';

// Messages into a group and pins (Endpoints > Chat-channel groups: {id}/messages, {id}/pin). A group
// message is an outbound message record like any chat send (the messaging family's record, message
// workflow and events), carrying the group's id and addressed to the group at the provider. Free-form
// content needs the group's window: a participant wrote within GROUP_LIMITS.windowHours (our rule,
// Notes §2.3); outside it only an approved template goes.

type OutboundDraft = Parameters<typeof createOutboundMessages>[2][number];

// A template's components, in the outline the chat send checks (validateComponent): each has a
// type and an array of parameters; a parameter has a type, and a text parameter its text.
const templateComponents = {
  type: 'array',
  items: {
    type: 'object',
    required: ['type', 'parameters'],
    properties: {
      type: { type: 'string', pattern: NOT_BLANK },
      parameters: {
        type: 'array',
        items: {
          type: 'object',
          required: ['type'],
          properties: { type: { type: 'string', pattern: NOT_BLANK } },
          if: { properties: { type: { const: 'text' } } },
          then: { required: ['text'], properties: { text: { type: 'string', pattern: NOT_BLANK } } },
        },
      },
    },
  },
} as const;

const templateObject = {
  type: 'object',
  required: ['name'],
  properties: {
    name: { type: 'string', minLength: 1, maxLength: WHATSAPP_LIMITS.templateName, pattern: NOT_BLANK },
    language: { type: 'string', minLength: 1, maxLength: WHATSAPP_LIMITS.templateLanguage, description: 'default en' },
    components: templateComponents,
  },
} as const;

/**
 * An http(s) link as the chat send reads it (HTTP_URL after trimming): a host, then no whitespace.
 * TRIM_WHITESPACE is what trim removes, written out (see NOT_BLANK); no NUL anywhere.
 */
const MEDIA_URL = `^[${TRIM_WHITESPACE}]*[hH][tT][tT][pP][sS]?://[^\\u0000${TRIM_WHITESPACE}/?#]+[^\\u0000${TRIM_WHITESPACE}]*[${TRIM_WHITESPACE}]*$`;

const groupMessageFields = {
  type: 'object',
  properties: {
    message: { type: 'string', maxLength: GROUP_LIMITS.messageText, description: 'text (or the caption of media)' },
    body: { type: 'string', maxLength: GROUP_LIMITS.messageText, description: 'alias of message; message wins' },
    media_url: { type: 'string', maxLength: WHATSAPP_LIMITS.mediaUrl, description: 'http(s) link of the media; needs media_type' },
    media_type: { enum: WHATSAPP_MEDIA_KINDS },
    template: {
      oneOf: [{ type: 'string', minLength: 1, maxLength: WHATSAPP_LIMITS.templateName, pattern: NOT_BLANK }, templateObject],
      description: 'an approved template: its name (language and components beside it) or {name, language, components}',
    },
    language: { type: 'string', minLength: 1, maxLength: WHATSAPP_LIMITS.templateLanguage, description: 'the template’s language' },
    components: { ...templateComponents, description: 'the template’s components' },
  },
  additionalProperties: false,
} as const;

/**
 * Exactly one kind of content, stated in the schema (it was only the send's rule, so a request the
 * document admitted, a template beside media, was refused): text (a message that is not blank, or
 * a body with no message), media (media_url with media_type; message as the caption), or a
 * template (with its language and components, and nothing else). `false` marks a field the kind
 * may not carry.
 */
export const groupMessageBody = {
  ...groupMessageFields,
  oneOf: [
    {
      required: ['message'],
      properties: {
        message: { pattern: NOT_BLANK },
        media_url: false,
        media_type: false,
        template: false,
        language: false,
        components: false,
      },
    },
    {
      required: ['body'],
      properties: {
        message: false,
        body: { pattern: NOT_BLANK },
        media_url: false,
        media_type: false,
        template: false,
        language: false,
        components: false,
      },
    },
    {
      required: ['media_url', 'media_type'],
      properties: { media_url: { pattern: MEDIA_URL }, template: false, language: false, components: false },
    },
    { required: ['template'], properties: { message: false, body: false, media_url: false, media_type: false } },
  ],
  description: 'Exactly one kind: text (message or body), media (media_url with media_type, message as caption), or a template.',
  'x-one-of-error': {
    field: 'message',
    message:
      'Send one kind of content: a message (or body), media_url with media_type (message as the caption), or a template with its language and components.',
  },
} as const;

export const pinBody = {
  type: 'object',
  required: ['message_uid', 'pin'],
  properties: {
    message_uid: {
      type: 'string',
      minLength: 1,
      maxLength: 64,
      description: 'the local uid of a message of this group (sent or received)',
    },
    pin: { type: 'boolean', description: 'true pins, false unpins' },
    expiration_days: {
      type: 'integer',
      minimum: GROUP_LIMITS.pinDaysMin,
      maximum: GROUP_LIMITS.pinDaysMax,
      description: `how long the pin holds (pinning only; default ${GROUP_LIMITS.pinDaysMax})`,
    },
  },
  additionalProperties: false,
} as const;

export type GroupMessageInput = FromSchema<typeof groupMessageFields>;
export type PinInput = FromSchema<typeof pinBody>;

/** The request in the chat send's words, exactly one kind of content. */
function asChatSend(input: GroupMessageInput): WhatsAppSendInput {
  const text = input.message ?? input.body;
  const hasText = text !== undefined && text.trim() !== '';
  const hasMedia = input.media_url !== undefined || input.media_type !== undefined;
  const hasTemplate = input.template !== undefined;
  const kinds = [hasText && !hasMedia, hasMedia, hasTemplate].filter(Boolean).length;
  const errors: FieldErrors = {};
  if (kinds === 0) errors.message = ['Send a message (or body), media_url with media_type, or a template.'];
  else if (hasTemplate && (hasText || hasMedia)) errors.template = ['A template cannot be combined with text or media; send one kind.'];
  if (!hasTemplate && (input.language !== undefined || input.components !== undefined))
    errors.template = ['language and components go with a template.'];
  if (Object.keys(errors).length) throw validationFailed(errors);
  if (hasTemplate) {
    const t = typeof input.template === 'string' ? { name: input.template } : input.template!;
    return {
      template: {
        name: t.name,
        language: ('language' in t ? t.language : undefined) ?? input.language,
        components: ('components' in t ? t.components : undefined) ?? input.components,
      },
    };
  }
  return hasMedia ? { media_url: input.media_url, media_type: input.media_type, message: text } : { message: text };
}

/**
 * POST {id}/messages: one outbound record of the group, sent through the message workflow; the
 * answer waits for the provider's first word (a refusal is 502), as product sends do. Refused
 * (422) before anything is written: content that breaks the chat rules, free-form content outside
 * the group's window.
 */
export async function sendGroupMessage(rc: RequestContext, deps: MemberServiceDeps, id: string, input: GroupMessageInput) {
  requireSendPermission(rc);
  const { errors, prepared } = prepareWhatsAppMessage(asChatSend(input));
  if (Object.keys(errors).length || !prepared) throw validationFailed(errors);
  const group = await loadGroup(rc, id);
  requireActive(group, 'sent messages');
  if (prepared.kind !== 'template') {
    if (!(await groupWindowOpen(rc.em, group.id, GROUP_LIMITS.windowHours)))
      throw new DomainError(
        'invalid',
        `No participant wrote in this group within the last ${GROUP_LIMITS.windowHours} hours: free-form messages are refused; send an approved template instead.`,
        { reason: 'outside_window', errors: { message: ['Outside the 24-hour group window: use an approved template.'] } },
      );
  }
  const sender = await chatSenderOf(rc.em, rc.account.id, group.sender_phone_number_id);
  const metadata = { ...prepared.metadata, chat_group_id: Number(group.id), provider_group_id: group.provider_group_id };
  const draft: OutboundDraft = {
    channelType: 'whatsapp',
    channelId: group.channel_id,
    channelCode: `whatsapp:${group.sender_phone_number_id}`,
    sender: sender?.number ?? null,
    recipient: group.provider_group_id,
    body: prepared.previewBody,
    mediaUrl: prepared.mediaUrl,
    mediaType: prepared.mediaType,
    metadata,
    templateParams: prepared.templateParams as Record<string, unknown> | null,
    segments: 1,
    encoding: 'UCS-2',
    scheduledAt: null,
    failure: null,
    chatGroupId: Number(group.id),
    providerRequest: groupMessageRequest(
      providerRegistry(deps.config).chatGroups(),
      group.sender_phone_number_id,
      group.provider_group_id,
      prepared,
    ),
  };
  const [message] = await createOutboundMessages(rc, deps, [draft], { answered: true });
  if (message.status === 'failed' && !message.gateway_message_id) {
    throw providerFailure(`The chat provider refused the group message: ${message.error_message ?? 'no reason given'}`, {
      uid: message.uid,
      error_message: message.error_message,
    });
  }
  return { ...message, group_id: Number(group.id) };
}

/**
 * POST {id}/pin: pins (for expiration_days, default 30) or unpins one message of this group at the
 * provider, through the chat-group change workflow (members.ts: awaitGroupChange; a refusal is 502).
 * The message must be this group's (sent or received) and known to the provider.
 */
export async function pinGroupMessage(rc: RequestContext, deps: MemberServiceDeps, id: string, input: PinInput) {
  const group = await loadGroup(rc, id);
  requireActive(group, 'changed');
  const m = await messageRef(rc.em, rc.account.id, input.message_uid.trim());
  if (!m) throw notFound('Message');
  if (m.chat_group_id === null || Number(m.chat_group_id) !== Number(group.id))
    throw validationFailed({ message_uid: ['The message is not a message of this group.'] });
  if (!m.gateway_message_id)
    throw validationFailed({ message_uid: ['The provider has not accepted this message yet; pin it once it is sent.'] });
  const days = input.pin ? (input.expiration_days ?? GROUP_LIMITS.pinDaysMax) : null;
  await awaitGroupChange(
    deps,
    group,
    { kind: 'pin', pin: input.pin, messageId: m.gateway_message_id, expirationDays: days },
    input.pin ? 'pin the message' : 'unpin the message',
  );
  return { group_id: Number(group.id), message_uid: m.uid, pinned: input.pin, expiration_days: days };
}
