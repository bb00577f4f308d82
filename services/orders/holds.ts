import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import { WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError, type Client } from '@temporalio/client';
import { loadConfig, type Config } from '../../config.js';
import type { Logger } from '../../logger.js';
import { holdEffect } from '../../domain/orders/lines.js';
import type { OrderStatus } from '../../domain/orders/index.js';
import { signalWorkflow, startWorkflow, type StarterDeps } from '../../temporal/starters.js';
import { orderHoldStarter, orderHoldWorkflowId } from '../../workflows/orders/order-hold.starter.js';
import {
  followAvailableStock,
  noticeLowStock,
  recordMovements,
  releaseReservedStock,
  shopStockPolicy,
  takeStock,
  type MovementInput,
  type StockFigures,
} from '../catalogues/index.js';
import { iso } from '../platform/time.js';
import { orderView, type CreatedOrder } from './orders.js';
import {
  commitLapsedHold,
  holdsOf,
  lockOrder,
  lockOrderHoldExpiry,
  markHoldWorkflowStarted,
  markNeedsAttention,
  moveHeldHold,
  ordersOwingHoldStart,
  readOrderRow,
  setStatus,
  type MovedHoldRow,
} from './store.js';
import { actorLabel, type RequestContext } from '../platform/context.js';
import { notFound } from '../platform/errors.js';
import { numericId } from '../platform/ids.js';

// The life of an order's stock holds after creation: each hold moves once, held → committed |
// released | expired, by a guarded UPDATE (… where status = 'held'), with the order row locked
// first so a status change and the TTL expiry of one order run one after the other and the first
// decides. The TTL is an order-hold workflow per pending order with holds, owed durably: the order
// records when it was started, the start happens after the caller's commit, and the reconciler
// starts any owed start that was lost (the pattern of services/catalogues/push-requests.ts).

/** A hold moved, with its product's figures after. */
type MovedHold = MovedHoldRow & StockFigures;

/** What a hold move did: the holds moved and their units. */
export interface MovedHolds {
  holds: number;
  units: number;
  /** Confirmed after its holds had lapsed and a re-commit came up short (the order now needs attention). */
  short?: number;
}
export type ExpiredHolds = MovedHolds;

const productIdsOf = (rows: readonly MovedHold[]) => rows.map((r) => Number(r.product_id));

/**
 * Moves the order's `held` holds to `to`, giving their units back to the product (release, expiry)
 * or taking them out of its inventory too (commit under stock_policy=svc). Per hold, ascending
 * product id: the guarded hold move, then (when it moved) the product's figures, in this
 * transaction; a hold another transaction already moved matches nothing and the product is left.
 */
async function moveHeld(
  tx: EntityManager,
  accountId: number,
  orderId: number,
  to: 'committed' | 'released' | 'expired',
  decrement: boolean,
): Promise<MovedHold[]> {
  const moved: MovedHold[] = [];
  for (const h of await holdsOf(tx, orderId, ['held'])) {
    const hold = await moveHeldHold(tx, orderId, h.product_id, to);
    if (!hold) continue;
    const stock = await releaseReservedStock(tx, accountId, hold.product_id, hold.quantity, decrement);
    if (stock) moved.push({ ...hold, ...stock });
  }
  return moved;
}

/**
 * Under stock_policy=svc, a confirmation that finds holds lapsed (expired) or released (cancelled
 * first) takes the units again with the same guard as creation, straight into a commit; the order's
 * own lapsed hold no longer counts in `reserved`, so it never stands in its own way. Short: nothing
 * moves for that product and the order needs attention.
 */
async function recommitLapsed(tx: EntityManager, accountId: number, orderId: number, allowBackorders: boolean) {
  const moved: MovedHold[] = [];
  let short = 0;
  for (const h of await holdsOf(tx, orderId, ['expired', 'released'])) {
    const stock = await takeStock(tx, accountId, h.product_id, h.quantity, allowBackorders);
    const hold = stock && (await commitLapsedHold(tx, orderId, stock.id));
    if (stock && hold) moved.push({ ...hold, inventory: stock.inventory, reserved: stock.reserved });
    else short++;
  }
  return { moved, short };
}

