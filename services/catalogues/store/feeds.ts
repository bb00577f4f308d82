import type { EntityManager } from '@mikro-orm/postgresql';
import { exec, many, one } from '../../../entities/db.js';
import type { Row } from '../../../entities/database.js';
import type { FeedFormat, FeedMapping } from '../../../domain/catalogues/feed-mapping.js';
import type { SyncMode } from '../../../domain/catalogues/vocabulary.js';

// Product feeds and the runs of their pulls.

type Feeds = Row<'catalogues', 'catalogue_feeds'>;

const FEED_FIELDS = [
  'id',
  'account_id',
  'catalogue_id',
  'url',
  'schedule',
  'mapping',
  'mode',
  'format',
  'enabled',
  'consecutive_failures',
  'last_sync_id',
  'last_row_count',
  'counted_sync_id',
  'created_at',
  'updated_at',
] as const;
const FEED_COLUMNS = FEED_FIELDS.join(', ');

/**
 * A feed row as stored: the mapping holds product fields only (the service checks it before it is
 * written), and the format is one a pull detected (storePulledMapping), null before the first.
 */
export type FeedRow = Omit<Pick<Feeds, (typeof FEED_FIELDS)[number]>, 'mapping' | 'format'> & {
  mapping: FeedMapping;
  format: FeedFormat | null;
};
/** A feed with its latest run's outcome, as the answer shows it. */
export type FeedViewRow = Omit<FeedRow, 'counted_sync_id'> & {
  last_status: string | null;
  last_failure_reason: string | null;
  last_finished_at: string | null;
};

const VIEW_SQL = `select ${FEED_FIELDS.filter((c) => c !== 'counted_sync_id')
  .map((c) => `f.${c}`)
  .join(', ')}, s.status as last_status, s.failure_reason as last_failure_reason, s.finished_at as last_finished_at
   from catalogue_feeds f left join catalogue_syncs s on s.id = f.last_sync_id`;

export async function feedOfShop(em: EntityManager, id: number, accountId: number, catalogueId: number, forUpdate = false) {
  return one<FeedRow>(
    em,
    `select ${FEED_COLUMNS} from catalogue_feeds where id = ? and account_id = ? and catalogue_id = ?${forUpdate ? ' for update' : ''}`,
    [id, accountId, catalogueId],
  );
}

/** The feed locked for the transaction. */
export async function lockFeed(em: EntityManager, id: number, accountId: number) {
  return one<FeedRow>(em, `select ${FEED_COLUMNS} from catalogue_feeds where id = ? and account_id = ? for update`, [id, accountId]);
}

export async function feedViewRow(em: EntityManager, id: number, accountId: number) {
  return one<FeedViewRow>(em, `${VIEW_SQL} where f.id = ? and f.account_id = ?`, [id, accountId]);
}

export async function countFeeds(em: EntityManager, catalogueId: number, accountId?: number): Promise<number> {
  const n =
    accountId === undefined
      ? await one<{ n: string }>(em, 'select count(*) as n from catalogue_feeds where catalogue_id = ?', [catalogueId])
      : await one<{ n: string }>(em, 'select count(*) as n from catalogue_feeds where catalogue_id = ? and account_id = ?', [
          catalogueId,
          accountId,
        ]);
  return Number(n!.n);
}

/** Oldest first. */
export async function feedsPage(em: EntityManager, catalogueId: number, accountId: number, limit: number, offset: number) {
  return many<FeedViewRow>(em, `${VIEW_SQL} where f.catalogue_id = ? and f.account_id = ? order by f.id limit ? offset ?`, [
    catalogueId,
    accountId,
    limit,
    offset,
  ]);
}

export async function insertFeed(
  em: EntityManager,
  f: { accountId: number; catalogueId: number; url: string; schedule: string | null; mapping: FeedMapping; mode: SyncMode },
): Promise<FeedRow> {
  return (await one<FeedRow>(
    em,
    `insert into catalogue_feeds (account_id, catalogue_id, url, schedule, mapping, mode, enabled, consecutive_failures, created_at, updated_at)
       values (?, ?, ?, ?, ?::jsonb, ?, true, 0, now(), now()) returning ${FEED_COLUMNS}`,
    [f.accountId, f.catalogueId, f.url, f.schedule, JSON.stringify(f.mapping), f.mode],
  ))!;
}

/** Writes the feed's settings; `resetFailures` and `dropRowCount` clear the failure count and the shrink guard's reference. */
export async function updateFeedRow(
  em: EntityManager,
  id: number,
  f: {
    url: string;
    schedule: string | null;
    mapping: FeedMapping;
    mode: SyncMode;
    enabled: boolean;
    resetFailures: boolean;
    dropRowCount: boolean;
  },
): Promise<FeedRow> {
  return (await one<FeedRow>(
    em,
    `update catalogue_feeds set url = ?, schedule = ?, mapping = ?::jsonb, mode = ?, enabled = ?,
              consecutive_failures = case when ? then 0 else consecutive_failures end,
              last_row_count = case when ? then null else last_row_count end, updated_at = now()
        where id = ? returning ${FEED_COLUMNS}`,
    [f.url, f.schedule, JSON.stringify(f.mapping), f.mode, f.enabled, f.resetFailures, f.dropRowCount, id],
  ))!;
}

