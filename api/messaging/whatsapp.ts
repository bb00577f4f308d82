import { defineOperation } from '../operation.js';
import { messageSchema } from '../../services/messaging/message-view.js';
import { getMessage } from '../../services/messaging/messages.js';
import { sendWhatsApp, listWhatsAppAccounts } from '../../services/messaging/whatsapp.js';
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
    message_type: {
      type: 'string',
      maxLength: 60,
      description: 'text, template, image, video, audio, document, sticker, interactive, reaction',
    },
    type: { type: 'string', maxLength: 60 },
    schedule_time: { type: 'string', maxLength: 100 },
    in_reply_to_gateway_id: {
      type: 'string',
      maxLength: 191,
      description: 'Provider message id (gateway_message_id); a local uid is not valid',
    },
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

const noInput = { type: 'object', properties: {}, additionalProperties: true } as const;
const read = { readOnlyHint: true, openWorldHint: false } as const;

export const sendWhatsAppOperation = defineOperation({
  name: 'send_whatsapp_message',
  method: 'POST',
  path: '/api/v3/whatsapp/send',
  tag: 'Chat-channel messages',
  summary: 'Send a chat-channel message',
  auth: 'rest',
  body: whatsappSendBody,
  description: 'Free-form content outside the 24-hour window is refused by the provider and shows as 201 with status failed.',
  output: { status: 201, description: 'Records created', schema: sendResponse },
  mcp: {
    servers: ['messaging', 'inbox'],
    scope: 'mcp:messaging',
    elevation: 'mcp:send',
    annotations: { readOnlyHint: false, destructiveHint: false, openWorldHint: true },
  },
  handler: async ({ rc, deps }, input) => ({ messages: await sendWhatsApp(rc, deps, input) }),
});

export const listWhatsAppAccountsOperation = defineOperation({
  name: 'list_whatsapp_accounts',
  method: 'GET',
  path: '/api/v3/whatsapp/accounts',
  tag: 'Chat-channel messages',
  summary: 'Business accounts and the numbers a message can be sent from',
  auth: 'rest',
  query: noInput,
  output: {
    status: 200,
    description: 'Business accounts',
    schema: { type: 'object', required: ['accounts'], properties: { accounts: { type: 'array' } } },
  },
  mcp: { servers: ['messaging', 'inbox'], scope: 'mcp:messaging', annotations: read },
  handler: async ({ rc }) => ({ accounts: await listWhatsAppAccounts(rc) }),
});

export const getWhatsAppMessageOperation = defineOperation({
  name: 'get_whatsapp_message',
  method: 'GET',
  path: '/api/v3/whatsapp/{uid}',
  tag: 'Chat-channel messages',
  summary: 'Read a chat-channel message by uid or numeric id',
  auth: 'rest',
  query: noInput,
  output: { status: 200, description: 'The message record', schema: messageSchema },
  mcp: { servers: ['messaging', 'inbox'], scope: 'mcp:messaging', annotations: read },
  handler: async ({ rc }, { uid }) => getMessage(rc, 'whatsapp', uid),
});

export const whatsappOperations = [sendWhatsAppOperation, listWhatsAppAccountsOperation, getWhatsAppMessageOperation];
