import { defineEntity, p } from '@mikro-orm/core';

export const MESSAGE_STATUSES = ['queued', 'processing', 'sent', 'checking_delivery', 'delivered', 'read', 'failed', 'received'] as const;

export const Message = defineEntity({
  name: 'Message',
  tableName: 'messages',
  properties: {
    id: p.bigint('number').primary().autoincrement(),
    uid: p.string().length(40).unique(),
    accountId: p.integer(),
    direction: p.enum(['inbound', 'outbound']),
    channelType: p.enum(['sms', 'whatsapp']),
    channelId: p.integer().nullable(),
    channelCode: p.string().length(64).nullable(),
    sender: p.string().length(64).nullable(),
    recipient: p.string().length(191),
    body: p.text(),
    status: p.enum(MESSAGE_STATUSES),
    mediaUrl: p.text().nullable(),
    mediaType: p.string().length(32).nullable(),
    gatewayMessageId: p.string().length(191).nullable().index(),
    errorMessage: p.text().nullable(),
    metadata: p.json<Record<string, unknown>>().nullable(),
    templateParams: p.json<Record<string, unknown>>().nullable(),
    segments: p.integer().default(1),
    encoding: p.string().length(8).default('GSM-7'),
    campaignId: p.integer().nullable(),
    scheduledAt: p.datetime().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p.datetime().onCreate(() => new Date()).onUpdate(() => new Date()),
    sentAt: p.datetime().nullable(),
    deliveredAt: p.datetime().nullable(),
    readAt: p.datetime().nullable(),
  },
  indexes: [{ properties: ['accountId', 'id'] }],
});
