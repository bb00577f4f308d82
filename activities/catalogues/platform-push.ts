// The platform side of the catalogue family: from "these products changed" to listings updated.
// Activities read the products themselves and the workflows carry only ids and revisions (5,000
// item payloads would pass Temporal's 2 MB payload limit). Every write is a state check on the
// listing (pushed_revision, state), so a retried activity or a late answer never moves a listing back.
import { ApplicationFailure } from '@temporalio/activity';
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import {
  addPendingListings,
  dropListings,
  failSyncing as failSyncingRows,
  forgetDeletedItems,
  markFailed,
  markSynced,
  markSyncingPending,
  pushListings,
  pushProducts,
  pushShop,
  setProviderProductIds,
  settleRows,
  storeProviderCatalogue,
  writeListings as writeListingRows,
  type PushListing as ListingRow,
  type PushProduct as ProductRow,
  type PushShop as ShopRow,
} from '../../services/catalogues/store/platform.js';
import { listingProblem } from '../../domain/catalogues/products.js';
import { CATALOGUE_LIMITS, PLATFORMS, type ListingState, type PlatformKey, type SyncProblem } from '../../domain/catalogues/vocabulary.js';
import type { Logger } from '../../logger.js';
import type { CatalogueItemRequest, CatalogueProvider, ProviderFailure } from '../../providers/types.js';

export interface PlatformPushDeps {
  orm: MikroORM;
  /** The chat provider's catalogue (registry.catalogue()). */
  catalogue: () => CatalogueProvider;
  log: Logger;
}

/** Counts of one platform for one push (the sync report shows synced and blocked). */
export interface PlatformTally {
  synced: number;
  blocked: number;
  failed: number;
}

/** One accepted items_batch call: what to settle when its handle finishes (ids only, small enough for history). */
export interface PushedBatch {
  handle: string;
  /** Products sent as UPDATE (upsert), with the revision each carried. */
  productIds: number[];
  revisions: number[];
  /** Products sent as DELETE (retired, removed, or blocked while live). */
  deletedIds: number[];
}

export interface SendOutcome {
  handles: PushedBatch[];
  platforms: Record<string, PlatformTally>;
  problems: SyncProblem[];
  problemsTruncated: boolean;
}

export interface SettleOutcome {
  done: boolean;
  platforms: Record<string, PlatformTally>;
  problems: SyncProblem[];
  problemsTruncated: boolean;
}

/** The details of a ProviderRefused failure of sendCatalogueItems: the batches accepted before it still settle. */
export interface RefusalDetails {
  platform: string;
  message: string;
  accepted: PushedBatch[];
  outcome: Omit<SendOutcome, 'handles'>;
}

const CHAT: PlatformKey = 'whatsapp';
const STOREFRONT: PlatformKey = 'storefront';
/** Problems a push keeps (the sync report keeps at most 200). */
const PROBLEMS_KEPT = CATALOGUE_LIMITS.problemsKept;
/** Retailer ids per provider read when looking up the provider's product ids. */
const IDS_PER_READ = 100;

const emptyTally = (): PlatformTally => ({ synced: 0, blocked: 0, failed: 0 });

class Problems {
  readonly list: SyncProblem[] = [];
  truncated = false;
  add(p: SyncProblem): void {
    if (this.list.length < PROBLEMS_KEPT) this.list.push(p);
    else this.truncated = true;
  }
}

async function loadShop(em: EntityManager, accountId: number, catalogueId: number): Promise<ShopRow | null> {
  return pushShop(em, accountId, catalogueId);
}

const shopPlatforms = (shop: ShopRow): PlatformKey[] => PLATFORMS.filter((p) => shop.channels.includes(p));

async function loadProducts(em: EntityManager, shop: ShopRow, ids: readonly number[]): Promise<ProductRow[]> {
  if (ids.length === 0) return [];
  return pushProducts(em, shop, ids);
}

/** Listing state writes of one platform, one statement for any number of products. */
async function writeListings(
  em: EntityManager,
  platform: string,
  rows: ReadonlyArray<{ productId: number; state: ListingState; problem: string | null; pushedRevision?: number }>,
): Promise<void> {
  if (rows.length === 0) return;
  await writeListingRows(em, platform, rows);
}

function transient(f: ProviderFailure, what: string): ApplicationFailure {
  return ApplicationFailure.create({
    message: `${what}: ${f.message} (provider code ${f.code})`,
    type: 'ProviderTransient',
    nextRetryDelay: f.retryAfterSeconds ? `${f.retryAfterSeconds} seconds` : undefined,
  });
}

