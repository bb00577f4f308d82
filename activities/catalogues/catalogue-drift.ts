// The hourly drift comparison (States > Product listing): each shop's copy at the chat provider read
// back page by page and compared with our live products. Only the chat provider's catalogue
// (`whatsapp`) has a remote copy; the storefront is ours and never drifts. Every write is guarded
// by the state it was decided on (listing state, pushed revision = product revision), so a retry,
// a second run or a product edit racing the comparison never moves a listing back or overwrites an
// edit. Decisions: docs/decisions.md, "Catalogue drift".
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import { compareCopies, pullInChanges, sameDrift, type OurCopy } from '../../domain/catalogues/drift.js';
import type { FieldDrift, ListingState, PlatformKey } from '../../domain/catalogues/vocabulary.js';
import {
  comparable,
  databaseNow,
  driftShop,
  liveSkuCount,
  markAgreeing,
  markChecked,
  markMissingRemote,
  pullInValues,
  shopsOnPlatform,
  type CompareRow,
  type DriftShopRow as ShopRow,
  type PullInColumn,
} from '../../services/catalogues/store/drift.js';
import { emitEvent } from '../../services/webhooks/index.js';
import { brandAndCategoryIds } from '../../services/catalogues/product-write.js';
import type { Logger } from '../../logger.js';
import type { CatalogueProvider, PlatformItem, ProviderFailure } from '../../providers/types.js';

export interface CatalogueDriftDeps {
  orm: MikroORM;
  /** The chat provider's catalogue (registry.catalogue()). */
  catalogue: () => CatalogueProvider;
  log: Logger;
}

/** A shop the comparison visits: on the chat platform, with a catalogue there. */
export interface DriftShop {
  accountId: number;
  catalogueId: number;
}

/** What one shop's comparison found and did; the product ids are what the workflow pushes. */
export interface ShopDriftOutcome {
  /** Live listings compared with a platform item. */
  compared: number;
  /** Listings that differ now (new or still). */
  drifted: number;
  /** Of those, the ones product.drifted was emitted for (new drift, or different drift than recorded). */
  newlyDrifted: number;
  /** Products whose platform values were pulled into our row (source_of_truth platform). */
  pulledIn: number;
  /** Drifted products whose copy is pushed back (source_of_truth api or svc). */
  pushBack: number[];
  /** Live listings whose item is gone from the platform: pushed again whatever the source of truth. */
  missingRemote: number[];
  /** Platform items naming no live product of the shop: left alone (see docs/decisions.md). */
  unknownRemote: number;
}

/** Where a retried comparison resumes: the provider's cursor and the time the first attempt began. */
interface Progress {
  after?: string;
  startedAt: string;
  outcome: ShopDriftOutcome;
}

const CHAT: PlatformKey = 'whatsapp';
/** Items per products read: 500 answers stay well under a megabyte and one transaction each. */
export const DRIFT_PAGE_SIZE = 500;

const emptyOutcome = (): ShopDriftOutcome => ({
  compared: 0,
  drifted: 0,
  newlyDrifted: 0,
  pulledIn: 0,
  pushBack: [],
  missingRemote: [],
  unknownRemote: 0,
});

function providerFailure(f: ProviderFailure, what: string): ApplicationFailure {
  if (f.permanent) return ApplicationFailure.nonRetryable(`${what}: ${f.message} (provider code ${f.code})`, 'ProviderRefused');
  return ApplicationFailure.create({
    message: `${what}: ${f.message} (provider code ${f.code})`,
    type: 'ProviderTransient',
    nextRetryDelay: f.retryAfterSeconds ? `${f.retryAfterSeconds} seconds` : undefined,
  });
}

const ourCopy = (r: CompareRow): OurCopy => ({
  name: r.name,
  description: r.description,
  price: Number(r.price),
  salePrice: r.sale_price === null ? null : Number(r.sale_price),
  currency: r.currency,
  availability: r.availability,
  condition: r.condition,
  brand: r.brand,
  category: r.category,
});

/** Heartbeats when run as an activity; a direct call (a test) has no context and no retry to resume. */
function activityContext(): Context | null {
  try {
    return Context.current();
  } catch {
    return null;
  }
}

