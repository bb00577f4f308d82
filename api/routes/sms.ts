import type { AppDeps } from '../app.js';
import { successOf, emptyQuery, type RouteDef } from '../registry.js';
import { messageSchema } from '../../services/message-view.js';
import { sendSms, getMessage, type SmsSendInput } from '../../services/messages.js';

export const smsSendBody = {
  type: 'object',
  properties: {
    recipient: { type: 'string', maxLength: 4000, description: 'One or more numbers separated by comma, semicolon or whitespace' },
    recipients: { type: 'array', items: { type: 'string', maxLength: 191 } },
    sender_id: { type: 'string', maxLength: 64 },
    message: { type: 'string', maxLength: 4096, description: 'Takes precedence over body' },
    body: { type: 'string', maxLength: 4096 },
    message_type: { type: 'string', maxLength: 60, description: 'plain, text, sms (default plain); whatsapp routes to the chat channel' },
    type: { type: 'string', maxLength: 60 },
    schedule_time: { type: 'string', maxLength: 100, description: 'ISO 8601 with offset; a future time queues the message' },
    media_url: { type: 'string', maxLength: 2048 },
    media_type: { type: 'string', maxLength: 32 },
    tenant_channel_id: { description: 'Ignored: the route is resolved from sender_id' },
  },
} as const;

export function smsRoutes(deps: AppDeps): RouteDef[] {
  return [
    {
      method: 'POST', path: '/api/v3/sms/send', tag: 'SMS', summary: 'Send an SMS to one or many recipients', auth: 'rest', body: smsSendBody,
      description: 'One message record per recipient, processed in order. 201 even when some records failed; Idempotency-Key has no effect.',
      response: { status: 201, description: 'Records created', schema: successOf({ type: 'object', required: ['messages'], properties: { messages: { type: 'array', items: messageSchema } } }) },
      handler: async ({ rc, body }) => {
        const messages = await sendSms(rc, { temporal: deps.temporal, config: deps.config }, body as SmsSendInput);
        return { status: 201, body: { status: 'success', data: { messages } } };
      },
    },
    {
      method: 'GET', path: '/api/v3/sms/{uid}', tag: 'SMS', summary: 'Read an SMS by uid or numeric id', auth: 'rest', query: emptyQuery,
      response: { status: 200, description: 'The message record', schema: successOf(messageSchema) },
      handler: async ({ rc, params }) => ({ body: { status: 'success', data: await getMessage(rc, 'sms', params.uid) } }),
    },
  ];
}
