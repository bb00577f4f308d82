import { whatsappNumbers, whatsappSenders, type WhatsAppNumber } from './store/routes.js';
import { checkRecipients } from '../../domain/messaging/recipients.js';
import { prepareWhatsAppMessage, type WhatsAppSendInput } from '../../domain/messaging/whatsapp-message.js';
import { providerRegistry } from '../../providers/index.js';
import { validationFailed } from '../platform/errors.js';
import type { RequestContext } from '../platform/context.js';
import { createOutboundMessages, draftsFor, type MessageServiceDeps } from './outbound.js';
import { parseScheduleTime } from './messages.js';

/**
 * The business number a chat message goes out from: sender_id names a provider phone-number id (or
 * the number itself) of the account; without it the account's first WhatsApp number is used.
 */
export async function resolveWhatsAppSender(rc: RequestContext, senderId: string | undefined): Promise<WhatsAppNumber> {
  const numbers = await whatsappSenders(rc.em, rc.account.id);
  if (senderId === undefined || senderId.trim() === '') {
    if (!numbers.length) throw validationFailed({ sender_id: ['No WhatsApp business number is configured for this account.'] });
    return numbers[0];
  }
  const wanted = senderId.trim();
  const digits = wanted.replace(/[^\d]/g, '');
  const found = numbers.filter((n) => n.provider_phone_number_id === wanted || (digits && n.number.replace(/[^\d]/g, '') === digits));
  if (found.length !== 1) throw validationFailed({ sender_id: ['The sender id must be a WhatsApp phone number id of this account.'] });
  return found[0];
}

/** A check of a template send against the account's own templates: field problems, or null when it may go to the provider. */
export type TemplateSendCheck = (
  rc: RequestContext,
  businessAccountId: string | null,
  template: { name: string; language: string; components: readonly unknown[] },
) => Promise<Record<string, string[]> | null>;

/** POST /whatsapp/send: one record per recipient, the Cloud API body stored for the dispatch. */
export async function sendWhatsApp(
  rc: RequestContext,
  deps: MessageServiceDeps,
  input: WhatsAppSendInput,
  hooks: { checkTemplate?: TemplateSendCheck; metadata?: Record<string, unknown> } = {},
) {
  // Every recipient is checked before anything is created: a bad one refuses the whole request.
  const checked = checkRecipients(input.recipient, input.recipients);
  const recipients = checked.recipients;
  const { errors, prepared } = prepareWhatsAppMessage(input);
  Object.assign(errors, checked.errors);
  if (Object.keys(errors).length || !prepared) throw validationFailed(errors);
  // Another family's send says what it was about (a flow session's step: its source_key finds it again).
  if (hooks.metadata) prepared.metadata = { ...prepared.metadata, ...hooks.metadata };
  const scheduledAt = parseScheduleTime(input.schedule_time);
  const from = await resolveWhatsAppSender(rc, input.sender_id);
  // A template the account knows is checked before the provider is asked (approved, parameter counts).
  if (prepared.templateParams && hooks.checkTemplate) {
    const problems = await hooks.checkTemplate(rc, from.business_account_id ?? null, prepared.templateParams);
    if (problems) throw validationFailed(problems);
  }
  const replyTo = input.in_reply_to_gateway_id?.trim() || null;
  // The request is built now, by the adapter of the number's channel, and stored for the dispatch.
  const chat = providerRegistry(deps.config).chat(from.provider);
  return createOutboundMessages(
    rc,
    deps,
    draftsFor(
      recipients,
      {
        channelType: 'whatsapp',
        channelId: from.channel_id,
        channelCode: `whatsapp:${from.provider_phone_number_id}`,
        sender: from.number,
        body: prepared.previewBody,
        mediaUrl: prepared.mediaUrl,
        mediaType: prepared.mediaType,
        metadata: prepared.metadata,
        templateParams: prepared.templateParams as Record<string, unknown> | null,
        segments: 1,
        encoding: 'UCS-2',
        scheduledAt,
      },
      (e164) => ({ providerRequest: chat.buildPayload({ providerPhoneNumberId: from.provider_phone_number_id }, e164, prepared, replyTo) }),
    ),
  );
}

/** GET /whatsapp/accounts: business accounts and the numbers a message can be sent from. */
export async function listWhatsAppAccounts(rc: RequestContext) {
  const numbers = await whatsappNumbers(rc.em, rc.account.id);
  const byAccount = new Map<string, typeof numbers>();
  for (const n of numbers) {
    const key = n.business_account_id ?? 'default';
    byAccount.set(key, [...(byAccount.get(key) ?? []), n]);
  }
  return [...byAccount].map(([businessAccountId, nums]) => ({
    business_account_id: businessAccountId === 'default' ? null : businessAccountId,
    phone_numbers: nums.map((n) => ({
      id: n.id,
      sender_id: n.provider_phone_number_id,
      phone_number_id: n.provider_phone_number_id,
      display_phone_number: n.number,
      can_send: n.provider_phone_number_id !== null,
    })),
  }));
}
