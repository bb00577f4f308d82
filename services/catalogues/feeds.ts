import type { FromSchema } from 'json-schema-to-ts';
import type { EntityManager } from '@mikro-orm/postgresql';
import { ScheduleNotFoundError, ScheduleOverlapPolicy, type Client } from '@temporalio/client';
import type { Config } from '../../config.js';
import type { RequestContext } from '../platform/context.js';
import { conflict, notFound, validationFailed } from '../platform/errors.js';
import { numericId } from '../platform/ids.js';
import { iso } from '../platform/time.js';
import { pageAnswer } from '../platform/pagination.js';
import { assertDestinationAllowed, destinationUrlSchema } from '../platform/destinations.js';
import { recordNotice } from '../account/index.js';
import { emitEvent } from '../webhooks/index.js';
import { scheduleAction, startWorkflow } from '../../temporal/starters.js';
import type { FeedPullInput } from '../../workflows/catalogues/feed-pull.js';
import { feedPullStarter, feedScheduleId, scheduledFeedPullStarter } from '../../workflows/catalogues/feed-pull.starter.js';
import { FEED_FIELDS, FEED_FORMATS, isFeedField, type FeedMapping } from '../../domain/catalogues/feed-mapping.js';
import { feedScheduleCron } from './feed-schedule.js';
import { listPage } from '../../domain/catalogues/product-input.js';
import { CATALOGUE_LIMITS, SYNC_MODES, type SyncMode } from '../../domain/catalogues/vocabulary.js';
import { requireShop } from './shops.js';
import { syncView } from './syncs.js';
import { syncOfAccount } from './store/syncs.js';
import { lockShop } from './store/shops.js';
import {
  countFeeds,
  countPullDone,
  countPullFailed,
  deleteFeedRow,
  feedOfShop,
  feedsPage,
  feedViewRow,
  insertFeed,
  insertFeedRun,
  lockFeed,
  markFeedRunRunning,
  runFailureReason,
  runStatus,
  startRun,
  unendedPull,
  updateFeedRow,
  type FeedRow,
  type FeedViewRow,
} from './store/feeds.js';

export { feedForPull, storePulledMapping } from './store/feeds.js';
import { finishSyncRun } from './sync-ingest.js';

// Product feeds (contract: Feed; POST …/feeds, POST …/feeds/{feed}/run; the list, read, change and
// delete paths are ours, docs/decisions.md "Feeds"). A feed is a URL pulled at once, on its Temporal
// Schedule and on demand; every pull is a sync run of kind feed, applied by the same steps as a
// product batch. The run bookkeeping the pull workflow's activities call (open, fail, finish,
// failure counting and switching a feed off) is here too, in one place with the rules it keeps.

/** What the feed services need: a Temporal client, the task queue, and the outbound destination policy. */
export interface FeedDeps {
  temporal: Client;
  config: Pick<Config, 'taskQueue' | 'allowLoopbackDestinations' | 'catalogueSyncChunkSize'>;
}

/** Feeds a shop may have: each is a schedule and a puller; more is a mistake, not a catalogue. */
export const FEEDS_PER_SHOP = 50;
/** Columns a mapping may name (a product feed has a few dozen). */
export const MAPPING_MAX_COLUMNS = 200;

const feedFields = {
  url: {
    ...destinationUrlSchema,
    description:
      'http or https address of an XML (RSS/Atom with the g: namespace), CSV (delimiter detected) or JSON (an array, or {products:[…]} / {items:[…]}) feed. ' +
      'An address of this machine or a private network is refused.',
  },
  schedule: {
    type: ['string', 'null'],
    maxLength: 64,
    description:
      'hourly, daily (00:00 UTC), weekly (Monday 00:00 UTC), or a cron expression (five fields, UTC) whose minute is one number (at most hourly); ' +
      'each pull starts up to 5 minutes after its time. null or absent: pulled only at create and on demand.',
  },
  mapping: {
    type: 'object',
    maxProperties: MAPPING_MAX_COLUMNS,
    propertyNames: { minLength: 1, maxLength: 255 },
    additionalProperties: { enum: [...FEED_FIELDS, null] },
    description:
      'feed column (as written in the file, e.g. g:price or Variant SKU) → product field, or null to leave a column out. Columns not named are guessed ' +
      'at each pull: our field names, then Meta/Google attribute names (id, title, image_link, …), then common aliases. The feed shows the mapping its last pull used.',
  },
  mode: {
    enum: [...SYNC_MODES],
    description:
      'replace (default): products missing from the feed are retired; upsert: a partial feed, nothing retired. A replace pull with no usable rows, ' +
      'or with less than half the usable rows of the last completed pull (when that had at least 20), is a failed run and applies nothing.',
  },
} as const;

