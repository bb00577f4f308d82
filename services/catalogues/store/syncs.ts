import type { EntityManager } from '@mikro-orm/postgresql';
import { exec, many, one } from '../../../entities/db.js';
import type { Row } from '../../../entities/database.js';
import { accountCurrencySql } from '../../account/index.js';
import type { MatchedProduct } from '../../../domain/catalogues/sync.js';
import type { PlatformKey, SyncMode, SyncStatus } from '../../../domain/catalogues/vocabulary.js';

// Sync runs and their staged rows: a batch's acceptance, the report reads, and the set-based apply
// of a run's rows (the chunk upsert, the replace step, the run's end). The apply statements are hot
// and set-based: kept as SQL text.

type Syncs = Row<'catalogues', 'catalogue_syncs'>;

const SYNC_FIELDS = [
  'id',
  'account_id',
  'catalogue_id',
  'kind',
  'feed_id',
  'mode',
  'status',
  'idempotency_key',
  'request_hash',
  'received',
  'created',
  'updated',
  'rejected',
  'retired',
  'platforms',
  'problems',
  'problems_truncated',
  'failure_reason',
  'created_at',
  'started_at',
  'finished_at',
] as const;
const SYNC_COLUMNS = SYNC_FIELDS.join(', ');

/** A sync run as its report reads it. */
export type SyncRunRow = Pick<Syncs, (typeof SYNC_FIELDS)[number]>;

// ---------------------------------------------------------------------------------------------
// Acceptance and reads

export async function syncRunOfKey(em: EntityManager, catalogueId: number, key: string | null): Promise<SyncRunRow | null> {
  return one<SyncRunRow>(em, `select ${SYNC_COLUMNS} from catalogue_syncs where catalogue_id = ? and idempotency_key = ?`, [
    catalogueId,
    key,
  ]);
}

/** A queued batch run; null when another run of the same key got there first. */
export async function insertBatchRun(
  em: EntityManager,
  r: { accountId: number; catalogueId: number; mode: SyncMode; key: string | null; hash: string | null; received: number },
): Promise<SyncRunRow | null> {
  return one<SyncRunRow>(
    em,
    `insert into catalogue_syncs (account_id, catalogue_id, kind, mode, status, idempotency_key, request_hash, received, platforms, problems, created_at)
       values (?, ?, 'batch', ?, 'queued', ?, ?, ?, '{}'::jsonb, '[]'::jsonb, now())
       on conflict (catalogue_id, idempotency_key) do nothing returning ${SYNC_COLUMNS}`,
    [r.accountId, r.catalogueId, r.mode, r.key, r.hash, r.received],
  );
}

/** The rows of a batch as its one page (rows 1..n). */
export async function stageBatchPage(em: EntityManager, syncId: number | string, rows: unknown[]): Promise<void> {
  await exec(em, 'insert into catalogue_sync_pages (sync_id, first_row, row_count, rows) values (?, 1, ?, ?)', [
    syncId,
    rows.length,
    JSON.stringify(rows),
  ]);
}

/** The advisory lock class of sync runs ("SY"); the object is the run id (an unrelated run sharing it only waits a moment). */
const SYNC_LOCK_CLASS = 0x5359;

/**
 * The lock a run's accepting transaction holds until it commits (acceptBatch): the workflow starts
 * inside that transaction, and its first step waits on the lock instead of finding nothing and
 * retrying (a retry interval was a visible share of a 5,000-row batch's time).
 */
export async function takeAcceptLock(em: EntityManager, syncId: number): Promise<void> {
  await one(em, 'select pg_advisory_xact_lock(?::int, ?::int)', [SYNC_LOCK_CLASS, syncId % 2 ** 31]);
}

export async function countSyncs(em: EntityManager, catalogueId: number, accountId: number): Promise<number> {
  return (await one<{ n: number }>(em, 'select count(*)::int as n from catalogue_syncs where catalogue_id = ? and account_id = ?', [
    catalogueId,
    accountId,
  ]))!.n;
}

/** Newest first. */
export async function syncsPage(em: EntityManager, catalogueId: number, accountId: number, limit: number, offset: number) {
  return many<SyncRunRow>(
    em,
    `select ${SYNC_COLUMNS} from catalogue_syncs where catalogue_id = ? and account_id = ? order by id desc limit ? offset ?`,
    [catalogueId, accountId, limit, offset],
  );
}

