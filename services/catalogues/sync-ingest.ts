import type { EntityManager } from '@mikro-orm/postgresql';
import { exec, many, one } from '../../entities/db.js';
import { makeAjv, toFieldErrors } from '../platform/validation.js';
import { productRowSchema } from './product-schemas.js';
import { recordMovements, noticeLowStock, type MovementInput } from './stock-ledger.js';
import { issuedSkuCandidates } from '../../domain/catalogues/product-input.js';
import {
  capProblems,
  firstProblem,
  ingestProblem,
  productWrite,
  rowIdentity,
  type MatchedProduct,
  type ProductWrite,
  type RowRefusal,
  type SyncRow,
} from '../../domain/catalogues/sync.js';
import type { PlatformCounts, PlatformKey, SyncMode, SyncProblem, SyncStatus } from '../../domain/catalogues/vocabulary.js';
import { emitEvent } from '../webhooks/index.js';

// The set-based apply of a sync run's staged rows (catalogue_sync_pages), shared by product batches
// and feed pulls: whoever stages the rows of a run calls the same steps (workflows/catalogues/
// sync-steps.ts). Each chunk is one transaction that writes the products and moves the run's cursor
// (applied_through), counters and landed products together, so a retried chunk never counts twice.

// The product row schema in an ajv of the same options as the doors' (the same words as a create's
// refusal). The door refused NUL and unpaired surrogates in a batch and the feed mapper cleans them,
// so the text scan is not repeated here (a NUL that got through fails the upsert, loudly):
// a 5,000-row chunk is judged in about 5 ms instead of 20.
const rowAjv = makeAjv({ allErrors: true, strict: false, useDefaults: false, verbose: true });
const validRow = rowAjv.compile(productRowSchema);

export interface ChunkOutcome {
  /** more: rows are left; done: none are; gone: the run (its shop) was deleted. */
  state: 'more' | 'done' | 'gone';
  received: number;
  /** Rows applied so far (stored or rejected). */
  processed: number;
  created: number;
  updated: number;
  rejected: number;
}

interface RunLock {
  account_id: number;
  catalogue_id: number;
  mode: SyncMode;
  status: SyncStatus;
  received: number;
  created: number;
  updated: number;
  rejected: number;
  problem_count: number;
  default_currency: string | null;
  allow_backorders: boolean;
  sku_prefix: string;
  channels: PlatformKey[];
  applied_through: number;
  landed_empty: boolean;
}

