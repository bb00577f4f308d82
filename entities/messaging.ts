import { defineEntity, p } from '@mikro-orm/core';
import { createdAt, timestamps } from './columns.js';

export const MESSAGE_STATUSES = ['queued', 'processing', 'sent', 'checking_delivery', 'delivered', 'read', 'failed', 'received'] as const;

export const Message = defineEntity({
  name: 'Message',
  tableName: 'messages',
  properties: {
    id: p.bigint('string').primary().autoincrement(),
    uid: p.string().length(40).unique(),
    accountId: p.integer(),
    direction: p.enum(['inbound', 'outbound']),
    channelType: p.enum(['sms', 'whatsapp']),
    channelId: p.integer().nullable(),
    // A chat record's code is `whatsapp:` + the provider's phone-number id (64): 73 at most.
    channelCode: p.string().length(80).nullable(),
    sender: p.string().length(64).nullable(),
    // The contract's limit on one recipient; the sends refuse a longer one before creating anything.
    recipient: p.string().length(191),
    body: p.text(),
    status: p.enum(MESSAGE_STATUSES),
    mediaUrl: p.text().nullable(),
    mediaType: p.string().length(32).nullable(),
    gatewayMessageId: p.string().length(191).nullable(),
    errorMessage: p.text().nullable(),
    metadata: p.json<Record<string, unknown>>().nullable(),
    templateParams: p.json<Record<string, unknown>>().nullable(),
    // The provider request body (chat channel), kept apart from metadata, which clients see.
    providerRequest: p.json<Record<string, unknown>>().nullable(),
    segments: p.integer().default(1),
    // The encodings domain/messaging/segments.ts counts in (SmsEncoding).
    encoding: p.string().length(8).$type<'GSM-7' | 'UCS-2'>().default('GSM-7'),
    campaignId: p.integer().nullable(),
    // The campaign recipient (contact id): with campaign_id unique, so a campaign page inserted twice
    // (a retried activity) adds nothing the second time.
    contactId: p.bigint('string').nullable(),
    /** A message sent into, or received from, one of the account's chat groups (local group id). */
    chatGroupId: p.bigint('string').nullable(),
    // workflow: a message workflow of its own (scheduled sends, first outcome); batch: the outbound
    // dispatcher sends it with others (admission control under load, campaigns).
    dispatchMode: p.string().length(16).default('workflow'),
    // A workflow-mode message whose workflow has not moved it yet: true from its insert until its
    // first status move (null otherwise). The start-gap reconciler reads it; a column of its own so
    // that no index names `status` (every move then rewrites the row in place, a HOT update).
    workflowPending: p.boolean().nullable(),
    scheduledAt: p.datetime().nullable(),
    ...timestamps(),
    sentAt: p.datetime().nullable(),
    deliveredAt: p.datetime().nullable(),
    readAt: p.datetime().nullable(),
  },
  uniques: [{ name: 'messages_campaign_id_contact_id_unique', properties: ['campaignId', 'contactId'] }],
  // No index may name a column a status move changes (status, the provider's id, the timestamps,
  // the error), not even in a partial index's predicate: a move then rewrites the row in place (a
  // heap-only update, one WAL record) instead of writing a new version and an entry in every index.
  // Messages found by the provider's id are found through message_provider_ids.
  indexes: [
    { properties: ['accountId', 'id'] },
    // A group's messages (pins name them; the window reads the newest inbound one).
    {
      name: 'messages_chat_group_index',
      expression: `create index "messages_chat_group_index" on "messages" ("chat_group_id", "id") where "chat_group_id" is not null`,
    },
    // The start-gap reconciler scans queued outbound messages that wait for their own workflow.
    {
      name: 'messages_workflow_pending_index',
      expression: `create index "messages_workflow_pending_index" on "messages" ("id") where "workflow_pending"`,
    },
  ],
});

// The messages a provider's id names, for what arrives keyed by that id alone: chat statuses,
// inbound messages (a redelivery is recognized by it). Written by the move that stores a chat
// message's provider id and by the inbound insert; an outbound SMS's receipts name our uid (the
// status callback's `?m=`), so its id needs no entry. Apart from `messages` so that no index there
// names `gateway_message_id`: the send's move then rewrites the message in place.
export const MessageProviderId = defineEntity({
  name: 'MessageProviderId',
  tableName: 'message_provider_ids',
  properties: {
    providerMessageId: p.string().length(191).primary(),
    messageId: p.bigint('string').primary(),
  },
});