/** POST …/feeds. */
export const createFeedBody = { type: 'object', required: ['url'], additionalProperties: false, properties: feedFields } as const;
/** PATCH …/feeds/{feed}: the fields sent change, and enabled switches the feed on or off. */
export const updateFeedBody = {
  type: 'object',
  additionalProperties: false,
  properties: {
    ...feedFields,
    enabled: {
      type: 'boolean',
      description: `true switches the feed on again (after ${CATALOGUE_LIMITS.feedFailuresBeforeOff} failed pulls in a row it is switched off) and resets its failure count; false switches it off (the schedule is paused)`,
    },
  },
} as const;

export const feedSchema = {
  type: 'object',
  required: ['id', 'catalogue_id', 'url', 'schedule', 'mapping', 'mode', 'enabled', 'consecutive_failures', 'last_sync_id'],
  properties: {
    id: { type: 'integer' },
    catalogue_id: { type: 'integer' },
    url: { type: 'string' },
    schedule: { type: ['string', 'null'], description: 'hourly, daily, weekly or a cron expression (UTC); null: pulled only on demand' },
    mapping: {
      type: 'object',
      description:
        'feed column → product field (null: the column is not used). Guessed from the headers at each pull for columns not named here; correct it with PATCH.',
      additionalProperties: { type: ['string', 'null'] },
    },
    mode: { enum: ['replace', 'upsert'] },
    format: { enum: [...FEED_FORMATS, null], description: 'as detected at the last pull' },
    enabled: {
      type: 'boolean',
      description: `false once ${CATALOGUE_LIMITS.feedFailuresBeforeOff} pulls in a row failed (or when switched off)`,
    },
    consecutive_failures: { type: 'integer' },
    last_sync_id: { type: ['integer', 'null'], description: 'the latest pull’s sync run (GET …/syncs/{sync})' },
    last_row_count: { type: ['integer', 'null'], description: 'usable rows of the last completed pull (the shrink guard’s reference)' },
    last_sync: {
      type: ['object', 'null'],
      properties: {
        id: { type: 'integer' },
        status: { type: 'string' },
        failure_reason: { type: ['string', 'null'] },
        finished_at: { type: ['string', 'null'], format: 'date-time' },
      },
    },
    created_at: { type: 'string', format: 'date-time' },
    updated_at: { type: 'string', format: 'date-time' },
  },
} as const;

export const feedView = (r: FeedViewRow) => ({
  id: r.id,
  catalogue_id: r.catalogue_id,
  url: r.url,
  schedule: r.schedule,
  mapping: r.mapping,
  mode: r.mode,
  format: r.format,
  enabled: r.enabled,
  consecutive_failures: r.consecutive_failures,
  last_sync_id: r.last_sync_id === null ? null : Number(r.last_sync_id),
  last_row_count: r.last_row_count,
  last_sync:
    r.last_sync_id === null || !r.last_status
      ? null
      : {
          id: Number(r.last_sync_id),
          status: r.last_status,
          failure_reason: r.last_failure_reason ?? null,
          finished_at: iso(r.last_finished_at),
        },
  created_at: iso(r.created_at)!,
  updated_at: iso(r.updated_at)!,
});

export type FeedInput = FromSchema<typeof updateFeedBody>;

/** The schedule as stored (the word or the cron, spaces normalised), or a 422 naming `schedule`. */
function checkSchedule(schedule: string | null | undefined): string | null | undefined {
  if (schedule === undefined || schedule === null) return schedule;
  const s = schedule.trim().replace(/\s+/g, ' ');
  if (s === '') return null;
  const parsed = feedScheduleCron(s);
  if ('problem' in parsed) throw validationFailed({ schedule: [parsed.problem] });
  return /^[a-z]+$/i.test(s) ? s.toLowerCase() : s;
}