export async function syncOfShop(em: EntityManager, id: number | string, catalogueId: number, accountId: number) {
  return one<SyncRunRow>(em, `select ${SYNC_COLUMNS} from catalogue_syncs where id = ? and catalogue_id = ? and account_id = ?`, [
    id,
    catalogueId,
    accountId,
  ]);
}

export async function syncOfAccount(em: EntityManager, id: number, accountId: number) {
  return one<SyncRunRow>(em, `select ${SYNC_COLUMNS} from catalogue_syncs where id = ? and account_id = ?`, [id, accountId]);
}

// ---------------------------------------------------------------------------------------------
// The chunk apply

/** The run as a chunk reads it under its lock, with its shop's rules. */
export type RunLock = Pick<
  Syncs,
  'account_id' | 'catalogue_id' | 'mode' | 'status' | 'received' | 'created' | 'updated' | 'rejected' | 'applied_through'
> &
  Pick<Row<'catalogues', 'catalogues'>, 'allow_backorders' | 'sku_prefix' | 'channels' | 'default_currency'> & {
    problem_count: number;
    landed_empty: boolean;
  };

/** A sync run locked for its next chunk, with its shop's rules and default currency (the shop's, else its account's). */
export function lockSyncRun(em: EntityManager, syncId: number): Promise<RunLock | null> {
  return one<RunLock>(
    em,
    `select s.account_id, s.catalogue_id, s.mode, s.status, s.received, s.created, s.updated, s.rejected,
            jsonb_array_length(s.problems) as problem_count, coalesce(c.default_currency, ${accountCurrencySql('s.account_id')}) as default_currency,
            c.allow_backorders, c.sku_prefix, c.channels, s.applied_through, s.landed = '{}'::jsonb as landed_empty
       from catalogue_syncs s join catalogues c on c.id = s.catalogue_id
      where s.id = ? for update of s`,
    [syncId],
  );
}

const MATCH_COLUMNS = `p.id::int as id, p.sku, p.name, p.description, p.price::float8 as price, p.sale_price::float8 as sale_price, p.currency, p.image_url,
  p.availability, p.availability_explicit, p.condition, p.inventory, p.reserved, p.visibility, b.name as brand, c.name as category, p.product_type`;
const MATCH_FROM = `products p left join product_brands b on b.id = p.brand_id left join product_categories c on c.id = p.category_id`;

/** The shop's products of these skus, as a row matches them. */
export function productsMatchingSkus(em: EntityManager, catalogueId: number, skus: readonly string[]): Promise<MatchedProduct[]> {
  return many<MatchedProduct>(em, `select ${MATCH_COLUMNS} from ${MATCH_FROM} where p.catalogue_id = ? and p.sku = any(?::text[])`, [
    catalogueId,
    skus,
  ]);
}

/** The shop's product of each name: a live one first, then the oldest. */
export function productsMatchingNames(em: EntityManager, catalogueId: number, names: readonly string[]): Promise<MatchedProduct[]> {
  return many<MatchedProduct>(
    em,
    `select distinct on (p.name) ${MATCH_COLUMNS} from ${MATCH_FROM} where p.catalogue_id = ? and p.name = any(?::text[])
          order by p.name, p.retired_at is not null, p.id`,
    [catalogueId, names],
  );
}

/** Which of these products an earlier chunk of the run landed a row on, and that row. */
export async function landedEarlier(em: EntityManager, syncId: number, productIds: readonly number[]) {
  return many<{ product_id: number; row_no: number }>(
    em,
    // IN over the asked ids is a hashed subplan: `key = any(array)` compared every landed key with
    // every id (50,000 × 1,000 a chunk) on a re-pull.
    `select l.key::int as product_id, l.value::int as row_no from catalogue_syncs s, jsonb_each_text(s.landed) l
        where s.id = ? and l.key in (select unnest(?::text[]))`,
    [syncId, productIds.map(String)],
  );
}

/** The shop's sku counter, its row locked for the chunk. */
export async function lockSkuCounter(em: EntityManager, catalogueId: number): Promise<number> {
  return (await one<{ sku_seq: number }>(em, 'select sku_seq::float8 as sku_seq from catalogues where id = ? for update', [catalogueId]))!
    .sku_seq;
}

