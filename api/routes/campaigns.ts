import type { AppDeps } from '../app.js';
import { successOf, emptyQuery, type RouteDef } from '../registry.js';
import { campaignSchema, createCampaigns, getCampaign, resumeCampaign, type CampaignCreateInput } from '../../services/campaigns.js';

// SMS campaigns: legacy endpoints, so only the account credential is checked (no issuer permission).

const campaignBody = {
  type: 'object',
  required: ['contact_list_id', 'message'],
  properties: {
    contact_list_id: { type: 'string', minLength: 1, maxLength: 2000, description: 'Numeric group ids or group UUIDs separated by comma, semicolon or whitespace' },
    message: { type: 'string', minLength: 1, maxLength: 4096, description: 'Before personalization: {{name}}, {{phone}}, {{phone_number}}, {{country_code}}, {{cf:<key>}}' },
    sender_id: { type: 'string', maxLength: 64 },
    name: { type: 'string', maxLength: 160, description: 'Defaults to "<group name> campaign"' },
    schedule_time: { type: 'string', maxLength: 100, description: 'ISO 8601 with offset or Z; a past time starts at once' },
  },
} as const;

export function campaignRoutes(deps: AppDeps): RouteDef[] {
  return [
    {
      method: 'POST', path: '/api/v3/sms/campaign', tag: 'SMS', summary: 'Create one SMS campaign per contact group', auth: 'rest', body: campaignBody,
      description: 'Duplicates resolving to the same group collapse; one campaign per group found; 404 when none is found. '
        + 'The audience is read when the campaign runs. Not idempotent.',
      response: { status: 201, description: 'Campaigns created', schema: successOf({ type: 'object', required: ['campaigns'], properties: { campaigns: { type: 'array', items: campaignSchema } } }) },
      handler: async ({ rc, body }) => {
        const campaigns = await createCampaigns(rc, { temporal: deps.temporal, config: deps.config }, body as CampaignCreateInput);
        return { status: 201, body: { status: 'success', data: { campaigns } } };
      },
    },
    {
      method: 'GET', path: '/api/v3/campaign/{uid}/view', tag: 'SMS', summary: 'Read a campaign by uid or numeric id, with its counts', auth: 'rest', query: emptyQuery,
      response: { status: 200, description: 'The campaign', schema: successOf(campaignSchema) },
      handler: async ({ rc, params }) => ({ body: { status: 'success', data: await getCampaign(rc, params.uid) } }),
    },
    {
      method: 'POST', path: '/api/v3/campaign/{uid}/resume', tag: 'SMS', summary: 'Resume a paused campaign from where it stopped', auth: 'rest', query: emptyQuery,
      description: 'A campaign pauses when the prepaid wallet cannot cover its next page; top the wallet up, then resume. '
        + 'Only a paused campaign can be resumed (409 otherwise). Recipients already written are not written again.',
      body: { type: 'object', additionalProperties: false, properties: {} },
      response: { status: 200, description: 'The campaign, running again', schema: successOf(campaignSchema) },
      handler: async ({ rc, params }) => ({ body: { status: 'success', data: await resumeCampaign(rc, { temporal: deps.temporal, config: deps.config }, params.uid) } }),
    },
  ];
}