function checkMapping(mapping: Record<string, unknown> | undefined): FeedMapping | undefined {
  if (mapping === undefined) return undefined;
  const errors: Record<string, string[]> = {};
  const out: FeedMapping = {};
  for (const [column, field] of Object.entries(mapping)) {
    if (field !== null && !isFeedField(field))
      errors[`mapping.${column}`] = [`The mapping of "${column}" must be a product field or null.`];
    else out[column] = field;
  }
  if (Object.keys(errors).length) throw validationFailed(errors);
  return out;
}

async function requireFeed(em: EntityManager, accountId: number, catalogueId: number, ref: string | number, forUpdate = false) {
  const id = numericId(ref, 'Feed');
  const row = await feedOfShop(em, id, accountId, catalogueId, forUpdate);
  if (!row) throw notFound('Feed');
  return row;
}

async function readFeed(em: EntityManager, accountId: number, feedId: number) {
  const row = await feedViewRow(em, feedId, accountId);
  if (!row) throw notFound('Feed');
  return feedView(row);
}

/** A queued sync run of kind feed, named on the feed as its latest (the caller holds the feed row). */
async function recordRun(tx: EntityManager, feed: Pick<FeedRow, 'id' | 'account_id' | 'catalogue_id' | 'mode'>): Promise<number> {
  return insertFeedRun(tx, feed);
}

/** The pull of this feed that has not ended yet, if any (one at a time: two replace pulls would race). */
async function runningPull(em: EntityManager, feedId: number): Promise<number | null> {
  return unendedPull(em, feedId);
}

async function startPull(deps: FeedDeps, accountId: number, catalogueId: number, feedId: number, syncId: number) {
  const input: FeedPullInput = { accountId, catalogueId, feedId, syncId, chunkSize: deps.config.catalogueSyncChunkSize };
  await startWorkflow(deps, feedPullStarter, { accountId, feedId, syncId }, [input]);
}

/**
 * Makes the feed's Temporal Schedule match the row: none without a schedule, else the schedule's
 * cron (plus up to five minutes of jitter, so feeds on the same word do not all pull at once),
 * paused while the feed is switched off.
 */
export async function syncFeedSchedule(
  deps: FeedDeps,
  feed: Pick<FeedRow, 'id' | 'account_id' | 'catalogue_id' | 'schedule' | 'enabled'>,
): Promise<void> {
  const scheduleId = feedScheduleId(feed.account_id, feed.id);
  const handle = deps.temporal.schedule.getHandle(scheduleId);
  if (!feed.schedule) {
    await handle.delete().catch((err: unknown) => {
      if (!(err instanceof ScheduleNotFoundError)) throw err;
    });
    return;
  }
  const parsed = feedScheduleCron(feed.schedule);
  if ('problem' in parsed) throw validationFailed({ schedule: [parsed.problem] });
  const spec = { cronExpressions: [parsed.cron], jitter: '5 minutes' as const };
  const note = feed.enabled ? undefined : 'feed switched off';
  try {
    await handle.update((prev) => ({ ...prev, spec, state: { ...prev.state, paused: !feed.enabled, note } }));
  } catch (err) {
    if (!(err instanceof ScheduleNotFoundError)) throw err;
    const input: FeedPullInput = {
      accountId: feed.account_id,
      catalogueId: feed.catalogue_id,
      feedId: feed.id,
      chunkSize: deps.config.catalogueSyncChunkSize,
    };
    await deps.temporal.schedule.create({
      scheduleId,
      spec,
      action: scheduleAction(deps.config, scheduledFeedPullStarter, { accountId: feed.account_id, feedId: feed.id }, [input]),
      // A missed pull is skipped rather than replayed in a burst after an outage; a pull still
      // running when the next is due is not doubled.
      policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: '1 minute' },
      state: { paused: !feed.enabled, ...(note ? { note } : {}) },
    });
  }
}

// ---------------------------------------------------------------------------------------------
// The operations

/**
 * A feed, its first pull recorded and started, and its schedule, all before the commit: if the
 * start or the schedule fails nothing is kept; if the commit fails the pull finds no run and ends
 * (and a scheduled pull that finds no feed removes its schedule).
 */
