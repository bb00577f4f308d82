// What the SMS gateway posts to us (Twilio's shapes, form-encoded and signed with X-Twilio-Signature):
// status callbacks for our messages and messages customers send to our numbers.
import type { InboundMessage, StatusUpdate, WebhookRequest } from '../types.js';
import { mapSmsGatewayStatus, smsFailureMessage } from './status.js';

export const SMS_STATUS_PATH = '/providers/sms/status';
export const SMS_INBOUND_PATH = '/providers/sms/inbound';

/** The answer Twilio expects to an inbound message: TwiML with nothing to do. */
export const EMPTY_TWIML = '<?xml version="1.0" encoding="UTF-8"?><Response></Response>';

// The signature check and the parser both need the form; a request is read once.
const forms = new WeakMap<WebhookRequest, Record<string, string>>();
export function formParams(req: WebhookRequest): Record<string, string> {
  let params = forms.get(req);
  if (!params) {
    params = Object.fromEntries(new URLSearchParams(req.rawBody.toString('utf8')));
    forms.set(req, params);
  }
  return params;
}

/**
 * A status callback. Our callback URL names the message (`?m=<uid>`); the MessageSid is the
 * fallback. Interim statuses, and callbacks naming no message at all, yield nothing.
 */
export function parseSmsStatus(req: WebhookRequest): StatusUpdate[] {
  const params = formParams(req);
  const q = req.url.indexOf('?');
  const uid = q < 0 ? '' : (new URLSearchParams(req.url.slice(q + 1)).get('m') ?? '');
  const sid = params.MessageSid ?? params.SmsSid;
  const status = mapSmsGatewayStatus(params.MessageStatus ?? params.SmsStatus ?? '');
  if (!status || (!uid && !sid)) return [];
  const update: StatusUpdate = { type: 'status', status };
  if (uid) update.uid = uid;
  if (sid) update.providerMessageId = sid;
  if (status === 'failed') update.errorMessage = smsFailureMessage(params.ErrorCode);
  return [update];
}

/** A customer's message to one of our numbers (the first media item only). */
export function parseSmsInbound(req: WebhookRequest): InboundMessage[] {
  const p = formParams(req);
  return [
    {
      type: 'inbound',
      channelType: 'sms',
      businessNumber: { number: p.To ?? '' },
      from: p.From ?? '',
      body: p.Body ?? '',
      providerMessageId: p.MessageSid ?? p.SmsSid ?? '',
      mediaUrl: p.MediaUrl0 ?? null,
      mediaType: p.MediaContentType0 ?? null,
    },
  ];
}