export function createCatalogueDriftActivities(deps: CatalogueDriftDeps) {
  const em = () => deps.orm.em.fork();

  /** One page: compare, then write its drift, events and pull-ins in one transaction. */
  async function comparePage(shop: ShopRow, items: PlatformItem[], out: ShopDriftOutcome): Promise<void> {
    if (items.length === 0) return;
    const bySku = new Map(items.map((i) => [i.retailerId, i]));
    await em().transactional(async (tx) => {
      const rows = await comparable(tx, CHAT, shop, [...bySku.keys()]);
      out.unknownRemote += items.length - (await liveSkuCount(tx, shop.id, [...bySku.keys()]));
      out.compared += rows.length;

      const agreeing: Array<{ id: number; itemId: string }> = [];
      for (const r of rows) {
        const item = bySku.get(r.sku)!;
        const id = Number(r.id);
        const drift = compareCopies(ourCopy(r), item);
        if (drift.length === 0) {
          agreeing.push({ id, itemId: item.providerId });
          continue;
        }
        const fresh = r.state !== 'drifted' || !sameDrift(r.drift, drift);
        out.drifted++;
        if (shop.source_of_truth === 'platform') {
          const { kept, applied } = await pullIn(tx, shop, r, drift);
          if (applied) out.pulledIn++;
          await markListing(tx, id, kept.length ? 'drifted' : 'synced', kept.length ? kept : null, item.providerId);
        } else {
          await markListing(tx, id, 'drifted', drift, item.providerId);
          out.pushBack.push(id);
        }
        if (fresh) {
          out.newlyDrifted++;
          await emitEvent(tx, shop.account_id, 'product.drifted', {
            catalogue_id: shop.id,
            product_id: id,
            sku: r.sku,
            platform: CHAT,
            drift,
            source_of_truth: shop.source_of_truth,
            action: shop.source_of_truth === 'platform' ? 'pulled_in' : 'pushed_back',
          });
        }
      }
      if (agreeing.length > 0) {
        await markAgreeing(tx, CHAT, agreeing);
      }
    });
  }

  async function markListing(tx: EntityManager, productId: number, state: ListingState, drift: FieldDrift[] | null, itemId: string) {
    await markChecked(tx, CHAT, productId, state, drift, itemId);
  }

  /**
   * source_of_truth platform: the platform's values of the drifted fields become ours. The revision
   * moves on (the storefront renders the new values; a push of the old revision still in flight
   * settles as stale), and every listing that was at the old revision is set to the new one: the
   * platform holds these values already, so nothing is pushed back. Answers the drift kept (values
   * our rules cannot store) and whether the row took the values.
   */
  async function pullIn(tx: EntityManager, shop: ShopRow, r: CompareRow, drift: FieldDrift[]) {
    const { changes, kept } = pullInChanges(drift);
    if (Object.keys(changes).length === 0) return { kept, applied: false };
    const records =
      'brand' in changes || 'category' in changes
        ? await brandAndCategoryIds(
            tx,
            shop.id,
            'brand' in changes ? changes.brand : undefined,
            'category' in changes ? changes.category : undefined,
          )
        : null;
    const values: Array<[PullInColumn, unknown]> = [];
    const put = (column: PullInColumn, value: unknown) => values.push([column, value]);
    if (changes.name !== undefined) put('name', changes.name);
    if (changes.description !== undefined) put('description', changes.description);
    if (changes.price !== undefined) put('price', changes.price);
    if (changes.salePrice !== undefined) put('sale_price', changes.salePrice);
    if (changes.currency !== undefined) put('currency', changes.currency);
    if (changes.availability !== undefined) put('availability', changes.availability);
    if (changes.condition !== undefined) put('condition', changes.condition);
    if (records?.brandId !== undefined) put('brand_id', records.brandId);
    if (records?.categoryId !== undefined) put('category_id', records.categoryId);
    const applied = await pullInValues(tx, Number(r.id), r.revision, values);
    return { kept, applied };
  }

  return {
    /** One keyset page of the shops the comparison visits (optionally one account's). */
    async listDriftShops(input: { afterId: number; limit: number; accountId?: number }): Promise<{ shops: DriftShop[] }> {
      const rows = await shopsOnPlatform(em(), CHAT, input.afterId, input.limit, input.accountId);
      return { shops: rows.map((r) => ({ accountId: r.account_id, catalogueId: r.id })) };
    },

    /**
     * Compares every item of the shop's platform catalogue with our live product of the same sku
     * (retired products, and listings not live there or whose product changed since its last push,
     * are not compared: the push they owe carries our copy anyway). Writes per page, in one
     * transaction: drifted listings with their field drift and checked_at, product.drifted for drift
     * not reported before, and for source_of_truth platform the pull-in. Afterwards, live listings
     * not seen on any page are missing remotely. Answers what the workflow pushes.
     */
    async compareShopCopies(input: DriftShop): Promise<ShopDriftOutcome> {
      const db = em();
      const shop = await driftShop(db, input.catalogueId, input.accountId);
      if (!shop?.meta_catalogue_id || !shop.channels.includes(CHAT)) return emptyOutcome();
      const ctx = activityContext();
      const resumed = ctx?.info.heartbeatDetails as Progress | undefined;
      const startedAt = resumed?.startedAt ?? (await databaseNow(db));
      const out = resumed?.outcome ?? emptyOutcome();
      let after = resumed?.after;
      const provider = deps.catalogue();
      for (;;) {
        const page = await provider.listItems(shop.meta_catalogue_id, { limit: DRIFT_PAGE_SIZE, ...(after ? { after } : {}) });
        if (!page.ok) throw providerFailure(page, 'catalogue products read');
        await comparePage(shop, page.value.items, out);
        after = page.value.after;
        ctx?.heartbeat({ after, startedAt, outcome: out } satisfies Progress);
        if (!after) break;
      }

      // Live listings no page showed: the item is gone from the platform (deleted there). Not drift:
      // there is no platform copy to compare, pull in or report field by field; ours is pushed again.
      // The provider id is forgotten so the push records the new one. A listing that changed while
      // the pages were read (a push settling) may hold an item created behind the cursor: next hour.
      out.missingRemote = await markMissingRemote(db, CHAT, shop.id, startedAt);
      if (out.drifted || out.missingRemote.length) {
        deps.log.info(
          {
            catalogueId: shop.id,
            drifted: out.drifted,
            newlyDrifted: out.newlyDrifted,
            pulledIn: out.pulledIn,
            missingRemote: out.missingRemote.length,
          },
          'catalogue drift found',
        );
      }
      return out;
    },
  };
}

export type CatalogueDriftActivities = ReturnType<typeof createCatalogueDriftActivities>;