export async function createFeed(rc: RequestContext, deps: FeedDeps, catalogueRef: string, input: FromSchema<typeof createFeedBody>) {
  const shop = await requireShop(rc, catalogueRef);
  await assertDestinationAllowed(input.url, deps.config, 'url');
  const schedule = checkSchedule(input.schedule) ?? null;
  const mapping = checkMapping(input.mapping) ?? {};
  const mode = input.mode ?? 'replace';
  const feedId = await rc.em.transactional(async (tx) => {
    // The shop row's lock keeps two creates from both passing the count.
    await lockShop(tx, shop.id);
    if ((await countFeeds(tx, shop.id)) >= FEEDS_PER_SHOP)
      throw conflict(`The catalogue has ${FEEDS_PER_SHOP} feeds already; delete one first.`);
    const feed = await insertFeed(tx, { accountId: rc.account.id, catalogueId: shop.id, url: input.url, schedule, mapping, mode });
    const syncId = await recordRun(tx, feed);
    await syncFeedSchedule(deps, feed);
    await startPull(deps, rc.account.id, shop.id, feed.id, syncId);
    return feed.id;
  });
  rc.log.info({ account: rc.account.id, feed: feedId }, 'feed created');
  return readFeed(rc.em, rc.account.id, feedId);
}

/** The shop's feeds, oldest first (a shop has a handful). */
export async function listFeeds(rc: RequestContext, catalogueRef: string, q: { page?: number; per_page?: number; limit?: number }) {
  const shop = await requireShop(rc, catalogueRef);
  const { page, perPage, offset } = listPage(q);
  const total = await countFeeds(rc.em, shop.id, rc.account.id);
  const rows = await feedsPage(rc.em, shop.id, rc.account.id, perPage, offset);
  return pageAnswer('feeds', rows.map(feedView), { page, perPage }, total);
}

export async function getFeed(rc: RequestContext, catalogueRef: string, feedRef: string) {
  const shop = await requireShop(rc, catalogueRef);
  const feed = await requireFeed(rc.em, rc.account.id, shop.id, feedRef);
  return readFeed(rc.em, rc.account.id, feed.id);
}

/**
 * Changes a feed. `mapping` replaces the saved mapping (columns it leaves out are guessed again at
 * the next pull); `enabled: true` switches a feed on again and resets its failure count; the
 * schedule follows the row (made, changed, paused, resumed or removed) before the commit. A new
 * url, mapping or mode, or `enabled: true`, also drops the shrink guard's reference: the next
 * completed pull sets it again (the way to accept a feed that really did shrink).
 */
export async function updateFeed(rc: RequestContext, deps: FeedDeps, catalogueRef: string, feedRef: string, input: FeedInput) {
  const shop = await requireShop(rc, catalogueRef);
  if (input.url !== undefined) await assertDestinationAllowed(input.url, deps.config, 'url');
  const schedule = checkSchedule(input.schedule);
  const mapping = checkMapping(input.mapping);
  const feedId = await rc.em.transactional(async (tx) => {
    const feed = await requireFeed(tx, rc.account.id, shop.id, feedRef, true);
    const enabled = input.enabled ?? feed.enabled;
    const updated = await updateFeedRow(tx, feed.id, {
      url: input.url ?? feed.url,
      schedule: schedule === undefined ? feed.schedule : schedule,
      mapping: mapping ?? feed.mapping,
      mode: input.mode ?? feed.mode,
      enabled,
      resetFailures: input.enabled === true,
      dropRowCount:
        input.enabled === true ||
        (input.url !== undefined && input.url !== feed.url) ||
        mapping !== undefined ||
        (input.mode !== undefined && input.mode !== feed.mode),
    });
    await syncFeedSchedule(deps, updated);
    return feed.id;
  });
  rc.log.info({ account: rc.account.id, feed: feedId, fields: Object.keys(input) }, 'feed changed');
  return readFeed(rc.em, rc.account.id, feedId);
}

