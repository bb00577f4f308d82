import { GROUP_LIMITS } from '../../domain/groups/index.js';
import { type PreparedWhatsAppMessage } from '../../domain/messaging/index.js';
import { toE164 } from '../platform/phones.js';
import { providerRegistry } from '../../providers/index.js';
import type { Client } from '@temporalio/client';
import type { Config } from '../../config.js';
import { chatSenderOf, createOutboundMessages } from '../messaging/index.js';
import type { RequestContext } from '../platform/context.js';
import { DomainError } from '../platform/errors.js';
import type { GroupRow } from './group-row.js';
import {
  claimInvitations,
  groupOfAccount,
  invitedWithMessage,
  lockGroup,
  participantsOf,
  recordInvitationMessage,
  releaseInvitations,
} from './store.js';

// Invitations (Notes §2.1: people join a WhatsApp group only through its invite link): one chat
// message per invitee, the group's invite template when one is named (its body parameter the
// group id), else a text carrying the invite link. Each invitee holds a place under the
// 8-participant limit (the business counts too) from the moment the invitation is recorded.

/** What a send through the messaging family needs (its MessageServiceDeps). */
export interface InvitationDeps {
  temporal: Client;
  config: Config;
}
type OutboundDraft = Parameters<typeof createOutboundMessages>[2][number];

export type InvitationSuccess = {
  recipient: string;
  message_uid: string;
  message_status: string;
};
export type InvitationFailure = {
  recipient: string;
  reason: string;
};
export interface InvitationResult {
  successes: InvitationSuccess[];
  failures: InvitationFailure[];
}

/** Template names as the Cloud API spells them. */
export const INVITE_TEMPLATE_LANGUAGE = 'en';

const digits = (e164: string) => e164.replace(/^\+/, '');

/** The invitation's message: the template with the group id as its body parameter, else the link in a text. */
function invitationMessage(group: GroupRow, template: string | null): PreparedWhatsAppMessage {
  const preview = `Join the WhatsApp group "${group.subject}": ${group.invite_link ?? ''}`.trim();
  const metadata = { source: 'group_invite', chat_group_id: Number(group.id) };
  if (template)
    return {
      kind: 'template',
      previewBody: preview,
      caption: null,
      mediaUrl: null,
      mediaType: null,
      templateParams: {
        name: template,
        language: INVITE_TEMPLATE_LANGUAGE,
        components: [{ type: 'body', parameters: [{ type: 'group_id', group_id: group.provider_group_id }] }],
      },
      metadata: { ...metadata, template: { name: template, language: INVITE_TEMPLATE_LANGUAGE } },
    };
  return { kind: 'text', previewBody: preview, caption: null, mediaUrl: null, mediaType: null, templateParams: null, metadata };
}

/**
 * Sends the group's invite link to each recipient and records them `invited`. Per recipient: a
 * success names the invitation message (its status is the message's: a text outside the 24-hour
 * window fails at the provider later, as any chat text does); a failure says why nothing was sent
 * (not a phone number, named twice, already in the group, removed from it, or no place left under
 * the limit: the business, members and pending invitations count). Someone already invited is sent
 * the link again without taking a second place. The group must be active.
 */
