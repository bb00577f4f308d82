// WhatsApp Cloud API request bodies (POST /{phone-number-id}/messages), built from a message the
// contract's rules already accepted (domain/messaging/whatsapp-message.ts).
import type { PreparedWhatsAppMessage, WhatsAppKind } from '../../domain/messaging/whatsapp-message.js';
import { isRecord } from '../http.js';

/** What a chat record stores until dispatch: the sending number's id and the Graph body. */
// A type alias (not an interface), so it is assignable to the registry's ChatRequest record.
export type CloudApiRequest = {
  phone_number_id: string;
  body: Record<string, unknown>;
};

const NO_CAPTION: ReadonlySet<WhatsAppKind> = new Set(['audio', 'sticker']);

// Meta shows "Untitled" for a document sent without a filename; the link's last segment is the
// name the sender most likely meant.
function filenameFromUrl(url: string): string | null {
  const path = url.replace(/^[a-z]+:\/\/[^/?#]*/i, '').replace(/[?#].*$/, '');
  const last = path.split('/').pop() ?? '';
  if (!last) return null;
  try {
    return decodeURIComponent(last);
  } catch {
    return last;
  }
}

/** The WhatsApp Cloud API request body for one recipient (E.164 digits without '+' in `to`). */
export function buildCloudApiPayload(p: PreparedWhatsAppMessage, to: string, replyTo: string | null): Record<string, unknown> {
  const payload: Record<string, unknown> = {
    messaging_product: 'whatsapp',
    recipient_type: 'individual',
    to: to.replace(/\D/g, ''),
    type: p.kind,
  };
  switch (p.kind) {
    case 'text':
      payload.text = { body: p.previewBody, preview_url: false };
      break;
    case 'template': {
      if (!p.templateParams) throw new Error('template message without templateParams');
      const { name, language, components } = p.templateParams;
      payload.template = { name, language: { code: language }, ...(components.length ? { components } : {}) };
      break;
    }
    case 'interactive':
      if (!isRecord(p.metadata.interactive)) throw new Error('interactive message without metadata.interactive');
      payload.interactive = p.metadata.interactive;
      break;
    case 'reaction': {
      const reaction = p.metadata.reaction;
      if (!isRecord(reaction)) throw new Error('reaction message without metadata.reaction');
      payload.reaction = { message_id: reaction.message_id, emoji: reaction.emoji };
      // Meta rejects context on reactions; the target is already reaction.message_id.
      return payload;
    }
    default: {
      if (!p.mediaUrl) throw new Error(`${p.kind} message without mediaUrl`);
      const media: Record<string, unknown> = { link: p.mediaUrl };
      if (p.caption && !NO_CAPTION.has(p.kind)) media.caption = p.caption;
      if (p.kind === 'document') {
        const filename = filenameFromUrl(p.mediaUrl);
        if (filename) media.filename = filename;
      }
      payload[p.kind] = media;
    }
  }
  if (replyTo) payload.context = { message_id: replyTo };
  return payload;
}

/** A stored request as read back from the record; null when it is not one of ours. */
export function readCloudApiRequest(r: Record<string, unknown>): CloudApiRequest | null {
  return typeof r.phone_number_id === 'string' && isRecord(r.body) ? { phone_number_id: r.phone_number_id, body: r.body } : null;
}
