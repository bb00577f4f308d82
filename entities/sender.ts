import { defineEntity, p } from '@mikro-orm/core';

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
    createdAt: p.datetime().onCreate(() => new Date()),
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
    createdAt: p.datetime().onCreate(() => new Date()),
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
    capabilities: p.json<string[]>(),
    released: p.boolean().default(false),
    providerPhoneNumberId: p.string().length(64).nullable(),
    businessAccountId: p.string().length(64).nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
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
    createdAt: p.datetime().onCreate(() => new Date()),
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
    createdAt: p.datetime().onCreate(() => new Date()),
  },
  indexes: [{ properties: ['accountId', 'phone'] }],
});
