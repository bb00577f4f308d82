import { HINTS, defineOperation, type Operation } from '../operation.js';
import { pageSchema } from '../../services/platform/pagination.js';
import { groupSchema } from '../../services/groups/group-row.js';
import {
  createGroup,
  deleteGroup,
  getGroup,
  groupCreateBody,
  groupListQuery,
  groupUpdateBody,
  listGroups,
  updateGroup,
} from '../../services/groups/groups.js';
import { GROUPS_MANAGE, GROUPS_VIEW, groupBase, groupDeleteTools, groupTools, groupWriteTools } from './index.js';

// A chat group's own operations (Endpoints > Chat-channel groups: create, list, read, PATCH, DELETE).
// Creation answers with the group in `creating`: the provider confirms it a moment later (the
// chat-group workflow), and the group is then `active` with its invite link, or `failed` with the
// reason. PATCH and DELETE wait for the provider's answer (a refusal is 502).

const G = '/api/v3/whatsapp/groups';
const noInput = { type: 'object', properties: {}, additionalProperties: true } as const;
const groupOutput = (status: number, description: string) => ({ kind: 'resource' as const, status, description, schema: groupSchema });

export const chatGroupOperations: Operation[] = [
  defineOperation({
    ...groupBase,
    name: 'create_chat_group',
    method: 'POST',
    path: G,
    permission: GROUPS_MANAGE,
    summary: 'Create a chat group on one of the account’s WhatsApp numbers',
    description:
      'Answers 201 with the group in `creating` (not yet proof that it exists). The provider confirms it by webhook: the group ' +
      'becomes `active` with provider_group_id and invite_link, each invitee is sent the invite link (invite_template: that ' +
      'approved Cloud API template with the group id as its body parameter; otherwise a text with the link), and group.created ' +
      'is emitted. A refusal (131215: the number is not eligible for groups) or no confirmation within GROUP_CONFIRMATION_SECONDS ' +
      '(default 300) makes it `failed` with failure_reason and emits group.failed. sender_id absent: the account’s first WhatsApp number.',
    body: groupCreateBody,
    output: groupOutput(201, 'The group, creating'),
    mcp: { ...groupWriteTools, annotations: { ...HINTS.write, openWorldHint: true } },
    handler: async ({ rc, deps }, body) => createGroup(rc, deps, body),
  }),
  defineOperation({
    ...groupBase,
    name: 'list_chat_groups',
    method: 'GET',
    path: G,
    permission: GROUPS_VIEW,
    summary: 'List chat groups, newest first',
    description:
      'status: one state, or `all`; default every state but deleted. sender_id: the provider phone-number id the group runs on. ' +
      'Page-number pagination: default 20, at most 100; limit wins over per_page.',
    query: groupListQuery,
    output: {
      kind: 'list',
      status: 200,
      description: 'A page of groups',
      schema: pageSchema('groups', groupSchema),
    },
    mcp: { ...groupTools, annotations: HINTS.read },
    handler: async ({ rc }, query) => listGroups(rc, query),
  }),
  defineOperation({
    ...groupBase,
    name: 'get_chat_group',
    method: 'GET',
    path: `${G}/{id}`,
    permission: GROUPS_VIEW,
    summary: 'Read a chat group and its state',
    query: noInput,
    output: groupOutput(200, 'The group'),
    mcp: { ...groupTools, annotations: HINTS.read },
    handler: async ({ rc }, { id }) => getGroup(rc, id),
  }),
  defineOperation({
    ...groupBase,
    name: 'update_chat_group',
    method: 'PATCH',
    path: `${G}/{id}`,
    permission: GROUPS_MANAGE,
    summary: 'Change an active chat group’s subject and/or description',
    description:
      'At least one of subject and description. Only an active group (409 otherwise, a group still creating included). The ' +
      'provider is asked first: its refusal is 502 and changes nothing; group.updated is emitted once the change holds. When ' +
      'the provider has not answered within 15 s the group is answered as it stands and the change lands when it does.',
    body: groupUpdateBody,
    output: groupOutput(200, 'The group'),
    refusals: { 409: 'the group is not active', 502: 'the chat provider refused the change' },
    mcp: { ...groupWriteTools, annotations: { ...HINTS.update, openWorldHint: true } },
    handler: async ({ rc, deps }, { id, ...body }) => updateGroup(rc, deps, id, body),
  }),
  defineOperation({
    ...groupBase,
    name: 'delete_chat_group',
    method: 'DELETE',
    path: `${G}/{id}`,
    permission: GROUPS_MANAGE,
    summary: 'Delete a chat group at the provider; answers the group’s state',
    description:
      'An active or suspended group is deleted at the provider (everyone is removed): the answer is the group, `deleted` once ' +
      'the provider answered (group.deleted), or `deleting` while it has not (the deletion webhook completes it). A failed group ' +
      'is deleted here at once. A group already deleting answers its state again; a group still creating or already deleted is ' +
      '409. A provider refusal is 502 and the group keeps its state.',
    query: noInput,
    output: groupOutput(200, 'The group, deleted or deleting'),
    refusals: { 409: 'the group is still creating, or already deleted', 502: 'the chat provider refused the deletion' },
    mcp: { ...groupDeleteTools, annotations: { ...HINTS.remove, openWorldHint: true } },
    handler: async ({ rc, deps }, { id }) => deleteGroup(rc, deps, id),
  }),
];
