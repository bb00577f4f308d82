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

export { defaultSmsChannelSql } from './store/routes.js';

/**
 * The default SMS channel read by this request's own authentication statement. Not a cache: it lives
 * only as long as the request context, and is as fresh as a lookup made here would be (a channel
 * deactivated after that statement is seen by the next request). A context built elsewhere (a
 * campaign activity, an operation run) has no entry and looks the channel up itself.
 */
const readWithAuthentication = new WeakMap<RequestContext, SmsChannel | null>();
export function rememberDefaultSmsChannel(rc: RequestContext, channel: SmsChannel | null): void {
  readWithAuthentication.set(rc, channel);
}

/**
 * Rule 6 of the SMS send: sender_id must name exactly one approved alphanumeric id, one assigned,
 * unreleased SMS-capable number or one active short code of the account. Without it the account's
 * default SMS channel is used, then the system default.
 */
export async function resolveSmsRoute(rc: RequestContext, senderId: string | undefined): Promise<ResolvedRoute> {
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
  const channel = await channelFor(rc, null);
  if (!channel) throw validationFailed({ sender_id: ['No SMS route is configured for this account.'] });
  return { ...channel, sender: null };
}

async function channelFor(rc: RequestContext, channelId: number | null): Promise<SmsChannel | null> {
  if (channelId === null && readWithAuthentication.has(rc)) return readWithAuthentication.get(rc) ?? null;
  const row = await smsChannel(rc.em, rc.account.id, channelId);
  return row ? { channelId: row.id, channelCode: row.code, provider: row.provider } : null;
}
