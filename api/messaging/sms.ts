import { HINTS, defineOperation } from '../operation.js';
import { messageSchema } from '../../services/messaging/message-view.js';
import { sendSms, getMessage, listMessages, messageListQuery, smsSendBody } from '../../services/messaging/messages.js';
import { listSmsSenders } from '../../services/messaging/senders.js';
import { pageSchema } from '../../services/platform/pagination.js';
import { noInput } from '../../services/platform/storable.js';

export const sendResponse = {
  type: 'object',
  required: ['messages'],
  properties: { messages: { type: 'array', items: messageSchema } },
} as const;

export const sendSmsOperation = defineOperation({
  name: 'send_sms',
  method: 'POST',
  path: '/api/v3/sms/send',
  tag: 'SMS',
  summary: 'Send an SMS to one or many recipients',
  auth: 'rest',
  body: smsSendBody,
  description:
    'One message record per recipient, processed in order. 201 even when some records failed; Idempotency-Key has no effect. ' +
    "Immediate sends show the provider's first outcome when it answers quickly, otherwise queued.",
  output: {
    kind: 'list',
    contract: 'Endpoints > SMS: 201 {status, data:{messages:[message record]}}, one record per recipient',
    status: 201,
    description: 'Records created',
    schema: sendResponse,
  },
  mcp: {
    servers: ['messaging'],
    scope: 'mcp:messaging',
    elevation: 'mcp:send',
    annotations: HINTS.send,
  },
  // Its send statement (services/messaging/store/messages.ts insertMessagesWithDebit) can count and admit the request too.
  admitsInStatement: true,
  handler: async ({ rc, deps }, input) => ({ messages: await sendSms(rc, deps, input) }),
});

export const listSmsSendersOperation = defineOperation({
  name: 'list_sms_senders',
  method: 'GET',
  path: '/api/v3/sms/senders',
  tag: 'SMS',
  summary: 'Sending identities a message can use',
  auth: 'rest',
  query: noInput,
  output: {
    kind: 'list',
    status: 200,
    description: 'Sender identities and the default route',
    schema: {
      type: 'object',
      required: ['senders'],
      properties: { senders: { type: 'array' }, default_channel: { type: ['object', 'null'] } },
    },
  },
  mcp: { servers: ['messaging'], scope: 'mcp:messaging', annotations: HINTS.read },
  handler: async ({ rc }) => listSmsSenders(rc),
});

export const getSmsOperation = defineOperation({
  name: 'get_sms',
  method: 'GET',
  path: '/api/v3/sms/{uid}',
  tag: 'SMS',
  summary: 'Read an SMS by uid or numeric id',
  auth: 'rest',
  query: noInput,
  output: { kind: 'resource', status: 200, description: 'The message record', schema: messageSchema },
  mcp: { servers: ['messaging'], scope: 'mcp:messaging', annotations: HINTS.read },
  handler: async ({ rc }, { uid }) => getMessage(rc, 'sms', uid),
});

export const listMessagesOperation = defineOperation({
  name: 'list_messages',
  method: 'GET',
  path: '/api/v3/messages',
  tag: 'Messages',
  summary: 'List messages (both channels), newest first',
  auth: 'rest',
  query: messageListQuery,
  description: 'Filters: status, direction, channel_type. Page-number pagination: default 20, at most 100; limit wins over per_page.',
  output: {
    kind: 'list',
    status: 200,
    description: 'A page of messages',
    schema: pageSchema('messages', messageSchema),
  },
  mcp: { servers: ['messaging', 'inbox'], scope: 'mcp:messaging', annotations: HINTS.read },
  handler: async ({ rc }, input) => listMessages(rc, input),
});

export const smsOperations = [sendSmsOperation, listSmsSendersOperation, getSmsOperation, listMessagesOperation];
