import { senderCandidates, smsChannel } from './store/routes.js';
import { validationFailed } from '../platform/errors.js';
import type { RequestContext } from '../platform/context.js';

export interface SmsChannel {
  channelId: number;
  channelCode: string;
  provider: string;
}
export interface ResolvedRoute extends SmsChannel {
  sender: string | null;
}

/**
 * Rule 6 of the SMS send: sender_id must name exactly one approved alphanumeric id, one assigned,
 * unreleased SMS-capable number or one active short code of the account. Without it the account's
 * default SMS channel is used, then the system default.
 */
export async function resolveSmsRoute(rc: RequestContext, senderId: string | undefined): Promise<ResolvedRoute> {
  const route = await smsSendRoute(rc, senderId);
  if (route !== 'default') return route;
  const channel = await channelFor(rc, null);
  if (!channel) throw noSmsRoute();
  return { ...channel, sender: null };
}

/** The refusal of an SMS send from an account with no route at all (neither its own default nor the system's). */
export const noSmsRoute = () => validationFailed({ sender_id: ['No SMS route is configured for this account.'] });

/**
 * The route of an SMS send as rule 6 says, except that without sender_id it answers 'default': the
 * account's default SMS channel, which the send statement reads itself (no lookup of its own on the
 * hot path; docs/decisions.md), refusing with noSmsRoute when there is none.
 */
export async function smsSendRoute(rc: RequestContext, senderId: string | undefined): Promise<ResolvedRoute | 'default'> {
  const accountId = rc.account.id;
  if (senderId !== undefined && senderId.trim() !== '') {
    const wanted = senderId.trim();
    const digits = wanted.replace(/[^\d]/g, '');
    const found = await senderCandidates(rc.em, accountId, wanted, digits);
    if (found.length === 0) throw validationFailed({ sender_id: ['The selected sender id is not registered on this account.'] });
    if (found.length > 1) throw validationFailed({ sender_id: ['The sender id is ambiguous: it matches more than one sending identity.'] });
    const c = found[0];
    if (!c.usable)
      throw validationFailed({
        sender_id: [`The sender id is not active (${c.kind.replace('_', ' ')} not approved, assigned or SMS-capable).`],
      });
    const channel = await channelFor(rc, c.channel_id);
    if (!channel) throw validationFailed({ sender_id: ['The sender id has no usable SMS route configured.'] });
    return { ...channel, sender: c.sender };
  }
  return 'default';
}

/** The account's SMS channel `channelId` (its default with null), if it may use it. */
export async function channelFor(rc: Pick<RequestContext, 'em' | 'account'>, channelId: number | null): Promise<SmsChannel | null> {
  const row = await smsChannel(rc.em, rc.account.id, channelId);
  return row ? { channelId: row.id, channelCode: row.code, provider: row.provider } : null;
}