interface Planned {
  rowNo: number;
  write: ProductWrite;
  matchedId: number | null;
  oldInventory: number | null;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The row judged by the product row schema: the first field problem, or null. */
function refusalOf(data: unknown): RowRefusal | null {
  if (!isObject(data)) return { field: 'row', reason: 'The row must be an object.' };
  return validRow(data) ? null : firstProblem(toFieldErrors(validRow.errors));
}

const MATCH_COLUMNS = `p.id::int as id, p.sku, p.name, p.description, p.price::float8 as price, p.sale_price::float8 as sale_price, p.currency, p.image_url,
  p.availability, p.availability_explicit, p.condition, p.inventory, p.reserved, p.visibility, b.name as brand, c.name as category, p.product_type`;
const MATCH_FROM = `products p left join product_brands b on b.id = p.brand_id left join product_categories c on c.id = p.category_id`;

/**
 * Applies the next `chunkSize` staged rows of run `syncId` in the caller's transaction: every row is
 * judged by the product row schema (a bad row is one rejected row, stage ingest), a row naming a
 * product an earlier row of the payload already named is rejected, rows match on sku when sent else
 * on name (a live product first, then the oldest), the shop issues skus for new rows without one
 * (under its row lock), brand and category records are made on first use, and one
 * `insert … on conflict (catalogue_id, sku) do update … where … is distinct from …` writes them all:
 * the revision moves and the listings of every shop platform go back to pending only when something
 * changed. Stock movements (kind sync) record inventory a row changed.
 */
export async function ingestSyncChunk(em: EntityManager, input: { syncId: number; chunkSize: number }): Promise<ChunkOutcome> {
  const run = await one<RunLock>(
    em,
    `select s.account_id, s.catalogue_id, s.mode, s.status, s.received, s.created, s.updated, s.rejected,
            jsonb_array_length(s.problems) as problem_count, coalesce(c.default_currency, a.currency) as default_currency,
            c.allow_backorders, c.sku_prefix, c.channels, s.applied_through, s.landed = '{}'::jsonb as landed_empty
       from catalogue_syncs s join catalogues c on c.id = s.catalogue_id join accounts a on a.id = s.account_id
      where s.id = ? for update of s`,
    [input.syncId],
  );
  if (!run) return { state: 'gone', received: 0, processed: 0, created: 0, updated: 0, rejected: 0 };
  const counts = () => ({ received: run.received, created: run.created, updated: run.updated, rejected: run.rejected });
  if (run.status === 'completed' || run.status === 'failed')
    return { state: 'done', processed: run.received - (await rowsAfter(em, input.syncId, run.applied_through)), ...counts() };

  const staged = await stagedChunk(em, input.syncId, run.applied_through, input.chunkSize);
  if (staged.length === 0) return { state: 'done', processed: run.received, ...counts() };

  // The product each stored row landed on (created, changed or equal to its row).
  const landedNow = new Map<number, number>();
  const problems: SyncProblem[] = [];
  const reject = (rowNo: number, data: unknown, refusal: RowRefusal) => problems.push(ingestProblem(rowNo, data, refusal));

  // 1. The stored products the rows may match (by sku, and by name for rows without one), asked for
  // before the rows are judged so the database looks them up while the schema checks run (7-10 ms of
  // a 5,000-row chunk). The keys are read loosely here: a superset of what the valid rows name.
  const skus = new Set<string>();
  const names = new Set<string>();
  for (const r of staged) {
    const d = r.data as Record<string, unknown> | null;
    if (!isObject(d)) continue;
    const sku = typeof d.sku === 'string' ? d.sku.trim() : typeof d.retailer_id === 'string' ? d.retailer_id.trim() : undefined;
    if (sku) skus.add(sku);
    else if (typeof d.name === 'string') names.add(d.name.trim());
  }
  const matchingSku = skus.size
    ? many<MatchedProduct>(em, `select ${MATCH_COLUMNS} from ${MATCH_FROM} where p.catalogue_id = ? and p.sku = any(?::text[])`, [
        run.catalogue_id,
        [...skus],
      ])
    : Promise.resolve([]);
  const matchingName = names.size
    ? many<MatchedProduct>(
        em,
        `select distinct on (p.name) ${MATCH_COLUMNS} from ${MATCH_FROM} where p.catalogue_id = ? and p.name = any(?::text[])
          order by p.name, p.retired_at is not null, p.id`,
        [run.catalogue_id, [...names]],
      )
    : Promise.resolve([]);
  // Rejections are kept apart until both are settled: neither may go unobserved while the rows are judged.
  const matching = Promise.all([matchingSku, matchingName]);
  matching.catch(() => undefined);
  // One turn of the event loop: the statements leave for the database before the CPU-bound checks.
  await new Promise((res) => setImmediate(res));

  // 2. Each row on its own: the schema, then its identity.
  const valid: Array<{ rowNo: number; data: SyncRow; sku?: string; name: string }> = [];
  for (const r of staged) {
    const refusal = refusalOf(r.data);
    if (refusal) {
      reject(r.row_no, r.data, refusal);
      continue;
    }
    const id = rowIdentity(r.data as SyncRow);
    if ('reason' in id) reject(r.row_no, r.data, id);
    else valid.push({ rowNo: r.row_no, data: r.data as SyncRow, ...id });
  }
  const [skuMatches, nameMatches] = await matching;
  const bySku = new Map(skuMatches.map((p) => [p.sku, p]));
  const byName = new Map(nameMatches.map((p) => [p.name, p]));

  // 3. One product per payload: a row landing where an earlier row landed (this chunk or an earlier one) is rejected.
  const matchedIds = [...new Set([...bySku.values(), ...byName.values()].map((p) => p.id))];
  const earlier = new Map<number, number>();
  // The run's first chunk has nothing landed yet to clash with.
  if (matchedIds.length && !run.landed_empty)
    for (const e of await many<{ product_id: number; row_no: number }>(
      em,
      // IN over the asked ids is a hashed subplan: `key = any(array)` compared every landed key with
      // every id (50,000 × 1,000 a chunk) on a re-pull.
      `select l.key::int as product_id, l.value::int as row_no from catalogue_syncs s, jsonb_each_text(s.landed) l
        where s.id = ? and l.key in (select unnest(?::text[]))`,
      [input.syncId, matchedIds.map(String)],
    ))
      earlier.set(e.product_id, e.row_no);
  const landed = new Map<string, number>();
  const landing: Array<{ rowNo: number; data: SyncRow; sku?: string; name: string; matched: MatchedProduct | null }> = [];
  for (const v of valid) {
    const matched = v.sku !== undefined ? (bySku.get(v.sku) ?? null) : (byName.get(v.name) ?? null);
    const clash = matched
      ? (earlier.get(matched.id) ?? landed.get(`p:${matched.id}`))
      : landed.get(v.sku !== undefined ? `s:${v.sku}` : `n:${v.name}`);
    if (clash !== undefined) {
      reject(v.rowNo, v.data, { field: v.sku !== undefined ? 'sku' : 'name', reason: `The row names the same product as row ${clash}.` });
      continue;
    }
    if (matched) landed.set(`p:${matched.id}`, v.rowNo);
    else {
      if (v.sku !== undefined) landed.set(`s:${v.sku}`, v.rowNo);
      // A later row without a sku and of this name would land on this new product (as it will in a later chunk).
      if (!landed.has(`n:${v.name}`)) landed.set(`n:${v.name}`, v.rowNo);
    }
    landing.push({ ...v, matched });
  }

  // 4. Skus for new rows without one, issued by the shop past any sku a caller chose.
  const needSku = landing.filter((l) => !l.matched && l.sku === undefined);
  const issued: string[] = [];
  if (needSku.length) {
    const shop = (await one<{ sku_seq: number }>(em, 'select sku_seq::float8 as sku_seq from catalogues where id = ? for update', [
      run.catalogue_id,
    ]))!;
    let seq = shop.sku_seq;
    const chosen = new Set(landing.flatMap((l) => (l.sku !== undefined ? [l.sku] : [])));
    while (issued.length < needSku.length) {
      const candidates = issuedSkuCandidates(run.sku_prefix, seq, needSku.length - issued.length + 8);
      const taken = new Set(
        (
          await many<{ sku: string }>(em, 'select sku from products where catalogue_id = ? and sku = any(?::text[])', [
            run.catalogue_id,
            candidates,
          ])
        ).map((t) => t.sku),
      );
      for (const candidate of candidates) {
        if (issued.length === needSku.length) break;
        seq += 1;
        if (!taken.has(candidate) && !chosen.has(candidate)) issued.push(candidate);
      }
    }
    await exec(em, 'update catalogues set sku_seq = ?, updated_at = now() where id = ?', [seq, run.catalogue_id]);
  }

  // 5. What each row writes (fields it leaves out keep their stored values).
  const planned: Planned[] = [];
  let issuedAt = 0;
  const shopRules = { defaultCurrency: run.default_currency, allowBackorders: run.allow_backorders };
  for (const l of landing) {
    const sku = l.matched?.sku ?? l.sku ?? issued[issuedAt++];
    const w = productWrite(l.data, l, sku, l.matched, shopRules);
    if ('reason' in w) reject(l.rowNo, l.data, w);
    else planned.push({ rowNo: l.rowNo, write: w, matchedId: l.matched?.id ?? null, oldInventory: l.matched?.inventory ?? null });
  }

  // 6. Brand and category records on first use, then one upsert for every row.
  const written = planned.length ? await upsertProducts(em, run, input.syncId, planned) : [];
  const bySkuWritten = new Map(written.map((w) => [w.sku, w]));
  let created = 0;
  let updated = 0;
  const missing: Planned[] = [];
  for (const p of planned) {
    const w = bySkuWritten.get(p.write.sku);
    if (w) {
      landedNow.set(w.id, p.rowNo);
      if (w.inserted) created++;
      else updated++;
    } else if (p.matchedId !== null) landedNow.set(p.matchedId, p.rowNo);
    else missing.push(p);
  }
  // A product another writer created under the same sku since the match, identical to the row.
  if (missing.length) {
    const found = await many<{ id: number; sku: string }>(
      em,
      'select id::int as id, sku from products where catalogue_id = ? and sku = any(?::text[])',
      [run.catalogue_id, missing.map((m) => m.write.sku)],
    );
    const ids = new Map(found.map((f) => [f.sku, f.id]));
    for (const m of missing) {
      const id = ids.get(m.write.sku);
      if (id !== undefined) landedNow.set(id, m.rowNo);
    }
  }

  // 7. The cursor, the counters, the problems and the landed products, with the products. The last
  // chunk of an upsert run keeps no landed products: only a later chunk (a row naming the same
  // product) and the replace step read them, and a 5,000-key document is a visible share of a chunk.
  const through = staged[staged.length - 1].row_no;
  const left = await rowsAfter(em, input.syncId, through);
  const keepLanded = left > 0 || run.mode === 'replace';
  const rejected = problems.length;
  const { keep, truncated } = capProblems(run.problem_count, problems);
  await exec(
    em,
    `update catalogue_syncs set created = created + ?, updated = updated + ?, rejected = rejected + ?, problems = problems || ?::jsonb,
            problems_truncated = problems_truncated or ?, landed = landed || ?::jsonb, applied_through = ?, status = 'running',
            started_at = coalesce(started_at, now())
      where id = ?`,
    [
      created,
      updated,
      rejected,
      JSON.stringify(keep),
      truncated,
      keepLanded ? JSON.stringify(Object.fromEntries(landedNow)) : '{}',
      through,
      input.syncId,
    ],
  );
  // An upsert run of a shop on no platform has nothing after its last chunk (no retirement, no
  // push): it ends here, in this transaction, and the finish step then finds it ended. That saves
  // the step's round trip (10-140 ms on a loaded machine) before the run reads completed.
  if (left === 0 && run.mode === 'upsert' && run.channels.length === 0)
    await finishSyncRun(em, { syncId: input.syncId, platforms: {}, problems: [], problemsTruncated: false, failureReason: null });
  return {
    state: left > 0 ? 'more' : 'done',
    received: run.received,
    processed: run.received - left,
    created: run.created + created,
    updated: run.updated + updated,
    rejected: run.rejected + rejected,
  };
}

/** Staged rows of the run after row `through` (pages hold consecutive rows: row first_row + i is element i). */
async function rowsAfter(em: EntityManager, syncId: number, through: number): Promise<number> {
  return (await one<{ n: number }>(
    em,
    `select coalesce(sum(least(row_count, first_row + row_count - 1 - ?)), 0)::int as n
       from catalogue_sync_pages where sync_id = ? and first_row + row_count - 1 > ?`,
    [through, syncId, through],
  ))!.n;
}

/**
 * The next `chunkSize` staged rows after row `through`, in order: from the first staged row past the
 * cursor (a gap in the numbering is skipped), out of the pages that hold them. A batch is one page;
 * a feed's pages are its staging chunks.
 */
async function stagedChunk(
  em: EntityManager,
  syncId: number,
  through: number,
  chunkSize: number,
): Promise<Array<{ row_no: number; data: unknown }>> {
  const pages = await many<{ first_row: number; start: number; rows: unknown[] }>(
    em,
    `with next as (
       select greatest(? + 1, min(first_row)) as start from catalogue_sync_pages where sync_id = ? and first_row + row_count - 1 > ?
     )
     select p.first_row, next.start, p.rows from catalogue_sync_pages p, next
      where p.sync_id = ? and p.first_row + p.row_count - 1 >= next.start and p.first_row < next.start + ?
      order by p.first_row`,
    [through, syncId, through, syncId, chunkSize],
  );
  const staged: Array<{ row_no: number; data: unknown }> = [];
  for (const page of pages) {
    const end = page.start + chunkSize;
    for (let i = Math.max(0, page.start - page.first_row); i < page.rows.length && page.first_row + i < end; i++)
      staged.push({ row_no: page.first_row + i, data: page.rows[i] });
  }
  return staged;
}

async function upsertProducts(
  em: EntityManager,
  run: RunLock,
  syncId: number,
  planned: Planned[],
): Promise<Array<{ id: number; sku: string; inserted: boolean }>> {
  const brands = [...new Set(planned.flatMap((p) => (p.write.brand ? [p.write.brand] : [])))];
  const categories = [...new Set(planned.flatMap((p) => (p.write.category ? [p.write.category] : [])))];
  if (brands.length)
    await exec(
      em,
      'insert into product_brands (catalogue_id, name, created_at) select ?, n, now() from unnest(?::text[]) n on conflict (catalogue_id, name) do nothing',
      [run.catalogue_id, brands],
    );
  if (categories.length)
    await exec(
      em,
      'insert into product_categories (catalogue_id, name, created_at) select ?, n, now() from unnest(?::text[]) n on conflict (catalogue_id, name) do nothing',
      [run.catalogue_id, categories],
    );
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
  const rows = await many<{ id: number; sku: string; inserted: boolean; inventory: number | null; reserved: number }>(
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
      JSON.stringify(planned.map((p) => p.write)),
      run.account_id,
      run.catalogue_id,
      syncId,
      run.catalogue_id,
      run.catalogue_id,
      ...(run.channels.length ? [run.channels] : []),
    ],
  );
  // Stock a row changed on a stored product, in the ledger (kind sync), and the low-stock notice it
  // may owe. A product's first figure is no movement (as a single create records none).
  const old = new Map(planned.flatMap((p) => (p.matchedId !== null ? [[p.write.sku, p.oldInventory] as const] : [])));
  const moves: MovementInput[] = rows
    .filter((r) => !r.inserted && old.has(r.sku) && r.inventory !== null && r.inventory !== old.get(r.sku))
    .map((r) => ({
      productId: r.id,
      kind: 'sync',
      quantity: r.inventory! - (old.get(r.sku) ?? 0),
      inventoryAfter: r.inventory,
      reservedAfter: r.reserved,
      cause: { actor: 'sync', kind: 'catalogue_sync', sync_id: syncId },
    }));
  if (moves.length) {
    await recordMovements(em, run.account_id, moves);
    await noticeLowStock(
      em,
      run.account_id,
      moves.map((m) => m.productId),
    );
  }
  return rows;
}