export async function moveSkuCounter(em: EntityManager, catalogueId: number, seq: number): Promise<void> {
  await exec(em, 'update catalogues set sku_seq = ?, updated_at = now() where id = ?', [seq, catalogueId]);
}

/** The ids of the shop's products of these skus. */
export async function productIdsOfSkus(em: EntityManager, catalogueId: number, skus: readonly string[]) {
  return many<{ id: number; sku: string }>(em, 'select id::int as id, sku from products where catalogue_id = ? and sku = any(?::text[])', [
    catalogueId,
    skus,
  ]);
}

/** Moves the run's cursor, counters, problems and landed products with the chunk's products. */
export async function recordChunk(
  em: EntityManager,
  syncId: number,
  c: { created: number; updated: number; rejected: number; problems: string; truncated: boolean; landed: string; through: number },
): Promise<void> {
  await exec(
    em,
    `update catalogue_syncs set created = created + ?, updated = updated + ?, rejected = rejected + ?, problems = problems || ?::jsonb,
            problems_truncated = problems_truncated or ?, landed = landed || ?::jsonb, applied_through = ?, status = 'running',
            started_at = coalesce(started_at, now())
      where id = ?`,
    [c.created, c.updated, c.rejected, c.problems, c.truncated, c.landed, c.through, syncId],
  );
}

/** Staged rows of the run after row `through` (pages hold consecutive rows: row first_row + i is element i). */
export async function rowsAfter(em: EntityManager, syncId: number, through: number): Promise<number> {
  return (await one<{ n: number }>(
    em,
    `select coalesce(sum(least(row_count, first_row + row_count - 1 - ?)), 0)::int as n
       from catalogue_sync_pages where sync_id = ? and first_row + row_count - 1 > ?`,
    [through, syncId, through],
  ))!.n;
}

/** The pages holding the next `chunkSize` staged rows past the cursor, with the row the chunk starts at. */
export async function pagesOfChunk(em: EntityManager, syncId: number, through: number, chunkSize: number) {
  return many<Pick<Row<'catalogues', 'catalogue_sync_pages'>, 'first_row' | 'rows'> & { start: number }>(
    em,
    `with next as (
       select greatest(? + 1, min(first_row)) as start from catalogue_sync_pages where sync_id = ? and first_row + row_count - 1 > ?
     )
     select p.first_row, next.start, p.rows from catalogue_sync_pages p, next
      where p.sync_id = ? and p.first_row + p.row_count - 1 >= next.start and p.first_row < next.start + ?
      order by p.first_row`,
    [through, syncId, through, syncId, chunkSize],
  );
}

/** Brand and category records of these names, made on first use. */
export async function ensureRecords(em: EntityManager, catalogueId: number, brands: readonly string[], categories: readonly string[]) {
  if (brands.length)
    await exec(
      em,
      'insert into product_brands (catalogue_id, name, created_at) select ?, n, now() from unnest(?::text[]) n on conflict (catalogue_id, name) do nothing',
      [catalogueId, brands],
    );
  if (categories.length)
    await exec(
      em,
      'insert into product_categories (catalogue_id, name, created_at) select ?, n, now() from unnest(?::text[]) n on conflict (catalogue_id, name) do nothing',
      [catalogueId, categories],
    );
}

/**
 * One upsert for every planned row: the revision moves and the listings of every shop platform go
 * back to pending only when something changed. Answers the products written (an equal row writes none).
 */
