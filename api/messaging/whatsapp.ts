import { HINTS, defineOperation } from '../operation.js';
import { messageSchema } from '../../services/messaging/message-view.js';
import { getMessage } from '../../services/messaging/messages.js';
import { sendWhatsApp, listWhatsAppAccounts } from '../../services/messaging/whatsapp.js';
import { sendResponse } from './sms.js';
import { whatsappSendBody } from '../../services/messaging/send-schemas.js';
import { noInput } from '../../services/platform/storable.js';
import { checkTemplateSend } from '../../services/templates/index.js';

export const sendWhatsAppOperation = defineOperation({
  name: 'send_whatsapp_message',
  method: 'POST',
  path: '/api/v3/whatsapp/send',
  tag: 'Chat-channel messages',
  summary: 'Send a chat-channel message',
  auth: 'rest',
  body: whatsappSendBody,
  description:
    'Free-form content outside the 24-hour window is refused by the provider and shows as 201 with status failed. A template ' +
    'known to the account (that name and language on the sender’s business account, docs/templates.md) must be approved and ' +
    'given the parameters its header and body take, else 422 before the provider is asked; a template name never seen here ' +
    'is forwarded to the provider as it is (a refusal then shows as 201 with status failed).',
  output: {
    kind: 'list',
    contract: 'Endpoints > Chat-channel messages: 201, same shape as SMS send (data.messages)',
    status: 201,
    description: 'Records created',
    schema: sendResponse,
  },
  mcp: {
    servers: ['messaging', 'inbox'],
    scope: 'mcp:messaging',
    elevation: 'mcp:send',
    annotations: HINTS.send,
  },
  // The templates family checks a template send: wired here, so messaging imports nothing of templates.
  handler: async ({ rc, deps }, input) => ({ messages: await sendWhatsApp(rc, deps, input, { checkTemplate: checkTemplateSend }) }),
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
    kind: 'list',
    status: 200,
    description: 'Business accounts',
    schema: { type: 'object', required: ['accounts'], properties: { accounts: { type: 'array' } } },
  },
  mcp: { servers: ['messaging', 'inbox'], scope: 'mcp:messaging', annotations: HINTS.read },
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
  output: { kind: 'resource', status: 200, description: 'The message record', schema: messageSchema },
  mcp: { servers: ['messaging', 'inbox'], scope: 'mcp:messaging', annotations: HINTS.read },
  handler: async ({ rc }, { uid }) => getMessage(rc, 'whatsapp', uid),
});

export const whatsappOperations = [sendWhatsAppOperation, listWhatsAppAccountsOperation, getWhatsAppMessageOperation];
