import type { PreparedWhatsAppMessage } from '../../domain/messaging/whatsapp-message.js';
import { toE164 } from '../platform/phones.js';
import { providerRegistry } from '../../providers/index.js';
import { validationFailed } from '../platform/errors.js';
import type { RequestContext } from '../platform/context.js';
import { createOutboundMessages, type MessageServiceDeps } from './outbound.js';
import { resolveWhatsAppSender } from './whatsapp.js';

export interface ChatInteractiveSend {
  /** One customer: a phone number (E.164, or digits with a country code). */
  to: string;
  /** A provider phone-number id (or the number) of the account; absent means its first chat number. */
  senderId?: string;
  /** The Cloud API `interactive` object, already checked by the caller's own rules. */
  interactive: Record<string, unknown>;
  /** What the local record's body shows (never sent). */
  previewBody: string;
  /** Kept on the record beside the interactive payload (what the send was about). */
  metadata?: Record<string, unknown>;
  /**
   * Whether the caller answers with the provider's first verdict (default true: waits for it). A
   * send from a workflow's activity (a form's question) does not: it is queued like any send, so a
   * busy provider never holds the activity.
   */
  answered?: boolean;
}

/**
 * One interactive chat message built by another family (product messages), sent through the same
 * path as POST /whatsapp/send: one record, the provider request stored with it, the message
 * workflow, and the provider's first answer: the caller answers with it (a refusal is 502), so this
 * send waits for it whatever the load (`answeredSendWaitMs`); past that it answers queued. A number the
 * account has no chat configuration for, or a recipient that is not a number, is refused (422)
 * before anything is written.
 */
export async function sendChatInteractive(rc: RequestContext, deps: MessageServiceDeps, send: ChatInteractiveSend) {
  return sendChatMessage(rc, deps, send, {
    kind: 'interactive',
    previewBody: send.previewBody,
    caption: null,
    mediaUrl: null,
    mediaType: null,
    templateParams: null,
    metadata: { source: 'api', ...send.metadata, interactive: send.interactive },
  });
}

/** One plain text chat message built by another family (a form's question), sent as sendChatInteractive sends. */
export async function sendChatText(
  rc: RequestContext,
  deps: MessageServiceDeps,
  send: { to: string; senderId?: string; body: string; metadata?: Record<string, unknown>; answered?: boolean },
) {
  return sendChatMessage(rc, deps, send, {
    kind: 'text',
    previewBody: send.body,
    caption: null,
    mediaUrl: null,
    mediaType: null,
    templateParams: null,
    metadata: { source: 'api', ...send.metadata },
  });
}

async function sendChatMessage(
  rc: RequestContext,
  deps: MessageServiceDeps,
  send: { to: string; senderId?: string; answered?: boolean },
  prepared: PreparedWhatsAppMessage,
) {
  const to = toE164(send.to);
  if (!to) throw validationFailed({ to: ['The recipient must be a phone number in international format.'] });
  const from = await resolveWhatsAppSender(rc, send.senderId);
  const chat = providerRegistry(deps.config).chat(from.provider);
  const [message] = await createOutboundMessages(
    rc,
    deps,
    [
      {
        channelType: 'whatsapp',
        channelId: from.channel_id,
        channelCode: `whatsapp:${from.provider_phone_number_id}`,
        sender: from.number,
        recipient: to,
        body: prepared.previewBody,
        metadata: prepared.metadata,
        segments: 1,
        encoding: 'UCS-2',
        scheduledAt: null,
        failure: null,
        providerRequest: chat.buildPayload({ providerPhoneNumberId: from.provider_phone_number_id }, to, prepared, null),
      },
    ],
    send.answered === false ? { queued: true } : { answered: true },
  );
  return message;
}
