import { defineEntity, p } from '@mikro-orm/core';
import { createdAt, timestamps } from './columns.js';

// The tenant. Wallet figures use a decimal string so money never passes through a float.
export const Account = defineEntity({
  name: 'Account',
  tableName: 'accounts',
  properties: {
    id: p.integer().primary().autoincrement(),
    uid: p.string().length(40).unique(),
    name: p.string().length(160),
    status: p.enum(['active', 'suspended']).default('active'),
    walletBalance: p.decimal('string').precision(16).scale(4).default('0'),
    currency: p.string().length(3).default('USD'),
    billingMode: p.enum(['prepaid', 'postpaid']).default('prepaid'),
    /**
     * ISO 3166-1 alpha-2, set by the operator: the default region of a national phone number (a lead's
     * 0754 123 456). Occasions still keep their own workspace country (occasion_defaults.country).
     */
    country: p.string().length(2).nullable(),
    ...timestamps(),
  },
});

// A person in the account; API keys record their issuer so permissions follow the person.
export const User = defineEntity({
  name: 'User',
  tableName: 'users',
  properties: {
    id: p.integer().primary().autoincrement(),
    accountId: p.integer().index(),
    email: p.string().length(254),
    name: p.string().length(160),
    permissions: p.json<string[]>(),
    active: p.boolean().default(true),
    ...timestamps(),
  },
  uniques: [{ properties: ['accountId', 'email'] }],
});

// REST keys and MCP connection credentials share one table: one lookup by hash answers both,
// and `kind` tells a REST key from an MCP credential so each is refused on the other surface.
export const ApiKey = defineEntity({
  name: 'ApiKey',
  tableName: 'api_keys',
  properties: {
    id: p.integer().primary().autoincrement(),
    accountId: p.integer().index(),
    userId: p.integer().nullable(),
    kind: p.enum(['rest', 'mcp']).default('rest'),
    name: p.string().length(160),
    tokenHash: p.string().length(64).unique(),
    tokenHint: p.string().length(16),
    expiresAt: p.datetime().nullable(),
    revokedAt: p.datetime().nullable(),
    lastUsedAt: p.datetime().nullable(),
    createdAt: createdAt(),
  },
});

// What the service tells an account about its own resources (a feed switched off, a product running
// low): kept for the account to read (GET /api/v3/notices) beside the event a receiver gets.
// `dedupe_key` makes a notice at most once per key and account (e.g. one low-stock notice per
// product and day); null for notices that may repeat.
export const AccountNotice = defineEntity({
  name: 'AccountNotice',
  tableName: 'account_notices',
  properties: {
    id: p.bigint('string').primary().autoincrement(),
    accountId: p.integer(),
    kind: p.string().length(64),
    message: p.text(),
    data: p.json<Record<string, unknown>>(),
    dedupeKey: p.string().length(200).nullable(),
    createdAt: createdAt(),
    readAt: p.datetime().nullable(),
  },
  uniques: [{ properties: ['accountId', 'dedupeKey'] }],
  indexes: [{ properties: ['accountId', 'id'] }],
});
