import { HINTS, defineOperation, type Operation } from '../operation.js';
import { groupSchema } from '../../services/groups/group-row.js';
import {
  decideJoinRequests,
  inviteMembers,
  invitesBody,
  joinRequestsBody,
  listJoinRequests,
  participantsBody,
  removeParticipants,
  resetInviteLink,
} from '../../services/groups/members.js';
import { GROUPS_MANAGE, GROUPS_VIEW, groupBase, groupSendTools, groupTools, groupWriteTools } from './index.js';

// Who is in a group (Endpoints > Chat-channel groups: invites, invite-link reset, join requests,
// participants). People join only through the invite link, so an invite is a message carrying it
// (it also needs communications.send). Per-item operations answer each item: unknown ids and people
// beyond the 8 places are failures of their own, never a refusal of the whole request.

const G = '/api/v3/whatsapp/groups/{id}';
const noInput = { type: 'object', properties: {}, additionalProperties: true } as const;
const str = { type: 'string' } as const;
const failure = <const K extends string>(key: K) =>
  ({
    type: 'object',
    required: [key, 'reason'],
    properties: { [key]: str, reason: str, provider_code: str } as { [P in K]: typeof str } & {
      reason: typeof str;
      provider_code: typeof str;
    },
  }) as const;
const perItem = <const S, const K extends string>(success: S, failureKey: K) =>
  ({
    type: 'object',
    required: ['group_id', 'successes', 'failures'],
    properties: {
      group_id: { type: 'integer' },
      successes: { type: 'array', items: success },
      failures: { type: 'array', items: failure(failureKey) },
    },
  }) as const;
const refusals = {
  409: 'the group is not active (still creating, suspended, deleting, deleted or failed)',
  502: 'the chat provider refused the call',
};

export const groupMemberOperations: Operation[] = [
  defineOperation({
    ...groupBase,
    name: 'invite_to_chat_group',
    method: 'POST',
    path: `${G}/invites`,
    permission: GROUPS_MANAGE,
    summary: 'Send the group’s invite link to 1 to 7 people',
    description:
      'Needs communications.send as well. Each recipient is sent the invite link (template: that approved group-invite template ' +
      'with the group id as its body parameter; else the group’s invite_template; else a text with the link, delivered only inside ' +
      'the 24-hour window) and holds a place from then on. The 8-participant limit counts the business, members and pending ' +
      'invitations: recipients beyond the places left are failures, as are people already in the group, removed from it, or ' +
      'not phone numbers. Someone already invited is sent the link again.',
    body: invitesBody,
    output: {
      kind: 'outcome',
      status: 200,
      description: 'Per-recipient successes (the invitation message) and failures',
      schema: perItem({ type: 'object', properties: { recipient: str, message_uid: str, message_status: str } }, 'recipient'),
    },
    refusals: { 403: 'the key’s issuer lacks communications.send', ...refusals },
    mcp: { ...groupSendTools, annotations: HINTS.send },
    handler: async ({ rc, deps }, { id, ...body }) => inviteMembers(rc, deps, id, body),
  }),
  defineOperation({
    ...groupBase,
    name: 'reset_chat_group_invite_link',
    method: 'POST',
    path: `${G}/invite-link/reset`,
    permission: GROUPS_MANAGE,
    summary: 'Give the group a new invite link; the old one stops working',
    body: noInput,
    output: { kind: 'resource', status: 200, description: 'The group, carrying its new invite_link', schema: groupSchema },
    refusals,
    mcp: { ...groupWriteTools, annotations: { ...HINTS.write, openWorldHint: true } },
    handler: async ({ rc, deps }, { id }) => resetInviteLink(rc, deps, id),
  }),
  defineOperation({
    ...groupBase,
    name: 'list_chat_group_join_requests',
    method: 'GET',
    path: `${G}/join-requests`,
    permission: GROUPS_VIEW,
    summary: 'Pending requests to join the group, oldest first',
    description: 'As the provider’s webhooks reported them (groups with join_approval_mode approval_required).',
    query: noInput,
    output: {
      kind: 'list',
      status: 200,
      description: 'Pending join requests',
      schema: {
        type: 'object',
        required: ['group_id', 'join_requests'],
        properties: {
          group_id: { type: 'integer' },
          join_requests: {
            type: 'array',
            items: {
              type: 'object',
              required: ['join_request_id', 'wa_id', 'status'],
              properties: {
                join_request_id: str,
                wa_id: str,
                phone: str,
                status: str,
                created_at: { type: 'string', format: 'date-time' },
              },
            },
          },
        },
      } as const,
    },
    mcp: { ...groupTools, annotations: HINTS.read },
    handler: async ({ rc }, { id }) => listJoinRequests(rc, id),
  }),
  ...(['approve', 'reject'] as const).map((decision) =>
    defineOperation({
      ...groupBase,
      name: `${decision}_chat_group_join_requests`,
      method: 'POST',
      path: `${G}/join-requests/${decision}`,
      permission: GROUPS_MANAGE,
      summary: decision === 'approve' ? 'Approve join requests' : 'Reject join requests',
      description:
        'Per item: ids that are not a pending request of this group are failures (nothing is asked of the provider for them); ' +
        'the provider’s per-item refusals are failures with its code.' +
        (decision === 'approve'
          ? ' An approved person becomes a participant when the provider reports the join (group.participant_joined).'
          : ''),
      body: joinRequestsBody,
      output: {
        kind: 'outcome',
        status: 200,
        description: 'Per-item successes and failures',
        schema: perItem({ type: 'object', properties: { join_request_id: str, wa_id: str, status: str } }, 'join_request_id'),
      },
      refusals,
      mcp: { ...groupWriteTools, annotations: { ...HINTS.write, openWorldHint: true } },
      handler: async ({ rc, deps }, { id, ...body }) => decideJoinRequests(rc, deps, id, body, decision),
    }),
  ),
  defineOperation({
    ...groupBase,
    name: 'remove_chat_group_participants',
    method: 'DELETE',
    path: `${G}/participants`,
    permission: GROUPS_MANAGE,
    summary: 'Remove 1 to 8 participants',
    description:
      'Members are removed at the provider (they cannot rejoin through the invite link; group.participant_removed). A pending ' +
      'invitation is withdrawn and its place freed (the link it carried works until the link is reset). Anyone else is a failure.',
    body: participantsBody,
    output: {
      kind: 'outcome',
      status: 200,
      description: 'Per-item successes and failures',
      schema: perItem({ type: 'object', properties: { participant: str, wa_id: str, status: str } }, 'participant'),
    },
    refusals,
    mcp: { ...groupWriteTools, annotations: { ...HINTS.remove, openWorldHint: true } },
    handler: async ({ rc, deps }, { id, ...body }) => removeParticipants(rc, deps, id, body),
  }),
];