/** Removes the feed and its schedule. Its past runs stay readable under …/syncs; a pull under way ends without applying. */
export async function deleteFeed(rc: RequestContext, deps: FeedDeps, catalogueRef: string, feedRef: string) {
  const shop = await requireShop(rc, catalogueRef);
  const id = await rc.em.transactional(async (tx) => {
    const feed = await requireFeed(tx, rc.account.id, shop.id, feedRef, true);
    await deleteFeedRow(tx, feed.id);
    await syncFeedSchedule(deps, { ...feed, schedule: null });
    return feed.id;
  });
  rc.log.info({ account: rc.account.id, feed: id }, 'feed deleted');
  return { id, deleted: true as const };
}

/** Pulls now: answers the new sync run (202, status queued). A switched-off feed, or one whose pull is still under way, is a 409. */
export async function runFeed(rc: RequestContext, deps: FeedDeps, catalogueRef: string, feedRef: string) {
  const shop = await requireShop(rc, catalogueRef);
  const { feedId, syncId } = await rc.em.transactional(async (tx) => {
    const feed = await requireFeed(tx, rc.account.id, shop.id, feedRef, true);
    if (!feed.enabled) throw conflict('The feed is switched off; PATCH it with enabled true to switch it on again.');
    const running = await runningPull(tx, feed.id);
    if (running !== null) throw conflict(`A pull of this feed is already under way (sync ${running}).`);
    const syncId = await recordRun(tx, feed);
    await startPull(deps, rc.account.id, shop.id, feed.id, syncId);
    return { feedId: feed.id, syncId };
  });
  rc.log.info({ account: rc.account.id, feed: feedId, sync: syncId }, 'feed pull started');
  const run = await syncOfAccount(rc.em, syncId, rc.account.id);
  return syncView(run!);
}

// ---------------------------------------------------------------------------------------------
// The pull's bookkeeping (called by activities/catalogues/feed-pull.ts)

export interface OpenedRun {
  syncId: number;
  mode: SyncMode;
  /** Usable rows of the last completed pull: what the shrink guard compares against. */
  lastRowCount: number | null;
}

/**
 * Starts a pull's run. With a sync id (recorded by the API) it is marked running; null means the
 * API's transaction has not committed (yet, or ever): the caller retries, then gives up. Without
 * one (a scheduled pull) a run is recorded now, unless the feed is gone, switched off, or already
 * being pulled: then the reason it is skipped.
 */
export async function openFeedRun(
  em: EntityManager,
  input: { accountId: number; feedId: number; syncId?: number },
): Promise<OpenedRun | { skipped: 'feed deleted' | 'feed switched off' | 'pull under way' } | null> {
  return em.transactional(async (tx) => {
    const feed = await lockFeed(tx, input.feedId, input.accountId);
    if (input.syncId !== undefined) {
      if (!(await markFeedRunRunning(tx, input.syncId, input.accountId, input.feedId))) return null;
      if (!feed) {
        await closeRun(tx, input.syncId, 'the feed was deleted');
        return { skipped: 'feed deleted' };
      }
      return { syncId: input.syncId, mode: feed.mode, lastRowCount: feed.last_row_count };
    }
    if (!feed) return { skipped: 'feed deleted' };
    if (!feed.enabled) return { skipped: 'feed switched off' };
    if ((await runningPull(tx, feed.id)) !== null) return { skipped: 'pull under way' };
    const syncId = await recordRun(tx, feed);
    await startRun(tx, syncId);
    return { syncId, mode: feed.mode, lastRowCount: feed.last_row_count };
  });
}

/**
 * Fails a run that was never applied, the way the batch's steps end one (finishSyncRun: status,
 * reason, staged rows dropped, catalogue.sync.failed emitted), once: a run already ended is left alone.
 */
async function closeRun(tx: EntityManager, syncId: number, reason: string): Promise<void> {
  await finishSyncRun(tx, { syncId, platforms: {}, problems: [], problemsTruncated: false, failureReason: reason.slice(0, 1000) });
}

export interface FeedTally {
  enabled: boolean;
  consecutiveFailures: number;
  /** This call switched the feed off. */
  switchedOff: boolean;
  schedule: string | null;
  catalogueId: number;
}

/**
 * Counts a pull's outcome on its feed, once per run (`counted_sync_id`): a completed pull resets
 * the failure count and records its usable rows; a failed one adds a failure, and the tenth in a
 * row switches the feed off, in the same transaction as the event and the notice that say so.
 */