export async function deleteFeedRow(em: EntityManager, id: number): Promise<void> {
  await exec(em, 'delete from catalogue_feeds where id = ?', [id]);
}

/** A queued sync run of kind feed, named on the feed as its latest. */
export async function insertFeedRun(
  em: EntityManager,
  feed: Pick<FeedRow, 'id' | 'account_id' | 'catalogue_id' | 'mode'>,
): Promise<number> {
  const sync = await one<Pick<Row<'catalogues', 'catalogue_syncs'>, 'id'>>(
    em,
    `insert into catalogue_syncs (account_id, catalogue_id, kind, feed_id, mode, status, platforms, problems, created_at)
     values (?, ?, 'feed', ?, ?, 'queued', '{}'::jsonb, '[]'::jsonb, now()) returning id`,
    [feed.account_id, feed.catalogue_id, feed.id, feed.mode],
  );
  await exec(em, 'update catalogue_feeds set last_sync_id = ?, updated_at = now() where id = ?', [sync!.id, feed.id]);
  return Number(sync!.id);
}

/** The pull of this feed that has not ended yet, if any. */
export async function unendedPull(em: EntityManager, feedId: number): Promise<number | null> {
  const row = await one<Pick<Row<'catalogues', 'catalogue_syncs'>, 'id'>>(
    em,
    `select id from catalogue_syncs where feed_id = ? and status in ('queued', 'running') order by id desc limit 1`,
    [feedId],
  );
  return row ? Number(row.id) : null;
}

/** Marks the API's recorded run running; false when it is not there or has ended. */
export async function markFeedRunRunning(em: EntityManager, syncId: number, accountId: number, feedId: number): Promise<boolean> {
  return !!(await one(
    em,
    `update catalogue_syncs set status = 'running', started_at = coalesce(started_at, now())
          where id = ? and account_id = ? and feed_id = ? and status in ('queued', 'running') returning id`,
    [syncId, accountId, feedId],
  ));
}

export async function startRun(em: EntityManager, syncId: number): Promise<void> {
  await exec(em, `update catalogue_syncs set status = 'running', started_at = now() where id = ?`, [syncId]);
}

export async function runFailureReason(em: EntityManager, syncId: number) {
  return one<Pick<Row<'catalogues', 'catalogue_syncs'>, 'failure_reason'>>(em, 'select failure_reason from catalogue_syncs where id = ?', [
    syncId,
  ]);
}

export async function runStatus(em: EntityManager, syncId: number, accountId: number) {
  return one<Pick<Row<'catalogues', 'catalogue_syncs'>, 'status' | 'failure_reason'>>(
    em,
    'select status, failure_reason from catalogue_syncs where id = ? and account_id = ?',
    [syncId, accountId],
  );
}

/** A completed pull: failures reset and its usable rows recorded, the run counted. */
export async function countPullDone(em: EntityManager, feedId: number, syncId: number, usable: number): Promise<FeedRow> {
  return (await one<FeedRow>(
    em,
    `update catalogue_feeds set consecutive_failures = 0, last_row_count = ?, counted_sync_id = ?, updated_at = now() where id = ? returning ${FEED_COLUMNS}`,
    [usable, syncId, feedId],
  ))!;
}

/** A failed pull: the failure count set, the feed switched off when `switchOff`, the run counted. */
export async function countPullFailed(em: EntityManager, feedId: number, syncId: number, failures: number, switchOff: boolean) {
  return (await one<FeedRow>(
    em,
    `update catalogue_feeds set consecutive_failures = ?, enabled = enabled and not ?, counted_sync_id = ?, updated_at = now()
      where id = ? returning ${FEED_COLUMNS}`,
    [failures, switchOff, syncId, feedId],
  ))!;
}

/** What a pull reads of its feed: the URL, the saved mapping, and the shop's currency for prices that name none. */
export async function feedForPull(em: EntityManager, accountId: number, feedId: number) {
  return one<Pick<FeedRow, 'url' | 'mapping' | 'mode' | 'catalogue_id'> & Pick<Row<'catalogues', 'catalogues'>, 'default_currency'>>(
    em,
    `select f.url, f.mapping, f.mode, f.catalogue_id, c.default_currency
       from catalogue_feeds f join catalogues c on c.id = f.catalogue_id
      where f.id = ? and f.account_id = ?`,
    [feedId, accountId],
  );
}

/** Stores the mapping a pull used and the detected format. */
export async function storePulledMapping(em: EntityManager, accountId: number, feedId: number, mapping: FeedMapping, format: FeedFormat) {
  await exec(em, 'update catalogue_feeds set mapping = ?::jsonb, format = ?, updated_at = now() where id = ? and account_id = ?', [
    JSON.stringify(mapping),
    format,
    feedId,
    accountId,
  ]);
}
