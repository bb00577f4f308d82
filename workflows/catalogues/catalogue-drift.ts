import { proxyActivities, continueAsNew, workflowInfo, defineQuery, setHandler, ActivityFailure, log } from '@temporalio/workflow';
import type { CatalogueDriftActivities, DriftShop, ShopDriftOutcome } from '../../activities/catalogues/catalogue-drift.js';
import { pushProducts } from './push-steps.js';

// The hourly drift comparison (States > Product listing), started by one global Temporal Schedule
// (`catalogue-drift`, workflows/catalogues/catalogue-drift.starter.ts): visits every shop on the
// chat platform in pages of shop ids, compares each shop's platform copy with ours (the activity
// marks drifted listings, emits product.drifted and, for source_of_truth platform, pulls the
// platform values in), then pushes our copy back where the source of truth is api or svc, and
// pushes again what went missing remotely. Decisions: docs/decisions.md, "Catalogue drift".

export interface CatalogueDriftInput {
  /** Only this account's shops (an operator's run-now, a test); absent = every shop. */
  accountId?: number;
  /** Shop ids per listDriftShops page (default 50). */
  shopsPerPage?: number;
  /** Shops one run visits before it continues as new (default 500), keeping each history small. */
  shopsPerRun?: number;
  /** Shops compared and pushed at the same time (default 4): one slow platform answer does not hold the rest. */
  concurrency?: number;
  /** Set by continue-as-new: the last shop id the earlier runs finished. */
  afterShopId?: number;
  /** Set by continue-as-new: what the earlier runs of this pass found. */
  totals?: DriftTotals;
  /** Set by continue-as-new: this run's number in the pass. */
  run?: number;
}

export interface DriftTotals {
  shopsChecked: number;
  /** Shops whose comparison or push failed after its retries (provider down, catalogue gone): next hour. */
  shopsFailed: number;
  compared: number;
  drifted: number;
  newlyDrifted: number;
  pulledIn: number;
  pushedBack: number;
  missingRemote: number;
}

export interface DriftProgress extends DriftTotals {
  phase: 'comparing' | 'done';
  afterShopId: number;
  /** Shops being compared or pushed right now. */
  current: number[];
  /** Runs of this pass so far (1 + continue-as-new count). */
  run: number;
}

export const catalogueDriftProgressQuery = defineQuery<DriftProgress>('progress');

export const DRIFT_DEFAULTS = { shopsPerPage: 50, shopsPerRun: 500, concurrency: 4 } as const;
/** Product ids per push: one items_batch call's worth, so no push input outgrows a history payload. */
export const PUSH_CHUNK = 5000;

const zeroTotals = (): DriftTotals => ({
  shopsChecked: 0,
  shopsFailed: 0,
  compared: 0,
  drifted: 0,
  newlyDrifted: 0,
  pulledIn: 0,
  pushedBack: 0,
  missingRemote: 0,
});

// A database read of at most a page of shop ids.
const shops = proxyActivities<CatalogueDriftActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' },
});
// Reads the whole platform catalogue of one shop (500 items a page, a heartbeat each, resumed from
// the last page on a retry). Bounded attempts: a platform down for good fails the shop, not the pass.
const compare = proxyActivities<CatalogueDriftActivities>({
  startToCloseTimeout: '30 minutes',
  heartbeatTimeout: '2 minutes',
  retry: { initialInterval: '5 seconds', backoffCoefficient: 2, maximumInterval: '2 minutes', maximumAttempts: 6 },
});

export async function catalogueDriftWorkflow(input: CatalogueDriftInput = {}): Promise<DriftProgress> {
  const perPage = input.shopsPerPage ?? DRIFT_DEFAULTS.shopsPerPage;
  const perRun = input.shopsPerRun ?? DRIFT_DEFAULTS.shopsPerRun;
  const concurrency = Math.max(1, input.concurrency ?? DRIFT_DEFAULTS.concurrency);
  const progress: DriftProgress = {
    phase: 'comparing',
    afterShopId: input.afterShopId ?? 0,
    current: [],
    run: input.run ?? 1,
    ...(input.totals ?? zeroTotals()),
  };
  setHandler(catalogueDriftProgressQuery, () => progress);

  let visitedThisRun = 0;
  for (;;) {
    const { shops: page } = await shops.listDriftShops({
      afterId: progress.afterShopId,
      limit: perPage,
      ...(input.accountId !== undefined ? { accountId: input.accountId } : {}),
    });
    // A few shops at a time, each taken from the shared queue by the next free lane.
    const queue = [...page];
    const lane = async () => {
      for (let shop = queue.shift(); shop; shop = queue.shift()) await checkShop(shop, progress);
    };
    await Promise.all(Array.from({ length: Math.min(concurrency, page.length) }, lane));
    visitedThisRun += page.length;
    if (page.length > 0) progress.afterShopId = page[page.length - 1].catalogueId;
    if (page.length < perPage) break;
    if (visitedThisRun >= perRun || workflowInfo().continueAsNewSuggested) {
      const { phase: _phase, afterShopId, current: _current, run, ...totals } = progress;
      await continueAsNew<typeof catalogueDriftWorkflow>({ ...input, afterShopId, totals, run: run + 1 });
    }
  }
  progress.phase = 'done';
  return progress;
}

/** One shop: compare, then push back what the comparison hands over. A failure is counted, never thrown. */
async function checkShop(shop: DriftShop, progress: DriftProgress): Promise<void> {
  progress.current.push(shop.catalogueId);
  try {
    let found: ShopDriftOutcome;
    try {
      found = await compare.compareShopCopies(shop);
    } catch (err) {
      if (!(err instanceof ActivityFailure)) throw err;
      progress.shopsFailed++;
      log.warn('catalogue drift comparison failed', { catalogueId: shop.catalogueId, reason: err.cause?.message ?? err.message });
      return;
    }
    progress.shopsChecked++;
    progress.compared += found.compared;
    progress.drifted += found.drifted;
    progress.newlyDrifted += found.newlyDrifted;
    progress.pulledIn += found.pulledIn;
    progress.missingRemote += found.missingRemote.length;
    const ids = [...new Set([...found.pushBack, ...found.missingRemote])];
    for (let at = 0; at < ids.length; at += PUSH_CHUNK) {
      const productIds = ids.slice(at, at + PUSH_CHUNK);
      try {
        // A platform refusal or silence fails the listings there (pushProducts never throws for it).
        await pushProducts({ accountId: shop.accountId, catalogueId: shop.catalogueId, productIds });
        progress.pushedBack += productIds.length;
      } catch (err) {
        if (!(err instanceof ActivityFailure)) throw err;
        progress.shopsFailed++;
        log.warn('catalogue drift push-back failed', { catalogueId: shop.catalogueId, reason: err.cause?.message ?? err.message });
        return;
      }
    }
  } finally {
    progress.current.splice(progress.current.indexOf(shop.catalogueId), 1);
  }
}
