// Validation for POST /api/v3/whatsapp/send (contract "Chat-channel messages"): the contract's rules,
// which yield a provider-neutral prepared message; the provider's request body is built from it by the
// chat adapter (providers/whatsapp-cloud/payload.ts). Pure: no I/O, Node built-ins or clock.
// Recipients, sender_id and schedule_time are shared with the SMS send and are validated by the
// endpoint, not here.

export interface WhatsAppSendInput {
  recipient?: string;
  recipients?: string[];
  sender_id?: string;
  message?: string;
  body?: string;
  message_type?: string;
  type?: string;
  schedule_time?: string;
  in_reply_to_gateway_id?: string;
  media_url?: string;
  media_type?: string;
  template?: { name?: unknown; language?: unknown; components?: unknown };
  interactive?: unknown;
  reaction?: { message_id?: unknown; emoji?: unknown };
}

export type WhatsAppKind = 'text' | 'template' | 'image' | 'video' | 'audio' | 'document' | 'sticker' | 'interactive' | 'reaction';
export type WhatsAppMediaKind = Extract<WhatsAppKind, 'image' | 'video' | 'audio' | 'document' | 'sticker'>;

export interface WhatsAppTemplateParams {
  name: string;
  language: string;
  components: unknown[];
}

export interface PreparedWhatsAppMessage {
  kind: WhatsAppKind;
  /** What the local record's body shows; for templates, interactive and audio/sticker it is never sent. */
  previewBody: string;
  /** Text the provider receives with the media; null for audio and sticker, which take no caption. */
  caption: string | null;
  mediaUrl: string | null;
  mediaType: WhatsAppMediaKind | null;
  templateParams: WhatsAppTemplateParams | null;
  /** { source: 'api', interactive?, reaction?: {message_id, emoji}, in_reply_to? } */
  metadata: Record<string, unknown>;
}

export type WhatsAppFieldErrors = Record<string, string[]>;

export const WHATSAPP_KINDS: readonly WhatsAppKind[] = [
  'text',
  'template',
  'image',
  'video',
  'audio',
  'document',
  'sticker',
  'interactive',
  'reaction',
];
export const WHATSAPP_MEDIA_KINDS: readonly WhatsAppMediaKind[] = ['image', 'video', 'audio', 'document', 'sticker'];
export const WHATSAPP_INTERACTIVE_TYPES: readonly string[] = [
  'button',
  'list',
  'cta_url',
  'flow',
  'product',
  'product_list',
  'catalog_message',
  'location_request_message',
];

/** Limits from the contract's "Limits" table (Chat template, Chat reaction, Interactive, message). */
export const WHATSAPP_LIMITS = {
  message: 4096,
  mediaUrl: 2048,
  mediaType: 32,
  templateName: 191,
  templateLanguage: 20,
  providerId: 191,
  emoji: 16,
  buttons: 3,
  buttonId: 200,
  buttonTitle: 20,
  interactiveBody: 1024,
  rowTitle: 24,
  rowDescription: 72,
} as const;