const movements = (rows: MovedHold[], kind: 'release' | 'commit', cause: Record<string, unknown>, decrement: boolean): MovementInput[] =>
  rows.map((r) => ({
    productId: Number(r.product_id),
    kind,
    // The signed change of the figure the kind moves: reserved for a release, inventory for a commit.
    quantity: kind === 'commit' && !decrement ? 0 : -r.quantity,
    inventoryAfter: r.inventory,
    reservedAfter: r.reserved,
    cause,
  }));

const tally = (rows: MovedHold[]) => ({ holds: rows.length, units: rows.reduce((n, r) => n + r.quantity, 0) });

/**
 * What a new status does to the order's holds, in the transaction that records it (the order row is
 * already locked by the caller). Commit: a real decrement under svc; under external the hold is
 * released and a `release` movement says why. Release: cancelled/refunded. Pending: nothing.
 */
export async function applyStatusToHolds(
  tx: EntityManager,
  accountId: number,
  orderId: number,
  status: OrderStatus,
  shop: { stock_policy: 'svc' | 'external'; allow_backorders: boolean },
  actor: string,
): Promise<MovedHolds> {
  const effect = holdEffect(status);
  if (effect === 'none') return { holds: 0, units: 0 };
  const cause = { actor, kind: 'order_status', order_id: orderId, status };
  if (effect === 'release') {
    const rows = await moveHeld(tx, accountId, orderId, 'released', false);
    await recordMovements(tx, accountId, movements(rows, 'release', cause, false));
    await followAvailableStock(tx, accountId, productIdsOf(rows), cause);
    return tally(rows);
  }
  const svc = shop.stock_policy === 'svc';
  const rows = await moveHeld(tx, accountId, orderId, 'committed', svc);
  let short = 0;
  if (svc) {
    const again = await recommitLapsed(tx, accountId, orderId, shop.allow_backorders);
    rows.push(...again.moved);
    short = again.short;
    if (short) await markNeedsAttention(tx, orderId);
  }
  await recordMovements(
    tx,
    accountId,
    svc ? movements(rows, 'commit', cause, true) : movements(rows, 'release', { ...cause, committed_under: 'external' }, false),
  );
  if (svc)
    await noticeLowStock(
      tx,
      accountId,
      rows.map((r) => Number(r.product_id)),
    );
  // Under svc a commit moves units from reserved to gone (available unchanged unless re-held); under
  // external the release frees them: either way the word follows what is left to buy.
  await followAvailableStock(tx, accountId, productIdsOf(rows), cause);
  return { ...tally(rows), ...(short ? { short } : {}) };
}

/**
 * The TTL: releases the order's holds still held, as `expired`, with a `release` movement whose
 * cause is the TTL. Locks the order first, so a status change of the same order waits for it or it
 * for the change, and whichever is second finds nothing held. Answers what it released.
 */
export async function expireOrderHolds(em: EntityManager, accountId: number, orderId: number): Promise<ExpiredHolds> {
  return em.transactional(async (tx) => {
    const order = await lockOrderHoldExpiry(tx, accountId, orderId);
    if (!order) return { holds: 0, units: 0 };
    const rows = await moveHeld(tx, accountId, orderId, 'expired', false);
    const cause = { actor: 'system:order-hold', kind: 'ttl', order_id: orderId, hold_expires_at: iso(order.hold_expires_at) };
    await recordMovements(tx, accountId, movements(rows, 'release', cause, false));
    await followAvailableStock(tx, accountId, productIdsOf(rows), cause);
    return tally(rows);
  });
}

// ---- the order-hold workflow -------------------------------------------------------------------

async function startOrderHold(em: EntityManager, deps: StarterDeps<'taskQueue'>, accountId: number, orderId: number, expiresAt: Date) {
  try {
    await startWorkflow(deps, orderHoldStarter, { accountId, orderId }, [{ accountId, orderId, expiresAt: expiresAt.toISOString() }]);
  } catch (err) {
    if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
  }
  await markHoldWorkflowStarted(em, orderId);
}

