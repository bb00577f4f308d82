import { defineEntity, p } from '@mikro-orm/core';
import { timestamps } from './columns.js';
import { ContactGroup } from './contacts.js';

export const CAMPAIGN_STATUSES = ['draft', 'scheduled', 'running', 'paused', 'completed', 'cancelled'] as const;

// A one-time SMS campaign against one contact group. The audience is read when the campaign runs,
// in keyset pages by contact id; `cursor` is the last contact id whose page is committed (messages,
// wallet debit and cursor move in one transaction), so a restarted worker resumes right after it.
// Deleting the group keeps the campaign (and its messages) and clears the reference.
// A campaign of another family's making (an occasion's greeting) has no group: its `audience` says
// whom it reads instead, and its `business_key` makes it once per key and account (the occasion and
// its day), however often it is asked for.
export const Campaign = defineEntity({
  name: 'Campaign',
  tableName: 'campaigns',
  properties: {
    id: p.integer().primary().autoincrement(),
    uid: p.string().length(40).unique(),
    accountId: p.integer(),
    contactGroup: p.manyToOne(ContactGroup).nullable().deleteRule('set null'),
    name: p.string().length(160),
    message: p.text(),
    sender: p.string().length(64).nullable(),
    channelId: p.integer().nullable(),
    channelCode: p.string().length(64).nullable(),
    status: p.enum(CAMPAIGN_STATUSES).default('draft'),
    scheduledAt: p.datetime().nullable(),
    /** Whom a campaign without a group reads (services/campaigns/campaign-audience.ts CampaignAudience). */
    audience: p.json<Record<string, unknown>>().nullable(),
    businessKey: p.string().length(191).nullable(),
    totalRecipients: p.integer().default(0),
    cursor: p.bigint('string').default(0),
    ...timestamps(),
  },
  indexes: [{ properties: ['accountId', 'id'] }],
  uniques: [{ properties: ['accountId', 'businessKey'] }],
});
