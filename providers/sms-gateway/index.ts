// The SMS gateway adapter (Twilio-shaped): everything about this provider, behind SmsProvider.
import type { SmsProvider, WebhookRequest } from '../types.js';
import { SmsGatewayClient, type SmsGatewayOptions } from './client.js';
import { smsSendRequest } from './payload.js';
import { verifyTwilioSignature } from './signature.js';
import { mapSmsGatewayStatus, smsFailureMessage } from './status.js';
import { EMPTY_TWIML, SMS_INBOUND_PATH, SMS_STATUS_PATH, formParams, parseSmsInbound, parseSmsStatus } from './webhook.js';

export interface SmsGatewaySettings extends SmsGatewayOptions {
  /** Our public origin: status callback URLs are built on it and Twilio signs the URL it called. */
  publicBaseUrl: string;
}

export function createSmsGateway(o: SmsGatewaySettings): SmsProvider {
  const client = new SmsGatewayClient(o);
  const header = (req: WebhookRequest) => {
    const v = req.headers['x-twilio-signature'];
    return typeof v === 'string' ? v : undefined;
  };
  return {
    key: 'sms-gateway',
    kind: 'sms',
    channelType: 'sms',
    statusesMayPrecedeSend: false,
    mapStatus: mapSmsGatewayStatus,
    verifySignature: (req) => verifyTwilioSignature(o.authToken, `${o.publicBaseUrl}${req.url}`, formParams(req), header(req)),
    send: (msg) => client.send(smsSendRequest(msg, o.publicBaseUrl)),
    async fetchStatus(providerMessageId) {
      const res = await client.fetchStatus(providerMessageId);
      if (!res.ok) return res;
      const status = mapSmsGatewayStatus(res.value.status);
      return { ok: true, value: status === 'failed' ? { status, errorMessage: smsFailureMessage(res.value.errorCode) } : { status } };
    },
    webhooks: [
      {
        method: 'POST',
        path: SMS_STATUS_PATH,
        summary: 'SMS gateway delivery receipt (Twilio-style, X-Twilio-Signature)',
        answer: { status: 204, description: 'Receipt applied', schema: { type: 'null' } },
        parse: parseSmsStatus,
      },
      {
        method: 'POST',
        path: SMS_INBOUND_PATH,
        summary: 'Inbound SMS (Twilio-style, X-Twilio-Signature)',
        answer: {
          status: 200,
          contentType: 'text/xml',
          body: EMPTY_TWIML,
          description: 'Stored (empty TwiML answer)',
          schema: { type: 'string' },
        },
        parse: parseSmsInbound,
      },
    ],
  };
}