/**
 * Starts the order-hold workflow a created order owes, after the caller's commit. A failure to reach
 * Temporal is logged and left to the reconciler (startOwedOrderHolds): the order is recorded and its
 * holds lapse at most a reconciler pass late. A redelivered order (created false) or one holding
 * nothing owes nothing here.
 */
export async function startOrderHoldAfterCommit(
  // Lenient on purpose: callers hand over the deps they hold (a Partial<Config>, no logger in some tests).
  deps: { temporal: Client; config: Partial<Pick<Config, 'taskQueue'>>; orm: MikroORM; log?: Logger },
  created: CreatedOrder,
): Promise<void> {
  if (!created.created || !created.holdExpiresAt) return;
  const config = { taskQueue: deps.config.taskQueue ?? loadConfig().taskQueue };
  try {
    await startOrderHold(
      deps.orm.em.fork(),
      { temporal: deps.temporal, config },
      created.accountId,
      created.orderId,
      created.holdExpiresAt,
    );
  } catch (err) {
    deps.log?.warn({ err, orderId: created.orderId }, 'order-hold workflow not started; the reconciler will start it');
  }
}

/**
 * One reconciler pass: starts the order-hold workflows owed by orders created at least
 * `olderThanSeconds` ago. An order whose holds were all resolved meanwhile owes nothing and is only
 * marked.
 */
export async function startOwedOrderHolds(em: EntityManager, deps: StarterDeps<'taskQueue'>, olderThanSeconds = 30, limit = 500) {
  const rows = await ordersOwingHoldStart(em, olderThanSeconds, limit);
  for (const r of rows) {
    if (r.holding) await startOrderHold(em, deps, r.account_id, Number(r.id), new Date(r.hold_expires_at!));
    else await markHoldWorkflowStarted(em, r.id);
  }
  return rows.length;
}

/**
 * Tells the order's workflow it moved on (after the status change committed). Best effort: a
 * workflow already finished, never started or unreachable is fine, because the expiry is guarded
 * and finds nothing held.
 */
export async function signalOrderMovedOn(deps: { temporal: Client; log: Logger }, accountId: number, orderId: number, status: OrderStatus) {
  try {
    await signalWorkflow(deps.temporal, orderHoldStarter, orderHoldWorkflowId(accountId, orderId), 'orderMovedOn', { status });
  } catch (err) {
    if (!(err instanceof WorkflowNotFoundError))
      deps.log.warn({ err, orderId }, 'order-hold workflow not signalled; its timer will find nothing held');
  }
}

// ---- status moves ------------------------------------------------------------------------------

/**
 * The status move itself, in the caller's transaction: the order row locked, its status set, its
 * holds moved as the new status says (`actor` names who asked, in the movements' cause). Null when
 * the order is not the account's. After the commit, a status whose hold effect is not none owes the
 * order's workflow `signalOrderMovedOn`. The operator's PUT and a paid payment both come through here.
 */
export async function moveOrderStatus(tx: EntityManager, accountId: number, orderId: number, status: OrderStatus, actor: string) {
  const order = await lockOrder(tx, accountId, orderId);
  if (!order) return null;
  const shop = (await shopStockPolicy(tx, order.catalogue_id))!;
  await setStatus(tx, orderId, status);
  const moved = await applyStatusToHolds(tx, accountId, orderId, status, shop, actor);
  return { view: orderView((await readOrderRow(tx, accountId, orderId))!), moved };
}

/**
 * Sets an order's status (any value from any value) and moves its held stock as the new status
 * says, in one transaction with the order row locked; then tells the order's workflow, when the
 * order moved on. Another tenant's order is 404, as a missing one.
 */
export async function setOrderStatus(rc: RequestContext, deps: { temporal: Client }, ref: string, status: OrderStatus) {
  const orderId = numericId(ref, 'Order');
  const { view, moved } = await rc.em.transactional(async (tx) => {
    const done = await moveOrderStatus(tx, rc.account.id, orderId, status, actorLabel(rc.actor));
    if (!done) throw notFound('Order');
    return done;
  });
  if (holdEffect(status) !== 'none') await signalOrderMovedOn({ temporal: deps.temporal, log: rc.log }, rc.account.id, orderId, status);
  rc.log.debug({ orderId, status, moved }, 'order status set');
  return view;
}
