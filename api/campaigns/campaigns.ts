import { HINTS, defineOperation } from '../operation.js';
import { campaignBody, campaignSchema, createCampaigns, getCampaign, resumeCampaign } from '../../services/campaigns/campaigns.js';

// SMS campaigns: legacy endpoints, so only the account credential is checked (no issuer permission).

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
  refusals: { 404: 'The contact list (group) is not one of the account’s' },
  output: {
    kind: 'list',
    contract: 'Endpoints > SMS: 201 {status, data:{campaigns:[campaign]}}; data.campaigns is always an array',
    status: 201,
    description: 'Campaigns created',
    schema: { type: 'object', required: ['campaigns'], properties: { campaigns: { type: 'array', items: campaignSchema } } },
  },
  mcp: { servers: ['messaging'], scope: 'mcp:messaging', elevation: 'mcp:send', annotations: HINTS.send },
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
  output: { kind: 'resource', status: 200, description: 'The campaign', schema: campaignSchema },
  mcp: { servers: ['messaging'], scope: 'mcp:messaging', annotations: HINTS.read },
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
  output: { kind: 'resource', status: 200, description: 'The campaign, running again', schema: campaignSchema },
  mcp: { servers: ['messaging'], scope: 'mcp:messaging', elevation: 'mcp:send', annotations: { ...HINTS.send, idempotentHint: true } },
  handler: async ({ rc, deps }, { uid }) => resumeCampaign(rc, deps, uid),
});

export const campaignOperations = [createCampaignOperation, getCampaignOperation, resumeCampaignOperation];
