import { defineEntity, p } from '@mikro-orm/core';
import { timestamps } from './columns.js';
import { GROUP_STATUSES, JOIN_APPROVAL_MODES, JOIN_REQUEST_STATUSES, PARTICIPANT_STATUSES } from '../domain/groups/index.js';

// A WhatsApp group run from one of the account's business numbers (Resources > Chat-channel group).
// The local numeric id is the customer's handle; the provider's group id arrives with the
// creation webhook and is absent while creating.
export const ChatGroup = defineEntity({
  name: 'ChatGroup',
  tableName: 'chat_groups',
  properties: {
    id: p.bigint('string').primary().autoincrement(),
    accountId: p.integer(),
    /** The business number the group runs on: its provider phone-number id (sender_id) and channel. */
    senderPhoneNumberId: p.string().length(64),
    channelId: p.integer().nullable(),
    providerGroupId: p.string().length(128).nullable(),
    /** The provider's id of the create request, which its lifecycle webhook carries back. */
    providerRequestId: p.string().length(128).nullable(),
    subject: p.string().length(128),
    description: p.string().length(2048).nullable(),
    joinApprovalMode: p.enum(JOIN_APPROVAL_MODES).default('auto_approve'),
    status: p.enum(GROUP_STATUSES).default('creating'),
    inviteLink: p.string().length(255).nullable(),
    inviteTemplate: p.string().length(191).nullable(),
    /** Recipients named at creation, invited once the group is active. */
    invitees: p.json<string[]>(),
    failureReason: p.text().nullable(),
    /** The last time a participant wrote into the group: free-form messages need one within 24 hours. */
    lastParticipantMessageAt: p.datetime().nullable(),
    deletedAt: p.datetime().nullable(),
    ...timestamps(),
  },
  uniques: [{ properties: ['providerGroupId'] }, { properties: ['providerRequestId'] }],
  indexes: [{ properties: ['accountId', 'status', 'id'] }],
});

/** A person in a group, or invited to it (an invite holds a place under the 8-participant limit). */
export const ChatGroupParticipant = defineEntity({
  name: 'ChatGroupParticipant',
  tableName: 'chat_group_participants',
  properties: {
    id: p.bigint('string').primary().autoincrement(),
    accountId: p.integer(),
    group: p.manyToOne(ChatGroup).deleteRule('cascade'),
    /** The person's WhatsApp id (digits of the phone number). */
    waId: p.string().length(32),
    status: p.enum(PARTICIPANT_STATUSES),
    /** The local uid of the invitation message, when one was sent. */
    inviteMessageUid: p.string().length(32).nullable(),
    ...timestamps(),
  },
  uniques: [{ properties: ['group', 'waId'] }],
});

/** A request to join a group that needs approval, as the provider's webhook reported it. */
export const ChatGroupJoinRequest = defineEntity({
  name: 'ChatGroupJoinRequest',
  tableName: 'chat_group_join_requests',
  properties: {
    id: p.bigint('string').primary().autoincrement(),
    accountId: p.integer(),
    group: p.manyToOne(ChatGroup).deleteRule('cascade'),
    joinRequestId: p.string().length(128),
    waId: p.string().length(32),
    status: p.enum(JOIN_REQUEST_STATUSES).default('pending'),
    ...timestamps(),
  },
  uniques: [{ properties: ['group', 'joinRequestId'] }],
});
