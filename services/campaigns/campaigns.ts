import type { FromSchema } from 'json-schema-to-ts';
import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import {
  accountCampaign,
  campaignOfKey,
  campaignStatus,
  insertCampaign,
  latestCampaignOfKeyPrefix,
  resumePaused,
  type CampaignRef,
  type CampaignRow,
} from './store.js';
import type { CampaignAudience } from './campaign-audience.js';
import { DomainError, conflict, notFound, validationFailed } from '../platform/errors.js';
import type { RequestContext } from '../platform/context.js';
import type { Config } from '../../config.js';
import { startWorkflow } from '../../temporal/starters.js';
import type { CampaignWorkflowInput } from '../../workflows/campaigns/campaign.js';
import { campaignResumeStarter, campaignStarter } from '../../workflows/campaigns/campaign.starter.js';
import { groupById, groupRef, groupsAmong } from '../contacts/index.js';
import { campaignCounts, parseScheduleTime, resolveSmsRoute, type ResolvedRoute } from '../messaging/index.js';
import { scheduleTimeSchema } from '../../domain/messaging/index.js';
import { newUid } from '../platform/ids.js';

export interface CampaignServiceDeps {
  temporal: Client;
  config: Config;
}
/** The body of POST /sms/campaign: the operation's input schema, and the type the service takes. */
export const campaignBody = {
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
    schedule_time: { ...scheduleTimeSchema, description: 'ISO 8601 with offset or Z; a past time starts at once' },
  },
} as const;
export type CampaignCreateInput = FromSchema<typeof campaignBody>;

/** A campaign with its group's reference (null once the group is gone) and its messages' counts (campaignCounts); none before it ran. */
type CampaignWithGroup = CampaignRow & {
  group: { uid: string; name: string } | null;
  counts?: Awaited<ReturnType<typeof campaignCounts>>;
};

const iso = (d: Date | string | null) => (d === null || d === undefined ? null : new Date(d).toISOString());

export function campaignView(r: CampaignWithGroup) {
  return {
    id: r.id,
    uid: r.uid,
    name: r.name,
    status: r.status,
    channel_type: 'sms' as const,
    tenant_channel_id: r.channel_id,
    channel_code: r.channel_code,
    message: r.message,
    sender: r.sender,
    scheduled_at: iso(r.scheduled_at),
    total_recipients: r.total_recipients,
    queued_count: r.counts?.queued ?? 0,
    sent_count: r.counts?.sent ?? 0,
    delivered_count: r.counts?.delivered ?? 0,
    awaiting_receipt_count: r.counts?.awaitingReceipt ?? 0,
    failed_count: r.counts?.failed ?? 0,
    in_flight_count: (r.counts?.queued ?? 0) + (r.counts?.awaitingReceipt ?? 0),
    contact_group:
      r.contact_group_id === null || r.group === null ? null : { id: r.contact_group_id, uid: r.group.uid, name: r.group.name },
    audience: (r.audience ?? null) as CampaignAudience | null,
    created_at: iso(r.created_at),
    updated_at: iso(r.updated_at),
  };
}

export const campaignSchema = {
  type: 'object',
  required: ['id', 'uid', 'name', 'status', 'channel_type', 'message'],
  properties: {
    id: { type: 'integer' },
    uid: { type: 'string' },
    name: { type: 'string' },
    status: {
      enum: ['draft', 'scheduled', 'running', 'paused', 'completed', 'cancelled'],
      description:
        'completed: dispatch finished, every recipient was written and handed to the dispatcher; delivery can still be in progress ' +
        '(in_flight_count) and the counts keep changing until it is 0',
    },
    channel_type: { const: 'sms' },
    tenant_channel_id: { type: ['integer', 'null'] },
    channel_code: { type: ['string', 'null'] },
    message: { type: 'string' },
    sender: { type: ['string', 'null'] },
    scheduled_at: { type: ['string', 'null'] },
    total_recipients: { type: 'integer', description: 'Recipients written so far (grows page by page while running)' },
    queued_count: { type: 'integer', description: 'Written, not yet accepted by the provider (queued or processing)' },
    sent_count: { type: 'integer', description: 'Accepted by the provider: sent, checking delivery, delivered or read' },
    delivered_count: { type: 'integer', description: 'Of sent_count, delivered or read' },
    awaiting_receipt_count: { type: 'integer', description: 'Of sent_count, waiting for a receipt (sent or checking delivery)' },
    failed_count: { type: 'integer', description: 'Refused when written (blacklisted, no number) or failed by the provider' },
    in_flight_count: {
      type: 'integer',
      description: 'Not final yet: queued_count + awaiting_receipt_count. queued_count + sent_count + failed_count = total_recipients',
    },
    contact_group: { type: ['object', 'null'], properties: { id: { type: 'integer' }, uid: { type: 'string' }, name: { type: 'string' } } },
    audience: {
      type: ['object', 'null'],
      description:
        'Whom a campaign without a contact group reads (an occasion greeting): the contacts that opted in, of contact_group_ids ' +
        '(all groups when null), each number once; kind contact_date keeps those whose custom field `field` holds one of month_days',
      properties: {
        kind: { enum: ['contact_date', 'subscribed'] },
        field: { type: 'string' },
        month_days: { type: 'array', items: { type: 'string' } },
        contact_group_ids: { type: ['array', 'null'], items: { type: 'integer' } },
      },
    },
    created_at: { type: ['string', 'null'] },
    updated_at: { type: ['string', 'null'] },
  },
} as const;

