// The campaigns family as other families see it: a campaign of a business key (occasion greetings)
// made and run by the same machinery as POST /sms/campaign, and its view.
export {
  createKeyedCampaign,
  latestKeyedCampaign,
  campaignSchema,
  type KeyedCampaignInput,
  type CampaignServiceDeps,
} from './campaigns.js';
export type { CampaignAudience } from './campaign-audience.js';
