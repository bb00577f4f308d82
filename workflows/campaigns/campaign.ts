import { proxyActivities, continueAsNew, workflowInfo, defineQuery, setHandler, sleep, ActivityFailure, log } from '@temporalio/workflow';
import type { CampaignActivities, CampaignStatus } from '../../activities/campaigns/campaign.js';

export interface CampaignWorkflowInput {
  accountId: number;
  campaignId: number;
  uid: string;
  /** ISO time to start at; null or past = at once. */
  scheduledAt: string | null;
  pageSize: number;
  pagesPerRun: number;
  /** Set by continue-as-new: the run is resuming a campaign already running (the database cursor is authoritative). */
  cursor?: number;
}

export interface CampaignState {
  status: CampaignStatus | 'starting' | 'abandoned';
  cursor: number;
  totalRecipients: number;
  /** Pages written by this run (continue-as-new starts a fresh count). */
  pages: number;
}

export const campaignStateQuery = defineQuery<CampaignState>('state');

// A page is one transaction of up to pageSize contacts; a worker that dies holding one is noticed after this timeout.
const db = proxyActivities<CampaignActivities>({
  startToCloseTimeout: '60 seconds',
  retry: { initialInterval: '500 milliseconds', backoffCoefficient: 2, maximumInterval: '30 seconds' },
});
// The API starts this workflow just before it commits the campaign, so the first read may come too early.
const begin = proxyActivities<CampaignActivities>({
  startToCloseTimeout: '10 seconds',
  retry: { initialInterval: '200 milliseconds', backoffCoefficient: 2, maximumInterval: '10 seconds', maximumAttempts: 10 },
});

/**
 * An SMS campaign: waits (durably) until its schedule, moves to running, then writes the audience as
 * message records page by page; the outbound dispatcher sends them. Progress lives in the campaigns
 * row (the API reads it there, with the counts of the messages); the query mirrors it for operators.
 */
export async function campaignWorkflow(input: CampaignWorkflowInput): Promise<CampaignState> {
  const state: CampaignState = {
    status: input.cursor === undefined ? 'starting' : 'running',
    cursor: input.cursor ?? 0,
    totalRecipients: 0,
    pages: 0,
  };
  setHandler(campaignStateQuery, () => state);

  if (input.cursor === undefined) {
    if (input.scheduledAt !== null) {
      const wait = new Date(input.scheduledAt).getTime() - Date.now();
      if (wait > 0) {
        state.status = 'scheduled';
        await sleep(wait);
      }
    }
    try {
      state.status = await begin.beginCampaign({ campaignId: input.campaignId });
    } catch (err) {
      if (!(err instanceof ActivityFailure)) throw err;
      log.warn('campaign never became visible', { campaignId: input.campaignId });
      state.status = 'abandoned';
      return state;
    }
    if (state.status !== 'running') return state;
  }

  for (;;) {
    const out = await db.processCampaignPage({ campaignId: input.campaignId, pageSize: input.pageSize });
    state.pages += 1;
    state.cursor = out.cursor;
    state.totalRecipients = out.totalRecipients;
    if (out.state !== 'more') {
      state.status = out.state === 'stopped' ? state.status : out.state;
      return state;
    }
    if (state.pages >= input.pagesPerRun || workflowInfo().continueAsNewSuggested) {
      await continueAsNew<typeof campaignWorkflow>({ ...input, cursor: state.cursor });
    }
  }
}