/** contact_list_id: numeric ids or UUIDs separated by comma, semicolon or whitespace. */
export const splitContactListIds = (value: string) => value.split(/[\s,;]+/).filter((s) => s !== '');

/** The account's groups named by the list, in the order first named; ids and UUIDs of one group collapse. */
export async function resolveCampaignGroups(rc: RequestContext, value: string) {
  const ids: number[] = [];
  const uids: string[] = [];
  const order = new Map<string, number>();
  splitContactListIds(value).forEach((token, i) => {
    const ref = groupRef(token);
    if (!ref) return;
    const key = 'id' in ref ? `id:${ref.id}` : `uid:${ref.uid}`;
    if (!order.has(key)) order.set(key, i);
    if ('id' in ref) ids.push(ref.id);
    else uids.push(ref.uid);
  });
  if (ids.length === 0 && uids.length === 0) return [];
  const rows = await groupsAmong(rc.em, rc.account.id, ids, uids);
  const rank = (g: { id: number; uid: string }) => Math.min(order.get(`id:${g.id}`) ?? Infinity, order.get(`uid:${g.uid}`) ?? Infinity);
  return rows.sort((a, b) => rank(a) - rank(b));
}

/**
 * POST /sms/campaign: one campaign per group found (404 when none). Each campaign and its workflow
 * start commit together: either the caller gets 201 and every campaign runs, or nothing was kept.
 * A sender_id that is not usable is 422 (as on /sms/send); an account with no SMS route at all gets
 * its campaigns cancelled (the contract's "no usable route").
 */
export async function createCampaigns(rc: RequestContext, deps: CampaignServiceDeps, input: CampaignCreateInput) {
  if (input.message.trim() === '') throw validationFailed({ message: ['The message field is required.'] });
  if (splitContactListIds(input.contact_list_id).length === 0)
    throw validationFailed({ contact_list_id: ['The contact list id field is required.'] });
  const scheduledAt = parseScheduleTime(input.schedule_time);
  const groups = await resolveCampaignGroups(rc, input.contact_list_id);
  if (groups.length === 0) throw notFound('Contact group');
  let route: ResolvedRoute | null;
  try {
    route = await resolveSmsRoute(rc, input.sender_id);
  } catch (err) {
    if (err instanceof DomainError && (input.sender_id === undefined || input.sender_id.trim() === '')) route = null;
    else throw err;
  }
  const status = route === null ? 'cancelled' : scheduledAt ? 'scheduled' : 'draft';
  const rows = await rc.em.transactional(async (em) => {
    const out: CampaignWithGroup[] = [];
    for (const g of groups) {
      const name = input.name !== undefined && input.name.trim() !== '' ? input.name.trim() : `${g.name} campaign`.slice(0, 160);
      const row = await insertCampaign(em, {
        uid: newUid('cmp'),
        accountId: rc.account.id,
        groupId: g.id,
        name,
        message: input.message,
        sender: route?.sender ?? null,
        channelId: route?.channelId ?? null,
        channelCode: route?.channelCode ?? null,
        status,
        scheduledAt,
      });
      if (status !== 'cancelled') await startCampaignWorkflow(deps, rc.account.id, row, scheduledAt);
      out.push({ ...row, group: { uid: g.uid, name: g.name } });
    }
    return out;
  });
  return rows.map(campaignView);
}

/**
 * Starts the campaign's workflow (id `campaign/<account>/<uid>`). A new campaign's id is never
 * reused. A resumed one (`resumeFrom`: its cursor) starts a new run under the same id, past the
 * schedule and the begin step; the run that paused it may still be closing, so that one is ended.
 */
export async function startCampaignWorkflow(
  deps: CampaignServiceDeps,
  accountId: number,
  row: { id: number; uid: string },
  scheduledAt: Date | null,
  resumeFrom?: number,
) {
  const input: CampaignWorkflowInput = {
    accountId,
    campaignId: row.id,
    uid: row.uid,
    scheduledAt: scheduledAt ? scheduledAt.toISOString() : null,
    pageSize: deps.config.campaignPageSize,
    pagesPerRun: deps.config.campaignPagesPerRun,
    ...(resumeFrom === undefined ? {} : { cursor: resumeFrom }),
  };
  const starter = resumeFrom === undefined ? campaignStarter : campaignResumeStarter;
  await startWorkflow(deps, starter, { accountId, campaignId: row.id, uid: row.uid }, [input]);
}

