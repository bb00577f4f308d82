import { many, one } from '../../entities/db.js';
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
 * The account's default SMS channel, else the system default (at most one row: id, code, provider).
 * `accountExpr` is an SQL expression for the account id; the authentication statement (api/auth.ts)
 * embeds this, so a send without sender_id needs no lookup of its own.
 */
export const defaultSmsChannelSql = (accountExpr: string) =>
  `select id, code, provider from channels where channel_type = 'sms' and active and is_default and (account_id = ${accountExpr} or account_id is null)
    order by account_id nulls last limit 1`;

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

interface Candidate {
  channel_id: number | null;
  sender: string;
  kind: string;
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
    const found = await many<Candidate & { usable: boolean }>(
      rc.em,
      `select channel_id, value as sender, 'alphanumeric' as kind, approval_status = 'approved' as usable
         from sender_ids where account_id = ? and lower(value) = lower(?)
       union all
       select channel_id, number, 'number', (not released and capabilities @> '"sms"'::jsonb)
         from phone_numbers where account_id = ? and ? <> '' and regexp_replace(number, '[^0-9]', '', 'g') = ?
       union all
       select channel_id, code, 'short_code', assignment_status = 'active'
         from short_codes where account_id = ? and code = ?`,
      [accountId, wanted, accountId, digits, digits, accountId, wanted],
    );
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
  const row = await one<{ id: number; code: string; provider: string }>(
    rc.em,
    channelId === null
      ? defaultSmsChannelSql('?')
      : `select id, code, provider from channels where id = ? and channel_type = 'sms' and active and (account_id = ? or account_id is null)`,
    channelId === null ? [rc.account.id] : [channelId, rc.account.id],
  );
  return row ? { channelId: row.id, channelCode: row.code, provider: row.provider } : null;
}
