import { defineQuery, defineUpdate, setHandler, condition, allHandlersFinished } from '@temporalio/workflow';
import type { ListingState } from '../../domain/catalogues/vocabulary.js';
import { sendProducts, settleProducts, type PushOutcome } from './push-steps.js';

export interface ProductPushInput {
  accountId: number;
  catalogueId: number;
  productId: number;
}

export interface PushRevisionRequest {
  /** The product revision the caller just wrote. */
  revision: number;
  /** Take the product off every platform (the service deletes the row once this is accepted). */
  remove?: boolean;
}

export interface ListingAnswer {
  platform: string;
  state: ListingState;
  problem: string | null;
}

export type PushRevisionResult =
  { accepted: true; listings: ListingAnswer[] } | { accepted: false; refused: { platform: string; message: string } };

export interface ProductPushState {
  productId: number;
  wantedRevision: number;
  pushedRevision: number;
  phase: 'waiting' | 'sending' | 'settling' | 'idle' | 'removed';
  /** Batches sent and not settled yet. */
  settling: number;
}

/** Answers once the platforms accepted or refused the push carrying `revision` (not once it settled). */
export const pushRevisionUpdate = defineUpdate<PushRevisionResult, [PushRevisionRequest]>('pushRevision');
export const productPushStateQuery = defineQuery<ProductPushState>('state');

/** How long the workflow waits for a further edit after its last push settled before it completes. */
export const IDLE_MS = 10_000;

/** The listings as the send left them: blocked or synced where decided, syncing where a batch is out. */
function listingsOf(outcome: PushOutcome, sentToChat: boolean): ListingAnswer[] {
  return Object.entries(outcome.platforms).map(([platform, t]) => {
    const problem = outcome.problems.find((p) => p.stage === platform)?.reason ?? null;
    if (t.blocked > 0) return { platform, state: 'blocked' as const, problem };
    if (t.failed > 0) return { platform, state: 'failed' as const, problem };
    if (t.synced > 0) return { platform, state: 'synced' as const, problem: null };
    return { platform, state: sentToChat ? ('syncing' as const) : ('pending' as const), problem: null };
  });
}

/**
 * The pushes of one product (`product-push/<account>/<product>`), started or joined with the
 * pushRevision update by every product write. Edits that arrive while a push is out are coalesced:
 * the next push carries the newest revision. Each push is answered as soon as the platforms accept
 * or refuse it; its batches settle in the background; the workflow completes once idle.
 */
export async function productPushWorkflow(input: ProductPushInput): Promise<ProductPushState> {
  const state: ProductPushState = { productId: input.productId, wantedRevision: 0, pushedRevision: 0, phase: 'waiting', settling: 0 };
  let removeWanted = false;
  let removed = false;
  // Every update is answered by the first send that starts after it arrived (its own outcome, never
  // an earlier refusal of the same revision): `asked` numbers the updates, `served` is the last one
  // a finished send covered.
  let asked = 0;
  let served = 0;
  let last: PushRevisionResult = { accepted: true, listings: [] };
  setHandler(productPushStateQuery, () => state);
  setHandler(pushRevisionUpdate, async (req) => {
    const ticket = ++asked;
    if (req.remove) removeWanted = true;
    if (req.revision > state.wantedRevision) state.wantedRevision = req.revision;
    await condition(() => served >= ticket || removed);
    return last;
  });

  const target = { accountId: input.accountId, catalogueId: input.catalogueId };
  const outstanding = new Set<Promise<unknown>>();
  const owed = () => !removed && asked > served;
  for (;;) {
    if (!owed()) {
      if (outstanding.size > 0) {
        state.phase = 'settling';
        await condition(() => owed() || outstanding.size === 0);
        continue;
      }
      if (removed) break;
      state.phase = 'waiting';
      // Idle: a further edit within IDLE_MS is pushed by this run, otherwise the run completes.
      if (!(await condition(owed, IDLE_MS))) break;
    }
    const revision = state.wantedRevision;
    const remove = removeWanted;
    const covering = asked;
    state.phase = 'sending';
    const sent = await sendProducts({ ...target, productIds: [input.productId], ...(remove ? { removeIds: [input.productId] } : {}) });
    last = sent.outcome.refused
      ? { accepted: false, refused: sent.outcome.refused }
      : { accepted: true, listings: remove ? [] : listingsOf(sent.outcome, sent.batches.length > 0) };
    served = covering;
    if (last.accepted) {
      state.pushedRevision = Math.max(state.pushedRevision, revision);
      if (remove) removed = true;
    } else if (remove) {
      // A refused removal leaves the product where it is; a later delete asks again.
      removeWanted = false;
    }
    if (sent.batches.length > 0) {
      state.settling += sent.batches.length;
      const p: Promise<unknown> = settleProducts(target, sent.batches, sent.outcome).finally(() => {
        state.settling -= sent.batches.length;
        outstanding.delete(p);
      });
      outstanding.add(p);
    }
  }
  await condition(allHandlersFinished);
  state.phase = removed ? 'removed' : 'idle';
  return state;
}