/**
 * The replace step (mode replace only): retires the products of the shop that no row of the payload
 * landed on (retired_at, revision + 1) and stores the count. Products created after the run was
 * accepted are never its to retire, so a retried step retires nothing twice; the count is read back
 * from the products this run retired, so it is exact on a retry too. A payload of which no row could
 * be stored retires nothing and answers `refused` (a batch of bad rows never empties a shop).
 */
export async function retireMissingProducts(em: EntityManager, input: { syncId: number }): Promise<{ retired: number; refused?: string }> {
  const run = await one<{ catalogue_id: number; mode: SyncMode; stored: boolean }>(
    em,
    `select catalogue_id, mode, landed <> '{}'::jsonb as stored from catalogue_syncs where id = ? for update`,
    [input.syncId],
  );
  if (!run || run.mode !== 'replace') return { retired: 0 };
  if (!run.stored) return { retired: 0, refused: 'No row of the payload could be stored, so no product was retired.' };
  await exec(
    em,
    // NOT IN over the expanded keys is a hashed subplan (one pass each side): testing the jsonb per
    // product re-read the document for every row, and a materialized CTE estimated at 100 rows was
    // anti-joined by nested loop; either took minutes for a 50,000-row re-pull.
    `update products p set retired_at = now(), revision = p.revision + 1, last_sync_id = s.id, updated_at = now()
       from catalogue_syncs s
      where s.id = ? and p.catalogue_id = s.catalogue_id and p.retired_at is null and p.created_at < s.created_at
        and p.id not in (select key::bigint from catalogue_syncs s2, jsonb_object_keys(s2.landed) key where s2.id = ?)`,
    [input.syncId, input.syncId],
  );
  const n = (await one<{ n: number }>(
    em,
    'select count(*)::int as n from products where catalogue_id = ? and last_sync_id = ? and retired_at is not null',
    [run.catalogue_id, input.syncId],
  ))!.n;
  await exec(em, 'update catalogue_syncs set retired = ? where id = ?', [n, input.syncId]);
  return { retired: n };
}

