import { HINTS, defineOperation, type Operation } from '../operation.js';
import { groupMessageBody, pinBody, pinGroupMessage, sendGroupMessage } from '../../services/groups/group-messages.js';
import { GROUPS_MANAGE, groupBase, groupSendTools, groupWriteTools } from './index.js';
import { messageSchema } from '../../services/messaging/index.js';

// Messages into a group and pins (Endpoints > Chat-channel groups: {id}/messages, {id}/pin). A group
// message is a chat message record like POST /whatsapp/send makes, carrying the group's id; its
// status callbacks are the message events.

const G = '/api/v3/whatsapp/groups/{id}';

/** The group message presentation (Endpoints > Chat-channel groups, {id}/messages): the message record and its group. */
const groupMessageSchema = {
  ...messageSchema,
  required: [...messageSchema.required, 'group_id'],
  properties: { ...messageSchema.properties, group_id: { type: 'integer', description: 'the group’s local id' } },
} as const;

export const groupMessageOperations: Operation[] = [
  defineOperation({
    ...groupBase,
    name: 'send_chat_group_message',
    method: 'POST',
    path: `${G}/messages`,
    permission: GROUPS_MANAGE,
    summary: 'Send a message into the group',
    description:
      'Needs communications.send as well. One kind: text (message or body, at most 4096), media (media_url with media_type; ' +
      'message is the caption) or an approved template (name, language, components). Free-form content (text, media) is refused ' +
      '(422) when no participant wrote in the group within the last 24 hours: send a template. The answer waits for the ' +
      'provider’s first word like a product send: a refusal is 502; past the wait the message answers queued.',
    body: groupMessageBody,
    output: {
      kind: 'resource',
      status: 201,
      description: 'The group message: the message record (as GET /whatsapp/{uid} shows it) with the group id',
      schema: groupMessageSchema,
    },
    refusals: {
      403: 'the key’s issuer lacks communications.send',
      409: 'the group is not active',
      422: 'invalid content, or free-form content outside the 24-hour group window (use an approved template)',
      502: 'the chat provider refused the message',
    },
    mcp: { ...groupSendTools, annotations: HINTS.send },
    handler: async ({ rc, deps }, { id, ...body }) => sendGroupMessage(rc, deps, id, body),
  }),
  defineOperation({
    ...groupBase,
    name: 'pin_chat_group_message',
    method: 'POST',
    path: `${G}/pin`,
    permission: GROUPS_MANAGE,
    summary: 'Pin or unpin a message of the group',
    description:
      'message_uid: the local uid of a message of this group (sent or received); another account’s is 404, another group’s or a ' +
      'message not yet accepted by the provider 422. Pinning holds for expiration_days (1 to 30, default 30); WhatsApp keeps ' +
      'three pins, a fourth unpins the oldest.',
    body: pinBody,
    output: {
      kind: 'outcome',
      status: 200,
      description: 'The pin as it now stands',
      schema: {
        type: 'object',
        required: ['group_id', 'message_uid', 'pinned'],
        properties: {
          group_id: { type: 'integer' },
          message_uid: { type: 'string' },
          pinned: { type: 'boolean' },
          expiration_days: { type: ['integer', 'null'] },
        },
      },
    },
    refusals: {
      404: 'no such message in this account',
      409: 'the group is not active',
      422: 'not a message of this group',
      502: 'the chat provider refused the pin',
    },
    mcp: { ...groupWriteTools, annotations: { ...HINTS.update, openWorldHint: true } },
    handler: async ({ rc, deps }, { id, ...body }) => pinGroupMessage(rc, deps, id, body),
  }),
];
