// Synchronous validation of a Cloud API send (notes §1.3–1.4). Anything Meta rejects at once must be
// rejected here too, otherwise our service would pass tests against the simulator and fail in production.
import { arr, badParam, GraphProblem, invalid, isObj, missing, obj, str, validateMedia } from './graph-errors.js';
import type { TemplateDef } from './state.js';
import { validateInteractive } from './whatsapp-interactive.js';
import { validateTemplate, type ManagedTemplate } from './whatsapp-template.js';

export const MESSAGE_TYPES = [
  'text',
  'image',
  'video',
  'audio',
  'document',
  'sticker',
  'interactive',
  'reaction',
  'template',
  'location',
  'contacts',
] as const;
export type MessageType = (typeof MESSAGE_TYPES)[number];

export interface ValidMessage {
  to: string;
  waId: string;
  type: MessageType;
  /** Pricing category for status webhooks: the template's, or "service" for free-form replies. */
  category: string;
}

export interface ValidationContext {
  templates: Map<string, TemplateDef>;
  strictTemplates: boolean;
  /** A template made through the template management API (whatsapp-templates.ts), by name and language. */
  managed?: (name: string, language: string) => ManagedTemplate | undefined;
}

export function validateMessage(
  body: unknown,
  vctx: ValidationContext,
): { ok: true; msg: ValidMessage } | { ok: false; problem: GraphProblem } {
  try {
    return { ok: true, msg: check(body, vctx) };
  } catch (err) {
    if (err instanceof GraphProblem) return { ok: false, problem: err };
    throw err;
  }
}

function check(body: unknown, vctx: ValidationContext): ValidMessage {
  if (!isObj(body)) throw badParam('The request body must be a JSON object.');
  if (body.messaging_product === undefined) throw missing('messaging_product');
  if (body.messaging_product !== 'whatsapp') throw badParam("Param messaging_product must be 'whatsapp'.");
  const recipientType = body.recipient_type ?? 'individual';
  if (recipientType !== 'individual') {
    // Groups have their own API and rules; until the simulator models them, refuse loudly.
    throw badParam(`Param recipient_type '${String(recipientType)}' is not supported by the simulator (only 'individual').`);
  }
  const to = str(body, 'to', 'to', 32) as string;
  if (!/^\+?[\d\s\-()]+$/.test(to)) throw badParam(`Param to '${to}' is not a valid phone number.`);
  const waId = to.replace(/\D/g, '');
  if (waId.length < 8 || waId.length > 15) throw badParam(`Param to '${to}' is not a valid phone number.`);

  const type = (body.type ?? 'text') as MessageType;
  if (!MESSAGE_TYPES.includes(type)) {
    throw badParam(`Param type must be one of {${MESSAGE_TYPES.map((t) => t.toUpperCase()).join(', ')}} - got "${String(type)}".`);
  }
  // `contacts` is the one type whose content is an array rather than an object.
  const content = type === 'contacts' ? {} : (obj(body, type, type) as Record<string, unknown>);

  if (body.context !== undefined) {
    if (type === 'reaction') throw invalid('Context is not supported for reaction messages.');
    const context = obj(body, 'context', 'context') as Record<string, unknown>;
    str(context, 'message_id', 'context.message_id', 512);
  }
  if (body.biz_opaque_callback_data !== undefined) str(body, 'biz_opaque_callback_data', 'biz_opaque_callback_data', 512);

  let category = 'service';
  switch (type) {
    case 'text':
      str(content, 'body', 'text.body', 4096);
      if (content.preview_url !== undefined && typeof content.preview_url !== 'boolean')
        throw badParam('Param text.preview_url must be a boolean.');
      break;
    case 'image':
    case 'video':
    case 'document':
    case 'audio':
    case 'sticker':
      validateMedia(content, type);
      break;
    case 'interactive':
      validateInteractive(content);
      break;
    case 'reaction':
      str(content, 'message_id', 'reaction.message_id', 512);
      // An empty emoji is how a reaction is removed, so only the type is checked.
      if (typeof content.emoji !== 'string') throw missing('reaction.emoji');
      break;
    case 'template':
      category = validateTemplate(content, vctx.templates, vctx.strictTemplates, vctx.managed);
      break;
    case 'location':
      for (const k of ['latitude', 'longitude']) {
        if (content[k] === undefined) throw missing(`location.${k}`);
        if (typeof content[k] !== 'number' && (typeof content[k] !== 'string' || Number.isNaN(Number(content[k])))) {
          throw invalid(`Param location.${k} must be a number.`);
        }
      }
      break;
    case 'contacts':
      validateContacts(body);
      break;
  }
  return { to, waId, type, category };
}

function validateContacts(body: Record<string, unknown>): void {
  const contacts = arr(body, 'contacts', 'contacts', 1, 257);
  contacts.forEach((c, i) => {
    if (!isObj(c)) throw badParam(`Param contacts[${i}] must be a JSON object.`);
    const name = obj(c, 'name', `contacts[${i}].name`) as Record<string, unknown>;
    str(name, 'formatted_name', `contacts[${i}].name.formatted_name`, 1024);
  });
}
