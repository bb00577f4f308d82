import { ApplicationFailure } from '@temporalio/activity';
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import {
  readAudiencePage,
  draftRecipients,
  insertRecipientMessages,
  debitSegments,
  type AudienceSource,
  type CampaignAudience,
} from '../../services/campaigns/campaign-audience.js';
import { advanceCampaign, lockCampaign as lockCampaignRow, pauseRunning, setCampaignStatus } from '../../services/campaigns/store.js';
import { smsChannelActive } from '../../services/messaging/index.js';
import { accountStatus } from '../../services/account/index.js';
import type { Logger } from '../../logger.js';

export interface CampaignActivityDeps {
  orm: MikroORM;
  log: Logger;
  smsSegmentPrice: string;
}

export type CampaignStatus = 'draft' | 'scheduled' | 'running' | 'paused' | 'completed' | 'cancelled';
export interface CampaignPageOutcome {
  /** more: call again; completed / paused / cancelled: the campaign moved there; stopped: it was no longer running. */
  state: 'more' | 'completed' | 'paused' | 'cancelled' | 'stopped';
  cursor: number;
  totalRecipients: number;
  inserted: number;
  skipped: number;
}

class InsufficientFunds extends Error {}

/**
 * The campaign, locked for this transaction, with whether its SMS channel is active (null: none)
 * and its account's status (asked of the account family).
 */
async function lockCampaign(em: EntityManager, id: number) {
  const c = await lockCampaignRow(em, id);
  if (!c) return null;
  const status = await accountStatus(em, c.account_id);
  return { ...c, channel_active: await smsChannelActive(em, c.channel_id), account_status: status };
}

/**
 * One audience page in one transaction: the page's message records, the wallet debit, the cursor
 * and total_recipients commit together. A retry after a crash either sees the page done (cursor
 * moved) or redoes it from scratch; the unique (campaign_id, contact_id) makes a double write a no-op.
 */
async function campaignPage(em: EntityManager, campaignId: number, pageSize: number, price: string): Promise<CampaignPageOutcome> {
  const c = await lockCampaign(em, campaignId);
  if (!c) throw ApplicationFailure.nonRetryable(`campaign ${campaignId} is gone`, 'CampaignMissing');
  const base = { cursor: Number(c.cursor), totalRecipients: c.total_recipients, inserted: 0, skipped: 0 };
  if (c.status !== 'running') return { ...base, state: 'stopped' };
  // A suspended account's campaign stops where it is, as when the wallet runs out: paused, resumed
  // (POST /campaign/{uid}/resume) once the account is active again. What it already queued fails at
  // dispatch (ACCOUNT_SUSPENDED_ERROR).
  if (c.account_status !== 'active') {
    await setCampaignStatus(em, c.id, 'paused');
    return { ...base, state: 'paused' };
  }
  if (!c.channel_active) {
    await setCampaignStatus(em, c.id, 'cancelled');
    return { ...base, state: 'cancelled' };
  }
  // A group's campaign reads the group (none once the group is deleted); one made for another
  // family (an occasion's greeting) reads its own audience.
  const source: AudienceSource | null =
    c.contact_group_id !== null
      ? { groupId: c.contact_group_id }
      : c.audience !== null
        ? { audience: c.audience as CampaignAudience }
        : null;
  const page =
    source === null
      ? []
      : await readAudiencePage(em, {
          accountId: c.account_id,
          channelId: c.channel_id,
          afterId: Number(c.cursor),
          limit: pageSize,
          ...source,
        });
  const { drafts, skipped } = draftRecipients(c.message, page);
  const written = await insertRecipientMessages(
    em,
    {
      accountId: c.account_id,
      campaignId: c.id,
      channelId: c.channel_id,
      channelCode: c.channel_code,
      sender: c.sender,
      metadata: { source: 'campaign' },
    },
    drafts,
  );
  if (!(await debitSegments(em, c.account_id, written.queuedSegments, price))) throw new InsufficientFunds();
  const cursor = page.length ? page[page.length - 1].id : Number(c.cursor);
  const done = page.length < pageSize;
  await advanceCampaign(em, c.id, cursor, written.inserted, done ? 'completed' : 'running');
  return {
    state: done ? 'completed' : 'more',
    cursor,
    totalRecipients: c.total_recipients + written.inserted,
    inserted: written.inserted,
    skipped,
  };
}

export function createCampaignActivities(deps: CampaignActivityDeps) {
  return {
    /**
     * Moves a draft or scheduled campaign to running; a campaign whose route is gone or inactive is
     * cancelled. Not found yet means the API has not committed it: retried, then given up.
     */
    async beginCampaign(input: { campaignId: number }): Promise<CampaignStatus> {
      return deps.orm.em.fork().transactional(async (em) => {
        const c = await lockCampaign(em, input.campaignId);
        if (!c) throw ApplicationFailure.retryable(`campaign ${input.campaignId} is not visible`, 'CampaignNotVisible');
        if (c.status !== 'draft' && c.status !== 'scheduled') return c.status;
        const next: CampaignStatus = c.channel_active ? 'running' : 'cancelled';
        await setCampaignStatus(em, c.id, next);
        return next;
      });
    },

    async processCampaignPage(input: { campaignId: number; pageSize: number }): Promise<CampaignPageOutcome> {
      try {
        const out = await deps.orm.em
          .fork()
          .transactional((em) => campaignPage(em, input.campaignId, input.pageSize, deps.smsSegmentPrice));
        deps.log.debug({ campaignId: input.campaignId, ...out }, 'campaign page');
        return out;
      } catch (err) {
        if (!(err instanceof InsufficientFunds)) throw err;
        // The page rolled back whole; the campaign stops here, its cursor at the last covered page.
        const row = await pauseRunning(deps.orm.em.fork(), input.campaignId);
        deps.log.info({ campaignId: input.campaignId }, 'campaign paused: the wallet cannot cover the next page');
        return { state: 'paused', cursor: Number(row?.cursor ?? 0), totalRecipients: row?.total_recipients ?? 0, inserted: 0, skipped: 0 };
      }
    },
  };
}

export type CampaignActivities = ReturnType<typeof createCampaignActivities>;
