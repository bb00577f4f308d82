import { iso } from '../platform/time.js';
import { TEMPLATE_CATEGORIES, TEMPLATE_SOURCES, TEMPLATE_STATUSES } from '../../domain/templates/index.js';
import type { TemplateRow } from './store.js';

// A template as the API shows it and as template.status_changed carries it.

export function templateView(t: TemplateRow) {
  return {
    id: Number(t.id),
    business_account_id: t.business_account_id,
    name: t.name,
    language: t.language,
    category: t.category,
    status: t.status,
    provider_status: t.provider_status,
    reason: t.reason,
    provider_template_id: t.provider_template_id,
    components: t.components as Record<string, unknown>[],
    parameters: { header: t.header_params, body: t.body_params },
    source: t.source,
    deployed_from: t.deployed_from === null ? null : Number(t.deployed_from),
    reviewed_at: iso(t.reviewed_at),
    last_checked_at: iso(t.last_checked_at),
    created_at: iso(t.created_at),
    updated_at: iso(t.updated_at),
  };
}

export const templateSchema = {
  type: 'object',
  required: [
    'id',
    'business_account_id',
    'name',
    'language',
    'category',
    'status',
    'provider_status',
    'reason',
    'provider_template_id',
    'components',
    'parameters',
    'source',
    'created_at',
  ],
  properties: {
    id: { type: 'integer' },
    business_account_id: { type: 'string', description: 'the WhatsApp Business Account (WABA) the template lives on' },
    name: { type: 'string' },
    language: { type: 'string' },
    category: { enum: TEMPLATE_CATEGORIES },
    status: {
      enum: TEMPLATE_STATUSES,
      description:
        'submitting (the provider has not answered yet), pending (in review), in_appeal, approved (sendable), rejected, paused, disabled, archived, deleted',
    },
    provider_status: { type: ['string', 'null'], description: 'the provider’s own word (PENDING, APPROVED, FLAGGED, REINSTATED…)' },
    reason: { type: ['string', 'null'], description: 'why it was rejected (INVALID_FORMAT, PROMOTIONAL…) or paused (FIRST_PAUSE…)' },
    provider_template_id: { type: ['string', 'null'], description: 'the provider’s id; null while submitting' },
    components: { type: 'array', items: { type: 'object' }, description: 'as submitted (the Cloud API message_templates shape)' },
    parameters: {
      type: 'object',
      required: ['header', 'body'],
      properties: { header: { type: 'integer' }, body: { type: 'integer' } },
      description: 'how many parameters a send of it gives the header and the body',
    },
    source: { enum: TEMPLATE_SOURCES, description: 'created here, imported by sync, or deployed from another business account' },
    deployed_from: { type: ['integer', 'null'], description: 'the template it was deployed from' },
    reviewed_at: { type: ['string', 'null'], format: 'date-time' },
    last_checked_at: {
      type: ['string', 'null'],
      format: 'date-time',
      description: 'the last time the provider was asked (poll, refresh, sync)',
    },
    created_at: { type: 'string', format: 'date-time' },
    updated_at: { type: 'string', format: 'date-time' },
  },
} as const;