export async function upsertChunkProducts(
  em: EntityManager,
  run: Pick<RunLock, 'account_id' | 'catalogue_id' | 'channels'>,
  syncId: number,
  writes: unknown[],
) {
  // The rows go in as json, not jsonb: each is read once, in order, so building a jsonb document of
  // 5,000 rows first was work the statement threw away. A shop on no platform has no listings to set
  // back to pending: the statement leaves that part out.
  const listed = run.channels.length
    ? `, listed as (
       insert into product_listings (product_id, platform, state, updated_at)
       select up.id, ch.platform, 'pending', now() from up cross join unnest(?::text[]) as ch(platform)
       on conflict (product_id, platform) do update set state = 'pending', updated_at = now()
     )`
    : '';
  return many<Pick<Row<'catalogues', 'products'>, 'sku' | 'inventory' | 'reserved'> & { id: number; inserted: boolean }>(
    em,
    `with v as (
       select * from json_to_recordset(?::json) as v(sku text, name text, description text, price bigint, sale_price bigint, currency text,
         image_url text, availability text, availability_explicit boolean, condition text, inventory int, visibility text, brand text,
         category text, product_type text)
     ), up as (
       insert into products as p (account_id, catalogue_id, sku, name, description, price, sale_price, currency, image_url, availability,
                                  availability_explicit, condition, inventory, visibility, brand_id, category_id, product_type, revision,
                                  last_sync_id, created_at, updated_at)
       select ?, ?, v.sku, v.name, v.description, v.price, v.sale_price, v.currency, v.image_url, v.availability, v.availability_explicit,
              v.condition, v.inventory, v.visibility, b.id, c.id, v.product_type, 1, ?, now(), now()
         from v left join product_brands b on b.catalogue_id = ? and b.name = v.brand
                left join product_categories c on c.catalogue_id = ? and c.name = v.category
       on conflict (catalogue_id, sku) do update
          set name = excluded.name, description = excluded.description, price = excluded.price, sale_price = excluded.sale_price,
              currency = excluded.currency, image_url = excluded.image_url, availability = excluded.availability,
              availability_explicit = excluded.availability_explicit, condition = excluded.condition, inventory = excluded.inventory,
              visibility = excluded.visibility, brand_id = excluded.brand_id, category_id = excluded.category_id,
              product_type = excluded.product_type, retired_at = null, revision = p.revision + 1, last_sync_id = excluded.last_sync_id,
              updated_at = now()
        where (p.name, p.description, p.price, p.sale_price, p.currency, p.image_url, p.availability, p.availability_explicit, p.condition,
               p.inventory, p.visibility, p.brand_id, p.category_id, p.product_type)
              is distinct from
              (excluded.name, excluded.description, excluded.price, excluded.sale_price, excluded.currency, excluded.image_url,
               excluded.availability, excluded.availability_explicit, excluded.condition, excluded.inventory, excluded.visibility,
               excluded.brand_id, excluded.category_id, excluded.product_type)
           or p.retired_at is not null
       returning p.id, p.sku, p.inventory, p.reserved, p.xmax = 0 as inserted
     )${listed}
     select id::int as id, sku, inserted, inventory, reserved from up`,
    [
      JSON.stringify(writes),
      run.account_id,
      run.catalogue_id,
      syncId,
      run.catalogue_id,
      run.catalogue_id,
      ...(run.channels.length ? [run.channels] : []),
    ],
  );
}

// ---------------------------------------------------------------------------------------------
// The replace step, the push list, the run's start and end

export async function lockRunForReplace(em: EntityManager, syncId: number) {
  return one<Pick<Syncs, 'catalogue_id' | 'mode'> & { stored: boolean }>(
    em,
    `select catalogue_id, mode, landed <> '{}'::jsonb as stored from catalogue_syncs where id = ? for update`,
    [syncId],
  );
}

/** Retires the shop's products no row of the run landed on (created before the run) and stores the count. */
export async function retireUnlanded(em: EntityManager, syncId: number, catalogueId: number): Promise<number> {
  await exec(
    em,
    // NOT IN over the expanded keys is a hashed subplan (one pass each side): testing the jsonb per
    // product re-read the document for every row, and a materialized CTE estimated at 100 rows was
    // anti-joined by nested loop; either took minutes for a 50,000-row re-pull.
    `update products p set retired_at = now(), revision = p.revision + 1, last_sync_id = s.id, updated_at = now()
       from catalogue_syncs s
      where s.id = ? and p.catalogue_id = s.catalogue_id and p.retired_at is null and p.created_at < s.created_at
        and p.id not in (select key::bigint from catalogue_syncs s2, jsonb_object_keys(s2.landed) key where s2.id = ?)`,
    [syncId, syncId],
  );
  const n = (await one<{ n: number }>(
    em,
    'select count(*)::int as n from products where catalogue_id = ? and last_sync_id = ? and retired_at is not null',
    [catalogueId, syncId],
  ))!.n;
  await exec(em, 'update catalogue_syncs set retired = ? where id = ?', [n, syncId]);
  return n;
}

