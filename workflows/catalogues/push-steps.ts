// The platform push as workflow steps, for every workflow of the family that owes one (a product
// edit, a batch sync, a feed pull, an inventory push, a drift repair): hand the changed products to
// the platforms, then poll the chat platform's batch handles until its listings are settled. Only
// ids and revisions pass through history; the activities read the products themselves.
import { proxyActivities, sleep, ActivityFailure, ApplicationFailure, log } from '@temporalio/workflow';
import type {
  PlatformPushActivities,
  PlatformTally,
  PushedBatch,
  RefusalDetails,
  SendOutcome,
} from '../../activities/catalogues/platform-push.js';
import type { SyncProblem } from '../../domain/catalogues/vocabulary.js';

export interface PushInput {
  accountId: number;
  catalogueId: number;
  productIds: number[];
  /** Skus to delete on every platform (products no longer stored, e.g. retired by a replace sync). */
  removals?: { sku: string }[];
  /** Products of productIds to take off every platform although still stored (a delete about to happen). */
  removeIds?: number[];
}

export interface PushOutcome {
  platforms: Record<string, PlatformTally>;
  problems: SyncProblem[];
  problemsTruncated: boolean;
  /** The platform refused the push outright (its listings are failed with its words). */
  refused?: { platform: string; message: string };
}

/** What the send step leaves: the batches to settle and the counts so far. */
export interface SentPush {
  batches: PushedBatch[];
  outcome: PushOutcome;
}

/**
 * How long a push waits for the platform to finish its batches before the listings still syncing
 * are failed ('no answer from the platform'). Meta processes a 5,000-item batch in seconds to a few
 * minutes; a quarter of an hour is well past that and short enough that a stuck push is seen.
 */
export const SETTLE_DEADLINE_MS = 15 * 60 * 1000;
/** Polling: a first look after half a second (the simulator answers in a fraction of one), then 1 s doubling to 30 s. */
export const POLL_DELAYS_MS = { first: 500, next: 1000, max: 30_000 };
export const NO_ANSWER = 'no answer from the platform';

const PROBLEMS_KEPT = 200;

// A 5,000-product send reads the products and posts one batch of about 2 MB: well inside a minute.
const push = proxyActivities<PlatformPushActivities>({
  startToCloseTimeout: '2 minutes',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 8 },
});

export function emptyOutcome(): PushOutcome {
  return { platforms: {}, problems: [], problemsTruncated: false };
}

/** Adds `more` into `into` (counts summed, problems kept to 200). */
export function mergeOutcome(
  into: PushOutcome,
  more: { platforms: Record<string, PlatformTally>; problems: SyncProblem[]; problemsTruncated: boolean },
): PushOutcome {
  for (const [platform, t] of Object.entries(more.platforms)) {
    const mine = (into.platforms[platform] ??= { synced: 0, blocked: 0, failed: 0 });
    mine.synced += t.synced;
    mine.blocked += t.blocked;
    mine.failed += t.failed;
  }
  for (const p of more.problems) {
    if (into.problems.length < PROBLEMS_KEPT) into.problems.push(p);
    else into.problemsTruncated = true;
  }
  if (more.problemsTruncated) into.problemsTruncated = true;
  return into;
}

function refusalOf(err: unknown): RefusalDetails | null {
  const cause = err instanceof ActivityFailure ? err.cause : null;
  if (!(cause instanceof ApplicationFailure) || cause.type !== 'ProviderRefused') return null;
  const d = cause.details?.[0] as RefusalDetails | undefined;
  return d ?? { platform: 'whatsapp', message: cause.message, accepted: [], outcome: emptyOutcome() };
}

/**
 * Hands the products to every platform of the shop. Answers once the platforms accepted or refused
 * the push (not after it settled). A platform that cannot be reached after the activity's retries
 * fails the products' listings there instead of failing the caller's workflow.
 */
export async function sendProducts(input: PushInput): Promise<SentPush> {
  try {
    const sent: SendOutcome = await push.sendCatalogueItems(input);
    return { batches: sent.handles, outcome: mergeOutcome(emptyOutcome(), sent) };
  } catch (err) {
    const refusal = refusalOf(err);
    if (refusal) {
      const outcome = mergeOutcome(emptyOutcome(), refusal.outcome);
      outcome.refused = { platform: refusal.platform, message: refusal.message };
      return { batches: refusal.accepted, outcome };
    }
    if (!(err instanceof ActivityFailure)) throw err;
    const reason = `the platform could not be reached: ${err.cause?.message ?? err.message}`;
    log.warn('catalogue push not sent', { catalogueId: input.catalogueId, reason });
    const failed = await push.failCatalogueBatch({ ...input, reason });
    return {
      batches: [],
      outcome: mergeOutcome(emptyOutcome(), {
        platforms: { whatsapp: { synced: 0, blocked: 0, failed: failed.failed } },
        problems: failed.problems,
        problemsTruncated: failed.failed > failed.problems.length,
      }),
    };
  }
}

/**
 * Polls the batches until each is finished (first after 0.5 s, then 1 s doubling to 30 s), adding
 * what each settles into `outcome`. Past `deadlineMs` the listings still syncing fail with
 * 'no answer from the platform'.
 */
export async function settleProducts(
  target: { accountId: number; catalogueId: number },
  batches: PushedBatch[],
  outcome: PushOutcome,
  deadlineMs: number = SETTLE_DEADLINE_MS,
): Promise<PushOutcome> {
  let open = [...batches];
  const started = Date.now();
  let delay = POLL_DELAYS_MS.first;
  while (open.length > 0) {
    const left = deadlineMs - (Date.now() - started);
    if (left <= 0) break;
    await sleep(Math.min(delay, left));
    delay = delay < POLL_DELAYS_MS.next ? POLL_DELAYS_MS.next : Math.min(delay * 2, POLL_DELAYS_MS.max);
    const still: PushedBatch[] = [];
    for (const b of open) {
      const r = await push.settleCatalogueBatch({ ...target, ...b });
      if (r.done) mergeOutcome(outcome, r);
      else still.push(b);
    }
    open = still;
  }
  for (const b of open) {
    log.warn('catalogue batch never finished', { catalogueId: target.catalogueId, handle: b.handle });
    const failed = await push.failCatalogueBatch({ ...target, productIds: b.productIds, revisions: b.revisions, reason: NO_ANSWER });
    mergeOutcome(outcome, {
      platforms: { whatsapp: { synced: 0, blocked: 0, failed: failed.failed } },
      problems: failed.problems,
      problemsTruncated: false,
    });
  }
  return outcome;
}

/** The whole push: send, then settle. Never throws for a platform's refusal or silence (see `refused`, failed counts). */
export async function pushProducts(input: PushInput, deadlineMs: number = SETTLE_DEADLINE_MS): Promise<PushOutcome> {
  const sent = await sendProducts(input);
  return settleProducts(input, sent.batches, sent.outcome, deadlineMs);
}