/** What a product is at the provider: our row in the adapter's words. */
function itemSource(shop: ShopRow, p: ProductRow) {
  return {
    shopId: shop.id,
    sku: p.sku,
    name: p.name,
    description: p.description,
    price: Number(p.price),
    salePrice: p.sale_price === null ? null : Number(p.sale_price),
    currency: p.currency,
    imageUrl: p.image_url,
    availability: p.availability,
    condition: p.condition,
    brand: p.brand,
    category: p.category,
    productType: p.product_type,
    available: p.inventory === null ? null : p.inventory - p.reserved,
  };
}

const listable = (p: ProductRow) => ({ price: Number(p.price), imageUrl: p.image_url, visibility: p.visibility });
/** Live on the chat platform: an earlier push put it there (a later block must take it down). */
const liveThere = (l: ListingRow | undefined) => !!l && (l.platform_item_id !== null || ['synced', 'drifted'].includes(l.state));

export function createPlatformPushActivities(deps: PlatformPushDeps) {
  const em = () => deps.orm.em.fork();

  return {
    /**
     * The shop's catalogue at the chat provider, created once: a stored meta_catalogue_id is returned
     * as it is, so a retried or repeated setup never creates a second one.
     */
    async createProviderCatalogue({
      accountId,
      catalogueId,
    }: {
      accountId: number;
      catalogueId: number;
    }): Promise<{ metaCatalogueId: string }> {
      const db = em();
      const shop = await loadShop(db, accountId, catalogueId);
      if (!shop)
        throw ApplicationFailure.nonRetryable(`catalogue ${catalogueId} of account ${accountId} does not exist`, 'CatalogueMissing');
      if (shop.meta_catalogue_id) return { metaCatalogueId: shop.meta_catalogue_id };
      const r = await deps.catalogue().createCatalogue({ name: shop.name, vertical: shop.vertical });
      if (!r.ok) {
        if (r.permanent) throw ApplicationFailure.nonRetryable(r.message, 'ProviderRefused', { platform: CHAT, code: r.code });
        throw transient(r, 'catalogue create');
      }
      const stored = await storeProviderCatalogue(db, catalogueId, r.value.catalogueId);
      return { metaCatalogueId: stored ?? r.value.catalogueId };
    },

    /**
     * Decides every (product, platform) of the shop and hands the chat platform its part: blocked
     * listings are written at once (and taken down where they were live), the storefront is ours and
     * synced at once, the chat platform gets UPDATE (upsert) and DELETE requests in items_batch calls
     * of at most 5,000, its listings move to syncing. A synchronous refusal fails the push's listings
     * with the provider's words and throws ProviderRefused (its details carry the batches accepted before it).
     */
    async sendCatalogueItems(input: {
      accountId: number;
      catalogueId: number;
      productIds: number[];
      removals?: { sku: string }[];
      /** Products of productIds to take off every platform although still stored (a delete about to happen). */
      removeIds?: number[];
    }): Promise<SendOutcome> {
      const db = em();
      const shop = await loadShop(db, input.accountId, input.catalogueId);
      const tallies: Record<string, PlatformTally> = {};
      const problems = new Problems();
      const done = (handles: PushedBatch[]): SendOutcome => ({
        handles,
        platforms: tallies,
        problems: problems.list,
        problemsTruncated: problems.truncated,
      });
      if (!shop) return done([]);
      const platforms = shopPlatforms(shop);
      for (const p of platforms) tallies[p] = emptyTally();
      const products = await loadProducts(db, shop, input.productIds);
      const removed = new Set((input.removals ?? []).map((r) => r.sku));
      const removing = new Set(input.removeIds ?? []);
      const gone = (p: ProductRow) => p.retired_at !== null || removed.has(p.sku) || removing.has(Number(p.id));
      const live = products.filter((p) => !gone(p));

      if (live.length > 0 && platforms.length > 0) {
        await addPendingListings(
          db,
          live.map((p) => Number(p.id)),
          platforms,
        );
      }
      const listings = await pushListings(
        db,
        products.map((p) => Number(p.id)),
      );
      const listingOf = new Map(listings.map((l) => [`${l.product_id}:${l.platform}`, l]));

      // The storefront is the service's own shop page: listed (or blocked) here and now.
      if (platforms.includes(STOREFRONT)) {
        const writes = live.map((p) => {
          const problem = listingProblem(STOREFRONT, listable(p));
          if (problem) {
            tallies[STOREFRONT].blocked++;
            problems.add({ sku: p.sku, stage: STOREFRONT, reason: problem });
            return { productId: Number(p.id), state: 'blocked' as const, problem };
          }
          tallies[STOREFRONT].synced++;
          return { productId: Number(p.id), state: 'synced' as const, problem: null, pushedRevision: p.revision };
        });
        await writeListings(db, STOREFRONT, writes);
      }
      const retiredIds = products.filter((p) => p.retired_at !== null).map((p) => Number(p.id));
      if (retiredIds.length > 0) {
        await dropListings(db, STOREFRONT, retiredIds);
      }

      if (!platforms.includes(CHAT)) return done([]);
      const provider = deps.catalogue();
      type Planned = { request: CatalogueItemRequest; productId: number | null; revision: number; upsert: boolean };
      const planned: Planned[] = [];
      const blocked: Array<{ productId: number; state: ListingState; problem: string }> = [];
      for (const p of products) {
        const id = Number(p.id);
        const listing = listingOf.get(`${id}:${CHAT}`);
        if (gone(p)) {
          planned.push({ request: provider.deleteRequest(p.sku), productId: id, revision: p.revision, upsert: false });
          continue;
        }
        const problem = listingProblem(CHAT, listable(p));
        if (problem) {
          tallies[CHAT].blocked++;
          problems.add({ sku: p.sku, stage: CHAT, reason: problem });
          blocked.push({ productId: id, state: 'blocked', problem });
          if (liveThere(listing))
            planned.push({ request: provider.deleteRequest(p.sku), productId: id, revision: p.revision, upsert: false });
          continue;
        }
        planned.push({ request: provider.upsertRequest(itemSource(shop, p)), productId: id, revision: p.revision, upsert: true });
      }
      const known = new Set(products.map((p) => p.sku));
      for (const sku of removed) {
        if (!known.has(sku)) planned.push({ request: provider.deleteRequest(sku), productId: null, revision: 0, upsert: false });
      }
      await writeListings(db, CHAT, blocked);
      const upserts = planned.filter((q) => q.upsert);
      const fail = async (items: Planned[], reason: string) => {
        const rows = items.filter((q) => q.upsert && q.productId !== null);
        await writeListings(
          db,
          CHAT,
          rows.map((q) => ({ productId: q.productId!, state: 'failed' as const, problem: reason })),
        );
        tallies[CHAT].failed += rows.length;
        const skuOf = new Map(products.map((p) => [Number(p.id), p.sku]));
        for (const q of rows) problems.add({ sku: skuOf.get(q.productId!) ?? null, stage: CHAT, reason });
      };
      if (planned.length === 0) return done([]);
      if (!shop.meta_catalogue_id) {
        await fail(planned, 'the shop has no catalogue at the chat provider yet');
        return done([]);
      }
      await writeListings(
        db,
        CHAT,
        upserts.map((q) => ({ productId: q.productId!, state: 'syncing' as const, problem: null })),
      );

      const accepted: PushedBatch[] = [];
      for (let at = 0; at < planned.length; at += provider.maxRequestsPerBatch) {
        const chunk = planned.slice(at, at + provider.maxRequestsPerBatch);
        const r = await provider.sendItems(
          shop.meta_catalogue_id,
          chunk.map((q) => q.request),
        );
        if (r.ok) {
          for (const handle of r.value.handles) {
            const ups = chunk.filter((q) => q.upsert);
            accepted.push({
              handle,
              productIds: ups.map((q) => q.productId!),
              revisions: ups.map((q) => q.revision),
              deletedIds: chunk.filter((q) => !q.upsert && q.productId !== null).map((q) => q.productId!),
            });
          }
          continue;
        }
        if (!r.permanent) throw transient(r, 'items_batch');
        const message = `${r.message} (provider code ${r.code})`;
        await fail(planned.slice(at), message);
        const details: RefusalDetails = {
          platform: CHAT,
          message,
          accepted,
          outcome: { platforms: tallies, problems: problems.list, problemsTruncated: problems.truncated },
        };
        throw ApplicationFailure.nonRetryable(message, 'ProviderRefused', details);
      }
      return done(accepted);
    },

    /**
     * Asks where one batch call stands; once finished, writes its listings: synced (pushed_revision
     * the revision sent, the provider's product id) or failed with the item's error. A listing whose
     * product moved on since (a newer revision) is left to the newer push.
     */
    async settleCatalogueBatch(input: {
      accountId: number;
      catalogueId: number;
      handle: string;
      productIds: number[];
      revisions?: number[];
      deletedIds?: number[];
    }): Promise<SettleOutcome> {
      const db = em();
      const tallies: Record<string, PlatformTally> = { [CHAT]: emptyTally() };
      const problems = new Problems();
      const answer = (done: boolean): SettleOutcome => ({
        done,
        platforms: tallies,
        problems: problems.list,
        problemsTruncated: problems.truncated,
      });
      const shop = await loadShop(db, input.accountId, input.catalogueId);
      if (!shop?.meta_catalogue_id) return answer(true);
      const provider = deps.catalogue();
      const st = await provider.batchStatus(shop.meta_catalogue_id, input.handle);
      if (!st.ok) {
        if (!st.permanent) throw transient(st, 'check_batch_request_status');
        // The platform no longer knows the handle: nothing will ever settle it.
        const reason = `the platform lost the batch: ${st.message}`;
        await failSyncing(db, input.productIds, reason);
        return answer(true);
      }
      if (!st.value.finished) return answer(false);

      const ids = [...input.productIds, ...(input.deletedIds ?? [])];
      const rows = await settleRows(db, CHAT, shop.id, ids);
      const byId = new Map(rows.map((r) => [Number(r.id), r]));
      const errors = new Map(st.value.errors.map((e) => [e.retailerId, e.message]));
      const synced: Array<{ id: number; sku: string; revision: number }> = [];
      const failed: Array<{ productId: number; state: ListingState; problem: string }> = [];
      const stale: number[] = [];
      input.productIds.forEach((id, i) => {
        const row = byId.get(id);
        if (!row) return;
        const revision = input.revisions?.[i] ?? row.revision;
        if (row.revision !== revision) {
          stale.push(id);
          return;
        }
        const error = errors.get(row.sku);
        if (error !== undefined) {
          failed.push({ productId: id, state: 'failed', problem: error });
          problems.add({ sku: row.sku, stage: CHAT, reason: error });
        } else synced.push({ id, sku: row.sku, revision });
      });

      // The provider's product ids of items it did not have before (reads of 100 retailer ids).
      const itemIds = new Map<string, string>();
      const unknownSkus = synced.filter((s) => !byId.get(s.id)?.platform_item_id).map((s) => s.sku);
      for (let at = 0; at < unknownSkus.length; at += IDS_PER_READ) {
        const skus = unknownSkus.slice(at, at + IDS_PER_READ);
        const page = await provider.listItems(shop.meta_catalogue_id, { limit: skus.length, retailerIds: skus });
        if (!page.ok) {
          if (!page.permanent) throw transient(page, 'products read');
          deps.log.warn({ catalogueId: shop.id, code: page.code }, 'provider product ids not read; they follow at the next push');
          break;
        }
        for (const item of page.value.items) itemIds.set(item.retailerId, item.providerId);
      }

      if (synced.length > 0) {
        const n = await markSynced(
          db,
          CHAT,
          synced.map((s) => ({ id: s.id, revision: s.revision, itemId: itemIds.get(s.sku) ?? null })),
        );
        tallies[CHAT].synced += n;
        const withIds = synced.filter((s) => itemIds.has(s.sku));
        if (withIds.length > 0) {
          await setProviderProductIds(
            db,
            withIds.map((s) => ({ id: s.id, itemId: itemIds.get(s.sku)! })),
          );
        }
      }
      if (failed.length > 0) {
        await markFailed(db, CHAT, failed);
        tallies[CHAT].failed += failed.length;
      }
      if (stale.length > 0) {
        // A newer edit came after this revision was sent: pending until the push that carries it.
        await markSyncingPending(db, CHAT, stale);
      }
      const deleted = input.deletedIds ?? [];
      if (deleted.length > 0) {
        await forgetDeletedItems(db, CHAT, deleted);
      }
      return answer(true);
    },

    /** A batch the platform never answered for: its listings still syncing fail with `reason`. */
    async failCatalogueBatch(input: {
      accountId: number;
      catalogueId: number;
      productIds: number[];
      revisions?: number[];
      reason: string;
    }): Promise<{ failed: number; problems: SyncProblem[] }> {
      const db = em();
      const shop = await loadShop(db, input.accountId, input.catalogueId);
      if (!shop) return { failed: 0, problems: [] };
      const failed = await failSyncing(db, input.productIds, input.reason);
      return { failed: failed.length, problems: failed.slice(0, PROBLEMS_KEPT).map((sku) => ({ sku, stage: CHAT, reason: input.reason })) };
    },
  };
}

/** Fails the chat listings of these products still syncing; answers their skus. */
async function failSyncing(em: EntityManager, productIds: number[], reason: string): Promise<string[]> {
  if (productIds.length === 0) return [];
  return failSyncingRows(em, CHAT, productIds, reason);
}

export type PlatformPushActivities = ReturnType<typeof createPlatformPushActivities>;