/** What the run owes the platforms: the products it created or changed, and those it retired (removals). */
export async function syncPushList(em: EntityManager, input: { syncId: number }): Promise<{ productIds: number[]; removals: number[] }> {
  const rows = await many<{ id: number; retired: boolean }>(
    em,
    `select p.id::int as id, p.retired_at is not null as retired from products p join catalogue_syncs s on s.catalogue_id = p.catalogue_id
      where s.id = ? and p.last_sync_id = ? order by p.id`,
    [input.syncId, input.syncId],
  );
  return { productIds: rows.filter((r) => !r.retired).map((r) => r.id), removals: rows.filter((r) => r.retired).map((r) => r.id) };
}

export interface RunStart {
  /** The run's status when this step found it; completed or failed means there is nothing left to do. */
  status: SyncStatus;
  mode: SyncMode;
  received: number;
  channels: PlatformKey[];
}

/**
 * The lock a run's accepting transaction holds until it commits (acceptBatch): the workflow starts
 * inside that transaction, and its first step waits on the lock instead of finding nothing and
 * retrying (a retry interval was a visible share of a 5,000-row batch's time).
 */
export const acceptLock = (syncId: number) => ({
  sql: 'select pg_advisory_xact_lock(?::int, ?::int)',
  params: [SYNC_LOCK_CLASS, syncId % 2 ** 31],
});
/** The advisory lock class of sync runs ("SY"); the object is the run id (an unrelated run sharing it only waits a moment). */
const SYNC_LOCK_CLASS = 0x5359;