async function tallyRun(
  tx: EntityManager,
  accountId: number,
  feedId: number,
  syncId: number,
  outcome: { ok: true; usable: number } | { ok: false; reason: string },
): Promise<FeedTally | null> {
  const feed = await lockFeed(tx, feedId, accountId);
  if (!feed) return null;
  const tally = (f: FeedRow, switchedOff = false): FeedTally => ({
    enabled: f.enabled,
    consecutiveFailures: f.consecutive_failures,
    switchedOff,
    schedule: f.schedule,
    catalogueId: f.catalogue_id,
  });
  if (feed.counted_sync_id !== null && Number(feed.counted_sync_id) >= syncId) return tally(feed);
  if (outcome.ok) {
    return tally(await countPullDone(tx, feedId, syncId, outcome.usable));
  }
  const failures = feed.consecutive_failures + 1;
  const switchOff = feed.enabled && failures >= CATALOGUE_LIMITS.feedFailuresBeforeOff;
  const row = await countPullFailed(tx, feedId, syncId, failures, switchOff);
  if (switchOff) {
    const fields = {
      feed_id: feedId,
      catalogue_id: feed.catalogue_id,
      url: feed.url,
      consecutive_failures: failures,
      last_sync_id: syncId,
    };
    await emitEvent(tx, accountId, 'catalogue.feed.disabled', { ...fields, reason: outcome.reason });
    await recordNotice(tx, accountId, {
      kind: 'catalogue.feed.disabled',
      message:
        `Feed ${feedId} (${feed.url.slice(0, 200)}) was switched off after ${failures} failed pulls in a row; the last: ${outcome.reason.slice(0, 300)}. ` +
        'Fix the feed, then switch it on again (PATCH the feed with enabled true).',
      data: { ...fields, reason: outcome.reason.slice(0, 1000) },
      dedupeKey: `catalogue.feed.disabled:${feedId}:${syncId}`,
    });
  }
  return tally(row, switchOff);
}

/** A pull that failed before it was applied (the URL, the file, or the shrink guard): the run fails, nothing is applied. */
export async function failFeedRun(
  em: EntityManager,
  input: { accountId: number; feedId: number; syncId: number; reason: string },
): Promise<FeedTally | null> {
  return em.transactional(async (tx) => {
    await closeRun(tx, input.syncId, input.reason);
    const run = await runFailureReason(tx, input.syncId);
    return tallyRun(tx, input.accountId, input.feedId, input.syncId, { ok: false, reason: run?.failure_reason ?? input.reason });
  });
}

/** After the apply steps: counts the run as they ended it (completed or failed). */
export async function finishFeedRun(
  em: EntityManager,
  input: { accountId: number; feedId: number; syncId: number; usable: number },
): Promise<{ status: string; tally: FeedTally | null }> {
  return em.transactional(async (tx) => {
    const run = await runStatus(tx, input.syncId, input.accountId);
    const status = run?.status ?? 'failed';
    const tally =
      status === 'completed'
        ? await tallyRun(tx, input.accountId, input.feedId, input.syncId, { ok: true, usable: input.usable })
        : await tallyRun(tx, input.accountId, input.feedId, input.syncId, { ok: false, reason: run?.failure_reason ?? 'the run failed' });
    return { status, tally };
  });
}

/** Pauses a switched-off feed's schedule (idempotent; a feed without one has nothing to pause). */
export async function pauseFeedSchedule(temporal: Client, accountId: number, feedId: number): Promise<void> {
  try {
    await temporal.schedule.getHandle(feedScheduleId(accountId, feedId)).pause('feed switched off after repeated failed pulls');
  } catch (err) {
    if (!(err instanceof ScheduleNotFoundError)) throw err;
  }
}

/** Removes the schedule of a feed that no longer exists (a create whose commit failed after the schedule was made). */
export async function dropOrphanSchedule(temporal: Client, accountId: number, feedId: number): Promise<void> {
  try {
    await temporal.schedule.getHandle(feedScheduleId(accountId, feedId)).delete();
  } catch (err) {
    if (!(err instanceof ScheduleNotFoundError)) throw err;
  }
}