/** The products the run last created, changed or retired, by id. */
export async function productsOfRun(em: EntityManager, syncId: number) {
  return many<{ id: number; retired: boolean }>(
    em,
    `select p.id::int as id, p.retired_at is not null as retired from products p join catalogue_syncs s on s.catalogue_id = p.catalogue_id
      where s.id = ? and p.last_sync_id = ? order by p.id`,
    [syncId, syncId],
  );
}

/** What the run's steps need of it at the start. */
export type RunStart = Pick<Syncs, 'status' | 'mode' | 'received'> & { channels: PlatformKey[] };

/** Marks the run running; null when it is not there. */
export async function markRunRunning(em: EntityManager, syncId: number): Promise<RunStart | null> {
  return one<RunStart>(
    em,
    `update catalogue_syncs s set status = case when s.status = 'queued' then 'running' else s.status end,
            started_at = coalesce(s.started_at, now())
       from catalogues c where s.id = ? and c.id = s.catalogue_id
     returning s.status, s.mode, s.received, c.channels`,
    [syncId],
  );
}

/** A run's figures for the worker's log line when it ends: what it received and what became of the rows. */
export async function runFigures(em: EntityManager, syncId: number) {
  return one<
    Pick<Syncs, 'catalogue_id' | 'kind' | 'feed_id' | 'mode' | 'status' | 'received' | 'created' | 'updated' | 'rejected' | 'retired'> & {
      ms: number | null;
    }
  >(
    em,
    `select catalogue_id, kind, feed_id, mode, status, received, created, updated, rejected, retired,
            (extract(epoch from finished_at - started_at) * 1000)::int as ms
       from catalogue_syncs where id = ?`,
    [syncId],
  );
}

export async function lockRunForEnd(em: EntityManager, syncId: number) {
  return one<Pick<Syncs, 'account_id' | 'status'> & { problem_count: number }>(
    em,
    'select account_id, status, jsonb_array_length(problems) as problem_count from catalogue_syncs where id = ? for update',
    [syncId],
  );
}

/** Ends the run and drops its staged rows; answers the report fields its event carries. */
export async function endRun(
  em: EntityManager,
  syncId: number,
  e: {
    status: SyncStatus;
    platforms: string;
    problems: string;
    truncated: boolean;
    problemsTruncated: boolean;
    failureReason: string | null;
  },
) {
  const row = (await one<
    Pick<
      Syncs,
      | 'id'
      | 'catalogue_id'
      | 'kind'
      | 'feed_id'
      | 'mode'
      | 'status'
      | 'received'
      | 'created'
      | 'updated'
      | 'rejected'
      | 'retired'
      | 'platforms'
      | 'problems_truncated'
      | 'failure_reason'
    >
  >(
    em,
    `update catalogue_syncs set status = ?, platforms = ?::jsonb, problems = problems || ?::jsonb,
            problems_truncated = problems_truncated or ? or ?, failure_reason = ?, started_at = coalesce(started_at, now()), finished_at = clock_timestamp()
      where id = ?
     returning id, catalogue_id, kind, feed_id, mode, status, received, created, updated, rejected, retired, platforms, problems_truncated, failure_reason`,
    [e.status, e.platforms, e.problems, e.truncated, e.problemsTruncated, e.failureReason, syncId],
  ))!;
  await exec(em, 'delete from catalogue_sync_pages where sync_id = ?', [syncId]);
  return row;
}

// ---------------------------------------------------------------------------------------------
// A feed pull's staging

/** Stages one chunk as one page; a retried chunk (same rows, same numbers) adds nothing. */
export async function stagePage(em: EntityManager, syncId: number, firstRow: number, rows: unknown[]): Promise<number> {
  return exec(
    em,
    `insert into catalogue_sync_pages (sync_id, first_row, row_count, rows) values (?, ?, ?, ?)
       on conflict (sync_id, first_row) do nothing`,
    [syncId, firstRow, rows.length, JSON.stringify(rows)],
  );
}

export async function dropStagedRows(em: EntityManager, syncId: number): Promise<void> {
  await exec(em, 'delete from catalogue_sync_pages where sync_id = ?', [syncId]);
}

export async function setReceived(em: EntityManager, syncId: number, received: number): Promise<void> {
  await exec(em, 'update catalogue_syncs set received = ? where id = ?', [received, syncId]);
}