/** Marks the run running; null when it is not there (the accepting transaction was rolled back, or the shop deleted). */
export async function beginSyncRun(em: EntityManager, input: { syncId: number }): Promise<RunStart | null> {
  const lock = acceptLock(input.syncId);
  await one(em, lock.sql, lock.params);
  return one<RunStart>(
    em,
    `update catalogue_syncs s set status = case when s.status = 'queued' then 'running' else s.status end,
            started_at = coalesce(s.started_at, now())
       from catalogues c where s.id = ? and c.id = s.catalogue_id
     returning s.status, s.mode, s.received, c.channels`,
    [input.syncId],
  );
}

export interface RunEnd {
  /** What the platforms did with the run's products: the contract's {synced, blocked} per platform. */
  platforms: Record<string, PlatformCounts>;
  /** Platform problems (stage = platform), kept after the ingest's up to the report's 200. */
  problems: SyncProblem[];
  problemsTruncated: boolean;
  /** Set: the run failed (the products it stored stay). */
  failureReason?: string | null;
}

/**
 * Ends the run in one transaction: status completed (or failed with its reason), the platform
 * counts, the problems, the staged rows deleted, and catalogue.sync.completed / catalogue.sync.failed
 * emitted with it. A run already ended is left as it is (a retried step emits nothing twice).
 */
