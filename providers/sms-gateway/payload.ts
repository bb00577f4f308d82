// The SMS gateway's request bodies (Twilio's Messages resource, form-encoded).
import type { OutboundSms } from '../types.js';
import type { SmsSendRequest } from './client.js';
import { SMS_STATUS_PATH } from './webhook.js';

/** Phone numbers go out as +digits; anything that is not a plausible MSISDN is left for the provider to judge. */
export function toE164(raw: string): string {
  const compact = raw.replace(/[\s\-().]/g, '');
  return /^\+?\d{8,15}$/.test(compact) ? `+${compact.replace(/^\+/, '')}` : raw.trim();
}

/**
 * The request for one stored message: the status callback names the message's uid (so a receipt that
 * overtakes the send's answer still finds it), and the uid is the idempotency key.
 */
export function smsSendRequest(msg: OutboundSms, publicBaseUrl: string): SmsSendRequest {
  return {
    to: msg.to,
    from: msg.from,
    body: msg.body,
    mediaUrl: msg.mediaUrl,
    statusCallback: `${publicBaseUrl}${SMS_STATUS_PATH}?m=${encodeURIComponent(msg.uid)}`,
    idempotencyKey: msg.uid,
  };
}

/** The form posted to `…/Messages.json`. */
export function twilioMessageForm(r: SmsSendRequest, messagingServiceSid?: string): URLSearchParams {
  const form = new URLSearchParams();
  form.set('To', toE164(r.to));
  // toE164 leaves short codes and alphanumeric sender ids untouched, so they never gain a '+'.
  if (r.from) form.set('From', toE164(r.from));
  // Twilio otherwise rejects a send without From with 21603.
  else if (messagingServiceSid) form.set('MessagingServiceSid', messagingServiceSid);
  // Twilio accepts a media-only message; an empty Body field would be rejected as missing anyway.
  if (r.body !== '') form.set('Body', r.body);
  if (r.mediaUrl) form.append('MediaUrl', r.mediaUrl);
  if (r.statusCallback) form.set('StatusCallback', r.statusCallback);
  return form;
}