export async function inviteToGroup(
  rc: RequestContext,
  deps: InvitationDeps,
  group: GroupRow,
  recipients: readonly string[],
  template?: string | null,
): Promise<InvitationResult> {
  if (group.status !== 'active' || !group.provider_group_id)
    throw new DomainError('conflict', `A group in status ${group.status} cannot invite anyone.`, { reason: `group_${group.status}` });
  const useTemplate = template ?? group.invite_template ?? null;
  if (!useTemplate && !group.invite_link)
    throw new DomainError('conflict', 'The group has no invite link to send; reset its invite link first.', { reason: 'no_invite_link' });
  const failures: InvitationFailure[] = [];
  const wanted: { recipient: string; e164: string }[] = [];
  for (const r of recipients) {
    const e164 = toE164(r);
    if (!e164) failures.push({ recipient: r, reason: 'The recipient must be a phone number in international format.' });
    else if (wanted.some((w) => w.e164 === e164)) failures.push({ recipient: r, reason: 'The recipient is listed twice.' });
    else wanted.push({ recipient: r, e164 });
  }

  // Places are taken under the group's row lock, so two invitation calls cannot both fill the last place.
  const claimed = await rc.em.transactional(async (tx) => {
    await lockGroup(tx, group.id);
    const rows = await participantsOf(tx, group.id);
    const byWaId = new Map(rows.map((p) => [p.wa_id, p.status]));
    let taken = 1 + rows.filter((p) => p.status === 'invited' || p.status === 'joined').length;
    const out: { recipient: string; e164: string; fresh: boolean }[] = [];
    for (const w of wanted) {
      const status = byWaId.get(digits(w.e164));
      if (status === 'joined') failures.push({ recipient: w.recipient, reason: 'The recipient is already in the group.' });
      else if (status === 'removed')
        failures.push({
          recipient: w.recipient,
          reason: 'The recipient was removed from the group and cannot rejoin through the invite link.',
        });
      else if (status === 'invited') out.push({ ...w, fresh: false });
      else if (taken >= GROUP_LIMITS.participants)
        failures.push({
          recipient: w.recipient,
          reason: `The group is full: at most ${GROUP_LIMITS.participants} participants including the business and pending invitations.`,
        });
      else {
        taken++;
        out.push({ ...w, fresh: true });
      }
    }
    const fresh = out.filter((o) => o.fresh).map((o) => digits(o.e164));
    if (fresh.length) await claimInvitations(tx, group.account_id, group.id, fresh);
    return out;
  });
  if (!claimed.length) return { successes: [], failures: orderAsAsked(recipients, [], failures).failures };

  const sender = await chatSenderOf(rc.em, Number(group.account_id), group.sender_phone_number_id);
  const prepared = invitationMessage(group, useTemplate);
  const chat = providerRegistry(deps.config).chat(sender?.provider);
  const drafts: OutboundDraft[] = claimed.map((c) => ({
    channelType: 'whatsapp',
    channelId: group.channel_id,
    channelCode: `whatsapp:${group.sender_phone_number_id}`,
    sender: sender?.number ?? null,
    recipient: c.e164,
    body: prepared.previewBody,
    metadata: prepared.metadata,
    templateParams: prepared.templateParams as Record<string, unknown> | null,
    segments: 1,
    encoding: 'UCS-2',
    scheduledAt: null,
    failure: null,
    providerRequest: chat.buildPayload({ providerPhoneNumberId: group.sender_phone_number_id }, c.e164, prepared, null),
  }));
  let messages: { uid: string; status: string; recipient: string }[];
  try {
    messages = await createOutboundMessages(rc, deps, drafts);
  } catch (err) {
    // Nothing was sent (the wallet refused the whole send): the places go back.
    const fresh = claimed.filter((c) => c.fresh).map((c) => digits(c.e164));
    await releaseInvitations(rc.em, group.id, fresh);
    throw err;
  }
  const successes: InvitationSuccess[] = [];
  for (const [i, c] of claimed.entries()) {
    const m = messages[i];
    await recordInvitationMessage(rc.em, group.id, digits(c.e164), m.uid);
    successes.push({ recipient: c.recipient, message_uid: m.uid, message_status: m.status });
  }
  return orderAsAsked(recipients, successes, failures);
}

/** Successes and failures each in the order the recipients were given. */
function orderAsAsked(recipients: readonly string[], successes: InvitationSuccess[], failures: InvitationFailure[]): InvitationResult {
  const at = (r: string) => recipients.indexOf(r);
  return {
    successes: [...successes].sort((a, b) => at(a.recipient) - at(b.recipient)),
    failures: [...failures].sort((a, b) => at(a.recipient) - at(b.recipient)),
  };
}

/**
 * The creation's invitations (the invitees named at creation), at least once: a retry sends again
 * only to invitees whose invitation message was not recorded yet.
 */
export async function sendInitialInvitations(rc: RequestContext, deps: InvitationDeps, groupId: number): Promise<InvitationResult> {
  const group = await groupOfAccount(rc.em, groupId, rc.account.id);
  if (!group || group.status !== 'active' || !group.invitees.length) return { successes: [], failures: [] };
  const done = await invitedWithMessage(rc.em, group.id);
  const sent = new Set(done.map((d) => d.wa_id));
  const owed = group.invitees.filter((e164) => !sent.has(digits(e164)));
  if (!owed.length) return { successes: [], failures: [] };
  return inviteToGroup(rc, deps, group, owed, group.invite_template);
}
