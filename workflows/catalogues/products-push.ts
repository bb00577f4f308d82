import { defineQuery, setHandler } from '@temporalio/workflow';
import { pushProducts, type PushOutcome } from './push-steps.js';

export interface ProductsPushInput {
  accountId: number;
  catalogueId: number;
  productIds: number[];
  /** Skus to delete on every platform (products no longer stored). */
  removals?: { sku: string }[];
  /** Why (an inventory push, a drift repair, a delete): kept for operators, not read. */
  cause: Record<string, unknown>;
}

export interface ProductsPushState {
  phase: 'pushing' | 'done';
  products: number;
  outcome: PushOutcome | null;
}

export const productsPushStateQuery = defineQuery<ProductsPushState>('state');

/**
 * One push of many products of a shop to every platform it is on
 * (`products-push/<account>/<catalogue>/<push id>`): inventory pushes, drift repairs, deletes.
 */
export async function productsPushWorkflow(input: ProductsPushInput): Promise<PushOutcome> {
  const state: ProductsPushState = { phase: 'pushing', products: input.productIds.length, outcome: null };
  setHandler(productsPushStateQuery, () => state);
  const outcome = await pushProducts({
    accountId: input.accountId,
    catalogueId: input.catalogueId,
    productIds: input.productIds,
    ...(input.removals?.length ? { removals: input.removals } : {}),
  });
  state.outcome = outcome;
  state.phase = 'done';
  return outcome;
}
