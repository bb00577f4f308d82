import type { MikroORM } from '@mikro-orm/postgresql';
import type { Client } from '@temporalio/client';
import { sql } from 'kysely';
import type { Config } from '../config.js';
import type { Logger } from '../logger.js';
import { findUnstartedMessages } from '../services/messaging/messages.js';
import { startMessageWorkflow } from '../services/messaging/outbound.js';
import { startUnstartedPushes } from '../services/catalogues/index.js';
import { startOwedOrderHolds } from '../services/orders/holds.js';
import { requestOwedIndexes } from '../services/data/indexes.js';
import { startOwedGroupCreations } from '../services/groups/index.js';
import { startOwedPayments } from '../services/payments/index.js';
import { startPoller } from './poller.js';

/** Held, for the length of a pass, by the one reconciler of the deployment that repairs now. */
export const RECONCILER_LOCK = 'svc:reconciler';

type ReconcilerDeps = { config: Config; orm: MikroORM; temporal: Client; log: Logger };

/**
 * One reconciler pass, claimed: it runs only while it holds a transaction-scoped advisory lock, so
 * the reconcilers of several workers never repair the same row at once (each would start the same
 * workflow; the id policy keeps that harmless, but the work and the logs would double). The claim
 * covers the whole pass because the rows it repairs belong to six families whose services find
 * them; a pass is short and rare, and one worker repairing at a time is enough. A worker that dies
 * drops its connection and with it the lock; one that stalls loses it to the idle timeout.
 * Answers whether this pass ran (false: another reconciler held the claim).
 */
export async function reconcileOnce(deps: ReconcilerDeps): Promise<boolean> {
  return deps.orm.em
    .fork()
    .getKysely()
    .transaction()
    .execute(async (trx) => {
      await sql`set local idle_in_transaction_session_timeout = '120s'`.execute(trx);
      const { rows } = await sql<{ claimed: boolean }>`select pg_try_advisory_xact_lock(hashtext(${RECONCILER_LOCK})) as claimed`.execute(
        trx,
      );
      if (!rows[0]?.claimed) return false;
      await repairPass(deps);
      return true;
    });
}

async function repairPass(deps: ReconcilerDeps): Promise<void> {
  const rows = await findUnstartedMessages(deps.orm.em.fork(), 30, 500);
  for (const r of rows) await startMessageWorkflow(deps, r.account_id, r, r.channel_type, null);
  if (rows.length) deps.log.info({ count: rows.length }, 'reconciler checked queued messages');
  // Platform pushes owed by committed stock changes whose start was lost (services/catalogues/push-requests.ts).
  const pushes = await startUnstartedPushes(deps.orm.em.fork(), deps);
  if (pushes) deps.log.info({ count: pushes }, 'reconciler started platform pushes');
  // Order-hold workflows owed by committed orders whose start was lost (services/orders/holds.ts).
  const holds = await startOwedOrderHolds(deps.orm.em.fork(), deps);
  if (holds) deps.log.info({ count: holds }, 'reconciler started order-hold workflows');
  // Data-table index requests lost between the definition's commit and Temporal (services/data/indexes.ts).
  const indexes = await requestOwedIndexes(deps.orm.em.fork(), deps);
  if (indexes) deps.log.info({ count: indexes }, 'reconciler asked again for data-table indexes');
  // Chat groups still creating whose creation workflow was never started (services/groups/groups.ts).
  const groups = await startOwedGroupCreations(deps.orm.em.fork(), deps);
  if (groups) deps.log.info({ count: groups }, 'reconciler started chat-group creations');
  // Payment workflows owed by committed payments whose start was lost (services/payments/flow.ts).
  const payments = await startOwedPayments(deps.orm.em.fork(), deps);
  if (payments) deps.log.info({ count: payments }, 'reconciler started payment workflows');
}

/**
 * Repairs the one gap between "record written" and "workflow started": a process that died in between
 * leaves a queued message with no workflow. Starting it again is harmless (REJECT_DUPLICATE ids).
 */
export function startReconciler(deps: ReconcilerDeps, everyMs = 15_000) {
  return startPoller({
    name: 'reconciler',
    everyMs,
    log: deps.log,
    pass: async () => {
      await reconcileOnce(deps);
    },
  });
}