const NO_CAPTION: ReadonlySet<WhatsAppKind> = new Set(['audio', 'sticker']);
// Public uids are "<prefix>_<random>"; a message uid sent as reply target would reach Meta and fail
// asynchronously, so it is refused up front.
const LOCAL_MESSAGE_UID = /^msg_/i;
const HTTP_URL = /^https?:\/\/[^\s/?#]+[^\s]*$/i;

// --- small helpers -------------------------------------------------------------------------------

function addError(errors: WhatsAppFieldErrors, key: string, message: string): void {
  const list = (errors[key] ??= []);
  if (!list.includes(message)) list.push(message);
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

// Blank strings count as absent, as the contract's "required" does (and as "message wins" needs:
// an empty message must not shadow a filled body).
function isPresent(v: unknown): boolean {
  return v !== undefined && v !== null && !(typeof v === 'string' && v.trim() === '');
}

// Limits count characters as users see them (code points), so one emoji is one character even
// though it is two UTF-16 units.
function charLength(s: string): number {
  if (s.length <= 1) return s.length;
  let n = 0;
  for (const _ of s) n++;
  return n;
}

/**
 * undefined = absent, null = present but not a string (error already recorded), string otherwise
 * (returned even when too long so callers do not also report "required").
 */
function readString(
  errors: WhatsAppFieldErrors,
  key: string,
  value: unknown,
  opts: { max?: number; required?: boolean; requiredMessage?: string } = {},
): string | null | undefined {
  if (!isPresent(value)) {
    if (opts.required) addError(errors, key, opts.requiredMessage ?? `The ${key} field is required.`);
    return undefined;
  }
  if (typeof value !== 'string') {
    addError(errors, key, `The ${key} field must be a string.`);
    return null;
  }
  if (opts.max !== undefined && charLength(value) > opts.max) {
    addError(errors, key, `The ${key} field must not be greater than ${opts.max} characters.`);
  }
  return value;
}

function checkProviderId(errors: WhatsAppFieldErrors, key: string, value: string | null | undefined): void {
  if (typeof value === 'string' && LOCAL_MESSAGE_UID.test(value.trim())) {
    addError(errors, key, `The ${key} field holds a local uid; use the provider message id (gateway_message_id).`);
  }
}

// --- interactive -------------------------------------------------------------------------------

function validateInteractiveBody(errors: WhatsAppFieldErrors, obj: Record<string, unknown>): void {
  if (obj.body !== undefined && obj.body !== null && !isObject(obj.body)) {
    addError(errors, 'interactive.body', 'The interactive.body field must be an object.');
    return;
  }
  const body = isObject(obj.body) ? obj.body : {};
  readString(errors, 'interactive.body.text', body.text, { required: true, max: WHATSAPP_LIMITS.interactiveBody });
}

function validateButtons(errors: WhatsAppFieldErrors, action: Record<string, unknown>): void {
  const key = 'interactive.action.buttons';
  const buttons = action.buttons;
  if (buttons === undefined || buttons === null) {
    addError(errors, key, `The ${key} field is required.`);
    return;
  }
  if (!Array.isArray(buttons)) {
    addError(errors, key, `The ${key} field must be an array.`);
    return;
  }
  if (buttons.length === 0) addError(errors, key, `The ${key} field must have at least 1 item.`);
  if (buttons.length > WHATSAPP_LIMITS.buttons) {
    addError(errors, key, `The ${key} field must not have more than ${WHATSAPP_LIMITS.buttons} items.`);
  }
  buttons.forEach((button, i) => {
    const at = `${key}.${i}`;
    if (!isObject(button)) {
      addError(errors, at, `The ${at} field must be an object.`);
      return;
    }
    if (button.type !== 'reply') addError(errors, `${at}.type`, `The ${at}.type field must be reply.`);
    if (!isObject(button.reply)) {
      addError(errors, `${at}.reply`, `The ${at}.reply field is required.`);
      return;
    }
    readString(errors, `${at}.reply.id`, button.reply.id, { required: true, max: WHATSAPP_LIMITS.buttonId });
    readString(errors, `${at}.reply.title`, button.reply.title, { required: true, max: WHATSAPP_LIMITS.buttonTitle });
  });
}

function validateList(errors: WhatsAppFieldErrors, action: Record<string, unknown>): void {
  readString(errors, 'interactive.action.button', action.button, { required: true });
  const key = 'interactive.action.sections';
  const sections = action.sections;
  if (!Array.isArray(sections) || sections.length === 0) {
    addError(
      errors,
      key,
      sections === undefined || sections === null ? `The ${key} field is required.` : `The ${key} field must be a non-empty array.`,
    );
    return;
  }
  sections.forEach((section, s) => {
    const at = `${key}.${s}`;
    if (!isObject(section)) {
      addError(errors, at, `The ${at} field must be an object.`);
      return;
    }
    if (!Array.isArray(section.rows) || section.rows.length === 0) {
      addError(errors, `${at}.rows`, `The ${at}.rows field must be a non-empty array.`);
      return;
    }
    section.rows.forEach((row, r) => {
      const rowAt = `${at}.rows.${r}`;
      if (!isObject(row)) {
        addError(errors, rowAt, `The ${rowAt} field must be an object.`);
        return;
      }
      readString(errors, `${rowAt}.id`, row.id, { required: true });
      readString(errors, `${rowAt}.title`, row.title, { required: true, max: WHATSAPP_LIMITS.rowTitle });
      readString(errors, `${rowAt}.description`, row.description, { max: WHATSAPP_LIMITS.rowDescription });
    });
  });
}

/** Returns the interactive object when it can be forwarded; only button and list are checked deeply. */
function validateInteractive(errors: WhatsAppFieldErrors, value: unknown): Record<string, unknown> | null {
  if (!isPresent(value)) {
    addError(errors, 'interactive', 'The interactive field is required.');
    return null;
  }
  if (!isObject(value)) {
    addError(errors, 'interactive', 'The interactive field must be an object.');
    return null;
  }
  const type = readString(errors, 'interactive.type', value.type, { required: true });
  if (typeof type !== 'string') return null;
  if (!WHATSAPP_INTERACTIVE_TYPES.includes(type)) {
    addError(errors, 'interactive.type', `The selected interactive.type is invalid; use one of ${WHATSAPP_INTERACTIVE_TYPES.join(', ')}.`);
    return null;
  }
  if (type === 'button' || type === 'list') {
    validateInteractiveBody(errors, value);
    if (!isObject(value.action)) {
      addError(errors, 'interactive.action', 'The interactive.action field is required.');
    } else if (type === 'button') {
      validateButtons(errors, value.action);
    } else {
      validateList(errors, value.action);
    }
  }
  return value;
}

// --- template ------------------------------------------------------------------------------------

function validateTemplate(errors: WhatsAppFieldErrors, value: unknown): WhatsAppTemplateParams | null {
  if (!isPresent(value)) {
    addError(errors, 'template.name', 'The template.name field is required.');
    return null;
  }
  if (!isObject(value)) {
    addError(errors, 'template', 'The template field must be an object.');
    return null;
  }
  const name = readString(errors, 'template.name', value.name, { required: true, max: WHATSAPP_LIMITS.templateName });
  const language = readString(errors, 'template.language', value.language, { max: WHATSAPP_LIMITS.templateLanguage });
  let components: unknown[] = [];
  if (value.components !== undefined && value.components !== null) {
    if (!Array.isArray(value.components)) {
      addError(errors, 'template.components', 'The template.components field must be an array.');
    } else {
      components = value.components;
      components.forEach((component, i) => validateComponent(errors, component, `template.components.${i}`));
    }
  }
  if (typeof name !== 'string' || language === null) return null;
  return { name, language: language ?? 'en', components };
}

// Only the outline the contract names (type, parameters of type and text) is checked; the rest of
// a component (sub_type, index, currency objects...) is Meta's to judge.
function validateComponent(errors: WhatsAppFieldErrors, component: unknown, at: string): void {
  if (!isObject(component)) {
    addError(errors, at, `The ${at} field must be an object.`);
    return;
  }
  readString(errors, `${at}.type`, component.type, { required: true });
  if (!Array.isArray(component.parameters)) {
    addError(
      errors,
      `${at}.parameters`,
      component.parameters === undefined || component.parameters === null
        ? `The ${at}.parameters field is required.`
        : `The ${at}.parameters field must be an array.`,
    );
    return;
  }
  component.parameters.forEach((param, j) => {
    const pAt = `${at}.parameters.${j}`;
    if (!isObject(param)) {
      addError(errors, pAt, `The ${pAt} field must be an object.`);
      return;
    }
    const type = readString(errors, `${pAt}.type`, param.type, { required: true });
    if (type === 'text') readString(errors, `${pAt}.text`, param.text, { required: true });
  });
}

// --- main ----------------------------------------------------------------------------------------

function resolveKind(
  errors: WhatsAppFieldErrors,
  input: WhatsAppSendInput,
  present: { template: boolean; interactive: boolean; reaction: boolean },
  mediaUrl: string | null | undefined,
  mediaType: string | null | undefined,
): { kind: WhatsAppKind | null; explicit: boolean } {
  // message_type wins over its alias `type`; the error names whichever field the value came from.
  const field = isPresent(input.message_type) ? 'message_type' : isPresent(input.type) ? 'type' : null;
  if (field) {
    const raw = readString(errors, field, input[field]);
    if (typeof raw !== 'string') return { kind: null, explicit: true };
    const normalized = raw.trim().toLowerCase();
    if (!(WHATSAPP_KINDS as readonly string[]).includes(normalized)) {
      addError(errors, field, `The selected ${field} is invalid.`);
      return { kind: null, explicit: true };
    }
    return { kind: normalized as WhatsAppKind, explicit: true };
  }
  if (present.template) return { kind: 'template', explicit: false };
  if (present.interactive) return { kind: 'interactive', explicit: false };
  if (present.reaction) return { kind: 'reaction', explicit: false };
  if (mediaUrl !== undefined) {
    if (mediaType === undefined) {
      addError(errors, 'media_type', 'The media_type field is required when media_url is present.');
      return { kind: null, explicit: false };
    }
    if (mediaType === null) return { kind: null, explicit: false };
    if (!(WHATSAPP_MEDIA_KINDS as readonly string[]).includes(mediaType)) {
      addError(errors, 'media_type', `The selected media_type is invalid; use one of ${WHATSAPP_MEDIA_KINDS.join(', ')}.`);
      return { kind: null, explicit: false };
    }
    return { kind: mediaType as WhatsAppKind, explicit: false };
  }
  return { kind: 'text', explicit: false };
}

/** Returns field errors keyed like {"template.name": ["..."]} (empty object = valid) plus the prepared message when valid. */
export function prepareWhatsAppMessage(input: WhatsAppSendInput): {
  errors: WhatsAppFieldErrors;
  prepared: PreparedWhatsAppMessage | null;
} {
  const errors: WhatsAppFieldErrors = {};
  const src: WhatsAppSendInput = isObject(input) ? input : {};

  const message = readString(errors, 'message', src.message, { max: WHATSAPP_LIMITS.message });
  const body = readString(errors, 'body', src.body, { max: WHATSAPP_LIMITS.message });
  const text = typeof message === 'string' ? message : typeof body === 'string' ? body : undefined;

  const mediaUrl = readString(errors, 'media_url', src.media_url, { max: WHATSAPP_LIMITS.mediaUrl });
  if (typeof mediaUrl === 'string' && !HTTP_URL.test(mediaUrl.trim())) {
    addError(errors, 'media_url', 'The media_url field must be a valid http or https URL.');
  }
  const mediaTypeRaw = readString(errors, 'media_type', src.media_type, { max: WHATSAPP_LIMITS.mediaType });
  const mediaType = typeof mediaTypeRaw === 'string' ? mediaTypeRaw.trim().toLowerCase() : mediaTypeRaw;

  const inReplyTo = readString(errors, 'in_reply_to_gateway_id', src.in_reply_to_gateway_id, { max: WHATSAPP_LIMITS.providerId });
  checkProviderId(errors, 'in_reply_to_gateway_id', inReplyTo);

  const has = {
    text: message !== undefined || body !== undefined,
    media: mediaUrl !== undefined,
    template: isPresent(src.template),
    interactive: isPresent(src.interactive),
    reaction: isPresent(src.reaction),
  };
  const { kind, explicit } = resolveKind(errors, src, has, mediaUrl, mediaType);

  // Rule 1. A payload counts as present when either its object or the message_type names it, so
  // `message_type: reaction` with a body is refused just like a reaction object with a body.
  let conflicts = 0;
  const conflict = (key: string, msg: string) => {
    conflicts++;
    addError(errors, key, msg);
  };
  if (has.reaction || kind === 'reaction') {
    if (message !== undefined) conflict('message', 'A reaction cannot carry text.');
    if (body !== undefined) conflict('body', 'A reaction cannot carry text.');
    if (has.media) conflict('media_url', 'A reaction cannot carry media.');
    if (has.template) conflict('template', 'A reaction cannot be combined with a template.');
    if (has.interactive) conflict('interactive', 'A reaction cannot be combined with interactive content.');
  } else {
    if (has.template || kind === 'template') {
      if (has.media) conflict('media_url', 'A template cannot be combined with media_url.');
      if (has.interactive) conflict('interactive', 'A template cannot be combined with an interactive payload.');
    }
    if ((has.interactive || kind === 'interactive') && has.media) {
      conflict('media_url', 'An interactive payload cannot be combined with media_url.');
    }
  }
  // Content that does not belong to the chosen message_type would otherwise be dropped silently.
  if (kind && conflicts === 0) {
    if (has.template && kind !== 'template') addError(errors, 'template', `The template field cannot be used with message_type ${kind}.`);
    if (has.interactive && kind !== 'interactive')
      addError(errors, 'interactive', `The interactive field cannot be used with message_type ${kind}.`);
    if (has.reaction && kind !== 'reaction') addError(errors, 'reaction', `The reaction field cannot be used with message_type ${kind}.`);
    if (has.media && !(WHATSAPP_MEDIA_KINDS as readonly string[]).includes(kind)) {
      addError(errors, 'media_url', `The media_url field cannot be used with message_type ${kind}.`);
    }
  }

  const metadata: Record<string, unknown> = { source: 'api' };
  let previewBody = '';
  let caption: string | null = null;
  let preparedMedia: { url: string; type: WhatsAppMediaKind } | null = null;
  let templateParams: WhatsAppTemplateParams | null = null;

  switch (kind) {
    case null:
      break;
    case 'text':
      if (!has.text) addError(errors, 'message', 'The message field is required when body is not present.');
      previewBody = text ?? '';
      break;
    case 'template': {
      templateParams = validateTemplate(errors, src.template);
      // Rule 2: the message is only what the local record shows; the provider renders the template.
      previewBody = text ?? (templateParams ? `[template: ${templateParams.name} (${templateParams.language})]` : '');
      break;
    }
    case 'interactive': {
      const interactive = validateInteractive(errors, src.interactive);
      if (interactive) metadata.interactive = interactive;
      const bodyText =
        interactive && isObject(interactive.body) && typeof interactive.body.text === 'string' ? interactive.body.text : undefined;
      previewBody = text ?? bodyText ?? `[interactive: ${String(interactive?.type ?? '')}]`;
      break;
    }
    case 'reaction': {
      const reaction = src.reaction as unknown;
      if (has.reaction && !isObject(reaction)) {
        addError(errors, 'reaction', 'The reaction field must be an object.');
        break;
      }
      const r = isObject(reaction) ? reaction : {};
      // Rule 6: an empty emoji would remove a reaction at Meta, which the contract does not offer.
      const emoji = readString(errors, 'reaction.emoji', r.emoji, { required: true, max: WHATSAPP_LIMITS.emoji });
      let target = readString(errors, 'reaction.message_id', r.message_id, { max: WHATSAPP_LIMITS.providerId });
      checkProviderId(errors, 'reaction.message_id', target);
      if (target === undefined) target = inReplyTo;
      if (target === undefined) {
        addError(errors, 'reaction.message_id', 'The reaction.message_id field is required when in_reply_to_gateway_id is not present.');
      }
      if (typeof emoji === 'string' && typeof target === 'string') {
        metadata.reaction = { message_id: target, emoji };
        previewBody = `[reaction: ${emoji}]`;
      }
      break;
    }
    default: {
      // Media. With an explicit message_type the media_type must still be given and agree, so a
      // client never gets a different kind than it believes it sent.
      if (explicit) {
        if (mediaUrl === undefined) addError(errors, 'media_url', `The media_url field is required when message_type is ${kind}.`);
        if (mediaType === undefined) addError(errors, 'media_type', `The media_type field is required when message_type is ${kind}.`);
        else if (typeof mediaType === 'string' && mediaType !== kind)
          addError(errors, 'media_type', `The media_type field must be ${kind} when message_type is ${kind}.`);
      }
      if (typeof mediaUrl === 'string') preparedMedia = { url: mediaUrl.trim(), type: kind };
      caption = NO_CAPTION.has(kind) ? null : (text ?? null);
      previewBody = text ?? `[${kind}]`;
      break;
    }
  }

  // A reaction's target lives in metadata.reaction; Meta refuses context on reactions.
  if (typeof inReplyTo === 'string' && kind !== 'reaction') metadata.in_reply_to = inReplyTo;

  if (Object.keys(errors).length > 0 || kind === null) return { errors, prepared: null };
  return {
    errors,
    prepared: {
      kind,
      previewBody,
      caption,
      mediaUrl: preparedMedia?.url ?? null,
      mediaType: preparedMedia?.type ?? null,
      templateParams,
      metadata,
    },
  };
}