/** `{uid}`: the campaign's uid or numeric id; an id past the column's range is no campaign. */
function campaignRef(ref: string): CampaignRef {
  const byId = /^\d+$/.test(ref);
  if (byId && (ref.length > 10 || Number(ref) > 2_147_483_647)) throw notFound('Campaign');
  return byId ? { id: Number(ref) } : { uid: ref };
}

/**
 * POST /campaign/{uid}/resume: a paused campaign (its wallet could not cover a page) runs again from
 * where it stopped. The status moves to running and the new workflow run starts in one transaction;
 * the run's first page locks the campaign row, so it reads the committed status. 409 for any other
 * status, 404 for a missing or foreign campaign.
 */
export async function resumeCampaign(rc: RequestContext, deps: CampaignServiceDeps, ref: string) {
  const key = campaignRef(ref);
  await rc.em.transactional(async (em) => {
    const row = await resumePaused(em, rc.account.id, key);
    if (!row) {
      const current = await campaignStatus(em, rc.account.id, key);
      if (!current) throw notFound('Campaign');
      throw conflict(`Only a paused campaign can be resumed; this one is ${current.status}.`);
    }
    await startCampaignWorkflow(deps, rc.account.id, row, null, Number(row.cursor));
  });
  return getCampaign(rc, ref);
}

/** GET /campaign/{uid}/view: by uid or numeric id, with the group reference and the counts (one aggregate). */
export async function getCampaign(rc: RequestContext, ref: string) {
  const row = await accountCampaign(rc.em, rc.account.id, campaignRef(ref));
  if (!row) throw notFound('Campaign');
  const group = row.contact_group_id === null ? undefined : await groupById(rc.em, row.contact_group_id);
  const counts = await campaignCounts(rc.em, row.id);
  return campaignView({ ...row, group: group ? { uid: group.uid, name: group.name } : null, counts });
}

/** A campaign another family asks for: one business key is one campaign of the account, ever. */
export interface KeyedCampaignInput {
  /** e.g. `occasion:birthday:2026-03-01`: a second request with it finds the first campaign. */
  businessKey: string;
  name: string;
  message: string;
  senderId: string | null;
  audience: CampaignAudience;
}

/**
 * The campaign of a business key, made on the first request (an occasion's greeting of one day):
 * the same route rules as POST /sms/campaign (a sender_id that is not usable is 422; an account
 * without any SMS route gets it cancelled), run by the same workflow with the same blacklist,
 * wallet and once-per-recipient rules. `created` is false when the key had its campaign already.
 *
 * The row commits first and the workflow starts after it (its id is the campaign's own, never
 * reused): a start that failed is made by the next request for the key, which finds the campaign
 * still a draft and starts it (a start already made is refused by its id and changes nothing).
 */
export async function createKeyedCampaign(rc: RequestContext, deps: CampaignServiceDeps, input: KeyedCampaignInput) {
  let route: ResolvedRoute | null;
  try {
    route = await resolveSmsRoute(rc, input.senderId ?? undefined);
  } catch (err) {
    if (err instanceof DomainError && (input.senderId === null || input.senderId.trim() === '')) route = null;
    else throw err;
  }
  const inserted = await rc.em.transactional((em) =>
    insertCampaign(em, {
      uid: newUid('cmp'),
      accountId: rc.account.id,
      groupId: null,
      name: input.name.slice(0, 160),
      message: input.message,
      sender: route?.sender ?? null,
      channelId: route?.channelId ?? null,
      channelCode: route?.channelCode ?? null,
      status: route === null ? 'cancelled' : 'draft',
      scheduledAt: null,
      audience: input.audience,
      businessKey: input.businessKey,
    }),
  );
  const row = inserted ?? (await campaignOfKey(rc.em, rc.account.id, input.businessKey));
  if (!row) throw conflict('The campaign of this key was removed while it was being made; try again.');
  if (row.status === 'draft') {
    try {
      await startCampaignWorkflow(deps, rc.account.id, row, null);
    } catch (err) {
      if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
    }
  }
  return { campaign: await getCampaign(rc, row.uid), created: inserted !== null };
}

/** The account's latest campaign whose business key starts with `prefix` (an occasion's last greeting), or null. */
export async function latestKeyedCampaign(rc: RequestContext, prefix: string) {
  const row = await latestCampaignOfKeyPrefix(rc.em, rc.account.id, prefix);
  return row ? { uid: row.uid, business_key: row.business_key, status: row.status, created_at: iso(row.created_at) } : null;
}
