import type { EntityManager } from '@mikro-orm/postgresql';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import { insertPushRequest, markPushStarted, unstartedPushes } from './store/stock.js';
import type { Logger } from '../../logger.js';
import { startWorkflow, type StarterDeps } from '../../temporal/starters.js';
import { productsPushStarter } from '../../workflows/catalogues/products-push.starter.js';

// "One push goes to every platform the shop is on", and nothing accepted is lost: the push a stock
// change owes is recorded in the change's own transaction (product_push_requests), started after
// the commit (a push started before it could read the products before the change is visible and
// push nothing), and marked started. A process that dies between the commit and the start leaves
// the row unstarted; the worker's reconciler starts it. The workflow id is built from push_id, so a
// start repeated by the reconciler is refused by Temporal and counts as started.

export interface PushRequest {
  id: number;
  accountId: number;
  catalogueId: number;
  pushId: string;
  productIds: number[];
  cause: Record<string, unknown>;
}

/** Records the push a change owes; call it with the change's transaction. */
export async function requestPush(tx: EntityManager, r: Omit<PushRequest, 'id'>): Promise<PushRequest> {
  return { ...r, id: await insertPushRequest(tx, r) };
}

/** Starts the push (or finds it started) and marks the request started. */
export async function startPush(em: EntityManager, deps: StarterDeps<'taskQueue'>, r: PushRequest): Promise<void> {
  try {
    await startWorkflow(deps, productsPushStarter, { accountId: r.accountId, catalogueId: r.catalogueId, pushId: r.pushId }, [
      { accountId: r.accountId, catalogueId: r.catalogueId, productIds: r.productIds, cause: r.cause },
    ]);
  } catch (err) {
    if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
  }
  await markPushStarted(em, r.id);
}

/**
 * Starts a push after its commit; a failure to reach Temporal is left to the reconciler (the change
 * is committed and answered, its push follows within a reconciler pass).
 */
export async function startPushAfterCommit(em: EntityManager, deps: StarterDeps<'taskQueue'>, log: Logger, r: PushRequest) {
  try {
    await startPush(em, deps, r);
  } catch (err) {
    log.warn({ err, pushId: r.pushId }, 'platform push not started; the reconciler will start it');
  }
}

/** One reconciler pass: starts pushes recorded at least `olderThanSeconds` ago and never marked started. */
export async function startUnstartedPushes(em: EntityManager, deps: StarterDeps<'taskQueue'>, olderThanSeconds = 30, limit = 100) {
  const rows = await unstartedPushes(em, olderThanSeconds, limit);
  for (const r of rows) {
    await startPush(em, deps, {
      id: Number(r.id),
      accountId: r.account_id,
      catalogueId: r.catalogue_id,
      pushId: r.push_id,
      productIds: r.product_ids.map(Number),
      cause: r.cause,
    });
  }
  return rows.length;
}