export async function finishSyncRun(em: EntityManager, input: { syncId: number } & RunEnd): Promise<{ status: SyncStatus } | null> {
  const run = await one<{ account_id: number; status: SyncStatus; problem_count: number }>(
    em,
    'select account_id, status, jsonb_array_length(problems) as problem_count from catalogue_syncs where id = ? for update',
    [input.syncId],
  );
  if (!run) return null;
  if (run.status === 'completed' || run.status === 'failed') return { status: run.status };
  const { keep, truncated } = capProblems(run.problem_count, input.problems);
  const status: SyncStatus = input.failureReason ? 'failed' : 'completed';
  const row = (await one<Record<string, unknown>>(
    em,
    `update catalogue_syncs set status = ?, platforms = ?::jsonb, problems = problems || ?::jsonb,
            problems_truncated = problems_truncated or ? or ?, failure_reason = ?, started_at = coalesce(started_at, now()), finished_at = clock_timestamp()
      where id = ?
     returning id, catalogue_id, kind, feed_id, mode, status, received, created, updated, rejected, retired, platforms, problems_truncated, failure_reason`,
    [
      status,
      JSON.stringify(input.platforms),
      JSON.stringify(keep),
      truncated,
      input.problemsTruncated,
      input.failureReason ?? null,
      input.syncId,
    ],
  ))!;
  await exec(em, 'delete from catalogue_sync_pages where sync_id = ?', [input.syncId]);
  const { id, ...fields } = row;
  await emitEvent(em, run.account_id, status === 'completed' ? 'catalogue.sync.completed' : 'catalogue.sync.failed', {
    sync_id: Number(id),
    ...fields,
  });
  return { status };
}
