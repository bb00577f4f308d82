import { defineEntity, p } from '@mikro-orm/core';
import { timestamps } from './columns.js';
import { TEMPLATE_CATEGORIES, TEMPLATE_SOURCES, TEMPLATE_STATUSES } from '../domain/templates/index.js';

// Chat-channel message templates (docs/templates.md): one name in one language on one WhatsApp
// Business Account of the account. The provider's id arrives with its answer to the submission;
// the status follows the review (webhook, the review workflow's polls, refresh).
export const MessageTemplate = defineEntity({
  name: 'MessageTemplate',
  tableName: 'message_templates',
  properties: {
    id: p.bigint('string').primary().autoincrement(),
    accountId: p.integer(),
    /** The WABA the template lives on (a business_account_id of the account's WhatsApp numbers). */
    businessAccountId: p.string().length(64),
    name: p.string().length(191),
    language: p.string().length(20),
    category: p.enum(TEMPLATE_CATEGORIES),
    /** The components as submitted (the Cloud API's message_templates shape). */
    components: p.json<unknown[]>(),
    status: p.enum(TEMPLATE_STATUSES).default('submitting'),
    /** Meta's own word for the status (PENDING, FLAGGED, REINSTATED…), kept beside ours. */
    providerStatus: p.string().length(32).nullable(),
    /** Meta's reason of a rejection (INVALID_FORMAT, PROMOTIONAL…), or the pause's title. */
    reason: p.string().length(64).nullable(),
    providerTemplateId: p.string().length(64).nullable(),
    /** Parameters a send must give the header and the body (from the components). */
    headerParams: p.integer().default(0),
    bodyParams: p.integer().default(0),
    source: p.enum(TEMPLATE_SOURCES).default('created'),
    /** The template this one was deployed from (POST …/deployments). */
    deployedFrom: p.bigint('string').nullable(),
    reviewedAt: p.datetime().nullable(),
    lastCheckedAt: p.datetime().nullable(),
    ...timestamps(),
  },
  uniques: [{ properties: ['accountId', 'businessAccountId', 'name', 'language'] }],
  indexes: [{ properties: ['accountId', 'id'] }, { properties: ['providerTemplateId'] }],
});
