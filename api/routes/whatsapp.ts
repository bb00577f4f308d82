import type { AppDeps } from '../app.js';
import { successOf, emptyQuery, type RouteDef } from '../registry.js';
import { messageSchema } from '../../services/message-view.js';
import { getMessage } from '../../services/messages.js';
import { sendWhatsApp, listWhatsAppAccounts } from '../../services/whatsapp.js';
import type { WhatsAppSendInput } from '../../domain/whatsapp-message.js';
import { sendResponse } from './sms.js';

// Types and lengths are checked here; the rules between fields (which content each message_type
// needs, what may not be combined, interactive limits) live in domain/whatsapp-message.ts.
export const whatsappSendBody = {
  type: 'object',
  properties: {
    recipient: { type: 'string', maxLength: 4000 },
    recipients: { type: 'array', items: { type: 'string', maxLength: 191 } },
    sender_id: { type: 'string', maxLength: 64, description: 'A provider phone-number id of the account (not a local channel id)' },
    message: { type: 'string', maxLength: 4096 },
    body: { type: 'string', maxLength: 4096 },
    message_type: { type: 'string', maxLength: 60, description: 'text, template, image, video, audio, document, sticker, interactive, reaction' },
    type: { type: 'string', maxLength: 60 },
    schedule_time: { type: 'string', maxLength: 100 },
    in_reply_to_gateway_id: { type: 'string', maxLength: 191, description: 'Provider message id (gateway_message_id); a local uid is not valid' },
    media_url: { type: 'string', maxLength: 2048 },
    media_type: { type: 'string', maxLength: 32 },
    template: {
      type: 'object',
      properties: { name: { type: 'string', maxLength: 191 }, language: { type: 'string', maxLength: 20 }, components: { type: 'array' } },
    },
    interactive: { type: 'object' },
    reaction: { type: 'object', properties: { message_id: { type: 'string', maxLength: 191 }, emoji: { type: 'string' } } },
  },
} as const;

export function whatsappRoutes(deps: AppDeps): RouteDef[] {
  return [
    {
      method: 'POST', path: '/api/v3/whatsapp/send', tag: 'Chat-channel messages', summary: 'Send a chat-channel message', auth: 'rest', body: whatsappSendBody,
      description: 'Free-form content outside the 24-hour window is refused by the provider and shows as 201 with status failed.',
      response: { status: 201, description: 'Records created', schema: sendResponse },
      handler: async ({ rc, body }) => {
        const messages = await sendWhatsApp(rc, { temporal: deps.temporal, config: deps.config }, body as WhatsAppSendInput);
        return { status: 201, body: { status: 'success', data: { messages } } };
      },
    },
    {
      method: 'GET', path: '/api/v3/whatsapp/accounts', tag: 'Chat-channel messages', summary: 'Business accounts and the numbers a message can be sent from', auth: 'rest', query: emptyQuery,
      response: { status: 200, description: 'Business accounts', schema: successOf({ type: 'object', required: ['accounts'], properties: { accounts: { type: 'array' } } }) },
      handler: async ({ rc }) => ({ body: { status: 'success', data: { accounts: await listWhatsAppAccounts(rc) } } }),
    },
    {
      method: 'GET', path: '/api/v3/whatsapp/{uid}', tag: 'Chat-channel messages', summary: 'Read a chat-channel message by uid or numeric id', auth: 'rest', query: emptyQuery,
      response: { status: 200, description: 'The message record', schema: successOf(messageSchema) },
      handler: async ({ rc, params }) => ({ body: { status: 'success', data: await getMessage(rc, 'whatsapp', params.uid) } }),
    },
  ];
}
