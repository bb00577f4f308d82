import { defineOperation } from '../operation.js';
import { campaignSchema, createCampaigns, getCampaign, resumeCampaign } from '../../services/campaigns/campaigns.js';

// SMS campaigns: legacy endpoints, so only the account credential is checked (no issuer permission).

const campaignBody = {
  type: 'object',
  required: ['contact_list_id', 'message'],
  properties: {
    contact_list_id: {
      type: 'string',
      minLength: 1,
      maxLength: 2000,
      description: 'Numeric group ids or group UUIDs separated by comma, semicolon or whitespace',
    },
    message: {
      type: 'string',
      minLength: 1,
      maxLength: 4096,
      description: 'Before personalization: {{name}}, {{phone}}, {{phone_number}}, {{country_code}}, {{cf:<key>}}',
    },
    sender_id: { type: 'string', maxLength: 64 },
    name: { type: 'string', maxLength: 160, description: 'Defaults to "<group name> campaign"' },
    schedule_time: { type: 'string', maxLength: 100, description: 'ISO 8601 with offset or Z; a past time starts at once' },
  },
} as const;

const write = { readOnlyHint: false, destructiveHint: false, openWorldHint: true } as const;

export const createCampaignOperation = defineOperation({
  name: 'create_sms_campaign',
  method: 'POST',
  path: '/api/v3/sms/campaign',
  tag: 'SMS',
  summary: 'Create one SMS campaign per contact group',
  auth: 'rest',
  body: campaignBody,
  description:
    'Duplicates resolving to the same group collapse; one campaign per group found; 404 when none is found. ' +
    'The audience is read when the campaign runs. Not idempotent.',
  output: {
    status: 201,
    description: 'Campaigns created',
    schema: { type: 'object', required: ['campaigns'], properties: { campaigns: { type: 'array', items: campaignSchema } } },
  },
  mcp: { servers: ['messaging'], scope: 'mcp:messaging', elevation: 'mcp:send', annotations: write },
  handler: async ({ rc, deps }, input) => ({ campaigns: await createCampaigns(rc, deps, input) }),
});

export const getCampaignOperation = defineOperation({
  name: 'get_campaign',
  method: 'GET',
  path: '/api/v3/campaign/{uid}/view',
  tag: 'SMS',
  summary: 'Read a campaign by uid or numeric id, with its counts',
  auth: 'rest',
  query: { type: 'object', properties: {}, additionalProperties: true },
  output: { status: 200, description: 'The campaign', schema: campaignSchema },
  mcp: { servers: ['messaging'], scope: 'mcp:messaging', annotations: { readOnlyHint: true, openWorldHint: false } },
  handler: async ({ rc }, { uid }) => getCampaign(rc, uid),
});

export const resumeCampaignOperation = defineOperation({
  name: 'resume_campaign',
  method: 'POST',
  path: '/api/v3/campaign/{uid}/resume',
  tag: 'SMS',
  summary: 'Resume a paused campaign from where it stopped',
  auth: 'rest',
  description:
    'A campaign pauses when the prepaid wallet cannot cover its next page; top the wallet up, then resume. ' +
    'Only a paused campaign can be resumed (409 otherwise). Recipients already written are not written again.',
  body: { type: 'object', additionalProperties: false, properties: {} },
  output: { status: 200, description: 'The campaign, running again', schema: campaignSchema },
  mcp: { servers: ['messaging'], scope: 'mcp:messaging', elevation: 'mcp:send', annotations: { ...write, idempotentHint: true } },
  handler: async ({ rc, deps }, { uid }) => resumeCampaign(rc, deps, uid),
});

export const campaignOperations = [createCampaignOperation, getCampaignOperation, resumeCampaignOperation];