// What the batch dispatcher sends: the queued batch-dispatch messages one statement wrote (a
// campaign page, a send under load), as one row per channel (docs/decisions.md "The dispatch queue
// is a table of batches"). Unclaimed (claim null) it is the queue; a dispatcher run's claim tags it
// whole, and a retried attempt of the same claim resends what is still queued of it; an unfinished
// claim of a run that died is offered again (STALE_CLAIM_MINUTES). Closed (sent_at) when the
// dispatch activity ends and kept for the receipt window: the sweep asks the provider about its
// messages that got no receipt, and narrows `message_ids` to those. Apart from `messages`, so that
// queueing and claiming write no version of the messages themselves, and a few bytes per message.
export const DispatchBatch = defineEntity({
  name: 'DispatchBatch',
  tableName: 'message_dispatch_batches',
  properties: {
    id: p.bigint('string').primary().autoincrement(),
    channelType: p.enum(['sms', 'whatsapp']),
    messageIds: p.array<string>().columnType('bigint[]'),
    queuedAt: p.datetime(),
    claim: p.string().length(120).nullable().index(),
    claimedAt: p.datetime().nullable(),
    sentAt: p.datetime().nullable(),
    sweptAt: p.datetime().nullable(),
  },
  indexes: [
    {
      name: 'message_dispatch_batches_unclaimed_index',
      expression: `create index "message_dispatch_batches_unclaimed_index" on "message_dispatch_batches" ("channel_type", "id") where "claim" is null`,
    },
  ],
});

// A receipt for a provider id we do not know yet (it overtook the provider's own answer);
// applied as soon as the dispatch stores that id.
export const PendingReceipt = defineEntity({
  name: 'PendingReceipt',
  tableName: 'pending_receipts',
  properties: {
    id: p.bigint('string').primary().autoincrement(),
    providerMessageId: p.string().length(191).index(),
    status: p.string().length(32),
    errorMessage: p.text().nullable(),
    receivedAt: p.datetime().onCreate(() => new Date()),
  },
});

// The 24-hour customer service window: opened by every inbound message, per account, business
// number and customer.
export const ConversationWindow = defineEntity({
  name: 'ConversationWindow',
  tableName: 'conversation_windows',
  properties: {
    accountId: p.integer().primary(),
    channelType: p.string().length(16).primary(),
    businessNumber: p.string().length(64).primary(),
    customer: p.string().length(64).primary(),
    lastInboundAt: p.datetime(),
  },
});

// Sending identities and routes: what a message can be sent from.

// A sending route: one provider connection. account_id null marks the system default route.
export const Channel = defineEntity({
  name: 'Channel',
  tableName: 'channels',
  properties: {
    id: p.integer().primary().autoincrement(),
    accountId: p.integer().nullable().index(),
    channelType: p.enum(['sms', 'whatsapp']),
    code: p.string().length(64),
    provider: p.string().length(32),
    isDefault: p.boolean().default(false),
    active: p.boolean().default(true),
    config: p.json<Record<string, unknown>>().nullable(),
    createdAt: createdAt(),
  },
});

// Alphanumeric sender ids need approval before they may send.
export const SenderId = defineEntity({
  name: 'SenderId',
  tableName: 'sender_ids',
  properties: {
    id: p.integer().primary().autoincrement(),
    accountId: p.integer().index(),
    channelId: p.integer().nullable(),
    value: p.string().length(64),
    approvalStatus: p.enum(['pending', 'approved', 'rejected']).default('pending'),
    createdAt: createdAt(),
  },
});

export const PhoneNumber = defineEntity({
  name: 'PhoneNumber',
  tableName: 'phone_numbers',
  properties: {
    id: p.integer().primary().autoincrement(),
    accountId: p.integer().index(),
    channelId: p.integer().nullable(),
    number: p.string().length(32),
    capabilities: p.json<('sms' | 'mms' | 'whatsapp' | 'voice')[]>(),
    released: p.boolean().default(false),
    providerPhoneNumberId: p.string().length(64).nullable(),
    businessAccountId: p.string().length(64).nullable(),
    createdAt: createdAt(),
  },
});

export const ShortCode = defineEntity({
  name: 'ShortCode',
  tableName: 'short_codes',
  properties: {
    id: p.integer().primary().autoincrement(),
    accountId: p.integer().index(),
    channelId: p.integer().nullable(),
    code: p.string().length(16),
    assignmentStatus: p.enum(['active', 'inactive']).default('active'),
    createdAt: createdAt(),
  },
});

// channel_id null blocks the number on every route of the account.
export const BlacklistEntry = defineEntity({
  name: 'BlacklistEntry',
  tableName: 'blacklist',
  properties: {
    id: p.integer().primary().autoincrement(),
    accountId: p.integer(),
    channelId: p.integer().nullable(),
    phone: p.string().length(32),
    createdAt: createdAt(),
  },
  indexes: [{ properties: ['accountId', 'phone'] }],
});
