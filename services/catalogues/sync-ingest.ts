import type { EntityManager } from '@mikro-orm/postgresql';
import {
  endRun,
  ensureRecords,
  landedEarlier,
  lockRunForEnd,
  lockRunForReplace,
  lockSkuCounter,
  markRunRunning,
  moveSkuCounter,
  pagesOfChunk,
  productIdsOfSkus,
  productsMatchingNames,
  productsMatchingSkus,
  productsOfRun,
  recordChunk,
  retireUnlanded,
  rowsAfter,
  runFigures,
  takeAcceptLock,
  upsertChunkProducts,
  lockSyncRun,
  type RunLock,
  type RunStart,
} from './store/syncs.js';
import { takenSkus } from './store/products.js';
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
import type { PlatformCounts, SyncProblem, SyncStatus } from '../../domain/catalogues/vocabulary.js';
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
  const run = await lockSyncRun(em, input.syncId);
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
  const matchingSku = skus.size ? productsMatchingSkus(em, run.catalogue_id, [...skus]) : Promise.resolve([]);
  const matchingName = names.size ? productsMatchingNames(em, run.catalogue_id, [...names]) : Promise.resolve([]);
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
    for (const e of await landedEarlier(em, input.syncId, matchedIds)) earlier.set(e.product_id, e.row_no);
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
    let seq = await lockSkuCounter(em, run.catalogue_id);
    const chosen = new Set(landing.flatMap((l) => (l.sku !== undefined ? [l.sku] : [])));
    while (issued.length < needSku.length) {
      const candidates = issuedSkuCandidates(run.sku_prefix, seq, needSku.length - issued.length + 8);
      const taken = await takenSkus(em, run.catalogue_id, candidates);
      for (const candidate of candidates) {
        if (issued.length === needSku.length) break;
        seq += 1;
        if (!taken.has(candidate) && !chosen.has(candidate)) issued.push(candidate);
      }
    }
    await moveSkuCounter(em, run.catalogue_id, seq);
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
    const found = await productIdsOfSkus(
      em,
      run.catalogue_id,
      missing.map((m) => m.write.sku),
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
  await recordChunk(em, input.syncId, {
    created,
    updated,
    rejected,
    problems: JSON.stringify(keep),
    truncated,
    landed: keepLanded ? JSON.stringify(Object.fromEntries(landedNow)) : '{}',
    through,
  });
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
  const pages = await pagesOfChunk(em, syncId, through, chunkSize);
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
  await ensureRecords(em, run.catalogue_id, brands, categories);
  const rows = await upsertChunkProducts(
    em,
    run,
    syncId,
    planned.map((p) => p.write),
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
  const run = await lockRunForReplace(em, input.syncId);
  if (!run || run.mode !== 'replace') return { retired: 0 };
  if (!run.stored) return { retired: 0, refused: 'No row of the payload could be stored, so no product was retired.' };
  const n = await retireUnlanded(em, input.syncId, run.catalogue_id);
  return { retired: n };
}

/** What the run owes the platforms: the products it created or changed, and those it retired (removals). */
export async function syncPushList(em: EntityManager, input: { syncId: number }): Promise<{ productIds: number[]; removals: number[] }> {
  const rows = await productsOfRun(em, input.syncId);
  return { productIds: rows.filter((r) => !r.retired).map((r) => r.id), removals: rows.filter((r) => r.retired).map((r) => r.id) };
}

export type { RunStart };
export { runFigures };

/** Marks the run running; null when it is not there (the accepting transaction was rolled back, or the shop deleted). */
export async function beginSyncRun(em: EntityManager, input: { syncId: number }): Promise<RunStart | null> {
  await takeAcceptLock(em, input.syncId);
  return markRunRunning(em, input.syncId);
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
  const run = await lockRunForEnd(em, input.syncId);
  if (!run) return null;
  if (run.status === 'completed' || run.status === 'failed') return { status: run.status };
  const { keep, truncated } = capProblems(run.problem_count, input.problems);
  const status: SyncStatus = input.failureReason ? 'failed' : 'completed';
  const row = await endRun(em, input.syncId, {
    status,
    platforms: JSON.stringify(input.platforms),
    problems: JSON.stringify(keep),
    truncated,
    problemsTruncated: input.problemsTruncated,
    failureReason: input.failureReason ?? null,
  });
  const { id, ...fields } = row;
  await emitEvent(em, run.account_id, status === 'completed' ? 'catalogue.sync.completed' : 'catalogue.sync.failed', {
    sync_id: Number(id),
    ...fields,
  });
  return { status };
}
