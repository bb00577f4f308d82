import type { EntityManager } from '@mikro-orm/postgresql';
import { tablesOf, type Row } from '../../entities/database.js';
import { exec, many, one } from '../../entities/db.js';
import type { OrderLine } from '../../entities/orders.js';
import type { HoldStatus, OrderPlatform, OrderStatus } from '../../domain/orders/index.js';

// The orders family's statements (issue 24, point 1): the only code that names orders and
// stock_holds. The product stock a hold moves is the catalogue's (reserveStock and friends in
// services/catalogues/index.ts), changed in the same transaction right after the hold.

type Hold = Row<'orders', 'stock_holds'>;

const ORDER_COLUMNS = [
  'id',
  'account_id',
  'catalogue_id',
  'status',
  'platform',
  'customer_handle',
  'provider_message_id',
  'product_items',
  'total_amount',
  'total_currency',
  'needs_attention',
  'cart_id',
  'note',
  'hold_expires_at',
  'created_at',
  'updated_at',
] as const;
export type OrderRow = Pick<Row<'orders', 'orders'>, (typeof ORDER_COLUMNS)[number]>;

// ---- orders ------------------------------------------------------------------------------------

/** One order of the account (locked for the transaction with `forUpdate`). */
export async function readOrderRow(em: EntityManager, accountId: number, orderId: number, forUpdate = false): Promise<OrderRow | null> {
  const q = tablesOf(em, 'orders')
    .selectFrom('orders')
    .select(ORDER_COLUMNS)
    .where('id', '=', String(orderId))
    .where('account_id', '=', accountId);
  return (await (forUpdate ? q.forUpdate() : q).executeTakeFirst()) ?? null;
}

export interface OrderFilter {
  status?: OrderStatus;
  platform?: OrderPlatform;
  catalogueId?: number;
  updatedSince?: string;
}

function filtered(em: EntityManager, accountId: number, f: OrderFilter) {
  let q = tablesOf(em, 'orders').selectFrom('orders').where('account_id', '=', accountId);
  if (f.status) q = q.where('status', '=', f.status);
  if (f.platform) q = q.where('platform', '=', f.platform);
  if (f.catalogueId !== undefined) q = q.where('catalogue_id', '=', f.catalogueId);
  if (f.updatedSince) q = q.where('updated_at', '>=', f.updatedSince);
  return q;
}

/** How many of the account's orders the filter keeps, and one page of them, most recently changed first. */
export async function orderPage(em: EntityManager, accountId: number, f: OrderFilter, limit: number, offset: number) {
  const { n } = await filtered(em, accountId, f)
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .executeTakeFirstOrThrow();
  const rows = await filtered(em, accountId, f)
    .select(ORDER_COLUMNS)
    .orderBy('updated_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .offset(offset)
    .execute();
  return { total: Number(n), rows };
}

export interface NewOrder {
  accountId: number;
  catalogueId: number;
  platform: OrderPlatform;
  customerHandle: string | null;
  providerMessageId: string | null;
  currency: string;
  cartId: number | null;
  note: string | null;
  holdSeconds: number;
}

/**
 * The order row, empty (lines, total and expiry are filled in by fillOrder in the same transaction);
 * null when its provider message is already recorded for the account (a redelivery, which waits on
 * the unique key for the first to commit).
 */
export async function insertOrder(tx: EntityManager, o: NewOrder) {
  return one<Pick<Row<'orders', 'orders'>, 'id' | 'hold_expires_at'>>(
    tx,
    `insert into orders (account_id, catalogue_id, status, platform, customer_handle, provider_message_id, product_items,
                         total_amount, total_currency, needs_attention, cart_id, note, hold_expires_at, created_at, updated_at)
     values (?, ?, 'pending', ?, ?, ?, '[]'::jsonb, 0, ?, false, ?, ?, now() + make_interval(secs => ?), now(), now())
     on conflict (account_id, provider_message_id) do nothing
     returning id, hold_expires_at`,
    [o.accountId, o.catalogueId, o.platform, o.customerHandle, o.providerMessageId, o.currency, o.cartId, o.note, o.holdSeconds],
  );
}

/** The order an account's provider message already made. */
export async function orderOfProviderMessage(tx: EntityManager, accountId: number, providerMessageId: string | null | undefined) {
  return one<Pick<Row<'orders', 'orders'>, 'id' | 'hold_expires_at' | 'needs_attention'>>(
    tx,
    'select id, hold_expires_at, needs_attention from orders where account_id = ? and provider_message_id = ?',
    [accountId, providerMessageId],
  );
}

/** Freezes a new order's lines and total, and its hold expiry (null when nothing is held). */
export async function fillOrder(
  tx: EntityManager,
  orderId: number,
  f: { lines: OrderLine[]; total: number; currency: string; needsAttention: boolean; holdExpiresAt: Date | null },
): Promise<void> {
  await exec(
    tx,
    `update orders set product_items = ?::jsonb, total_amount = ?, total_currency = ?, needs_attention = ?, hold_expires_at = ?
      where id = ?`,
    [JSON.stringify(f.lines), f.total, f.currency, f.needsAttention, f.holdExpiresAt, orderId],
  );
}

/** Locks the account's order and answers its shop; null when it is not the account's. */
export async function lockOrder(tx: EntityManager, accountId: number, orderId: number) {
  return one<Pick<Row<'orders', 'orders'>, 'id' | 'catalogue_id'>>(
    tx,
    'select id, catalogue_id from orders where id = ? and account_id = ? for update',
    [orderId, accountId],
  );
}

/** Locks the account's order and answers when its holds lapse; null when it is not the account's. */
export async function lockOrderHoldExpiry(tx: EntityManager, accountId: number, orderId: number) {
  return one<Pick<Row<'orders', 'orders'>, 'hold_expires_at'>>(
    tx,
    'select hold_expires_at from orders where id = ? and account_id = ? for update',
    [orderId, accountId],
  );
}

export async function setStatus(tx: EntityManager, orderId: number, status: OrderStatus): Promise<void> {
  await exec(tx, 'update orders set status = ?, updated_at = now() where id = ?', [status, orderId]);
}

export async function markNeedsAttention(tx: EntityManager, orderId: number): Promise<void> {
  await exec(tx, 'update orders set needs_attention = true where id = ?', [orderId]);
}

/** Records that the order's order-hold workflow was started (once). */
export async function markHoldWorkflowStarted(em: EntityManager, orderId: number | string): Promise<void> {
  await exec(em, 'update orders set hold_workflow_started_at = now() where id = ? and hold_workflow_started_at is null', [orderId]);
}

/** Orders created at least `olderThanSeconds` ago that still owe an order-hold start, oldest first, with whether they hold anything. */
export async function ordersOwingHoldStart(em: EntityManager, olderThanSeconds: number, limit: number) {
  return many<Pick<Row<'orders', 'orders'>, 'id' | 'account_id' | 'hold_expires_at'> & { holding: boolean }>(
    em,
    `select o.id, o.account_id, o.hold_expires_at,
            exists (select 1 from stock_holds h where h.order_id = o.id and h.status = 'held') as holding
       from orders o
      where o.hold_expires_at is not null and o.hold_workflow_started_at is null and o.created_at < now() - make_interval(secs => ?)
      order by o.created_at limit ?`,
    [olderThanSeconds, limit],
  );
}

// ---- stock holds -------------------------------------------------------------------------------

/** The order's holds in `statuses`, in ascending product id (the order products are locked in). */
export async function holdsOf(tx: EntityManager, orderId: number, statuses: readonly HoldStatus[]) {
  return many<Pick<Hold, 'product_id' | 'quantity'>>(
    tx,
    'select product_id, quantity from stock_holds where order_id = ? and status = any(?::text[]) order by product_id',
    [orderId, statuses],
  );
}

/** A new order's holds, one per product, in ascending product id. */
export async function insertHolds(
  tx: EntityManager,
  accountId: number,
  orderId: number,
  expiresAt: Date,
  holds: { product_id: number; quantity: number }[],
): Promise<void> {
  await exec(
    tx,
    `insert into stock_holds (account_id, order_id, product_id, quantity, status, expires_at, created_at)
     select ?, ?, h.product_id, h.quantity, 'held', ?, now() from jsonb_to_recordset(?::jsonb) as h(product_id bigint, quantity int)
      order by h.product_id`,
    [accountId, orderId, expiresAt, JSON.stringify(holds)],
  );
}

/** What a hold move returns: the hold's product and units. */
export type MovedHoldRow = Pick<Hold, 'product_id' | 'quantity'>;

/** Moves one held hold to `to` (guarded: a hold another transaction already moved matches nothing). */
export async function moveHeldHold(tx: EntityManager, orderId: number, productId: string, to: 'committed' | 'released' | 'expired') {
  return one<MovedHoldRow>(
    tx,
    `update stock_holds set status = ?, resolved_at = now()
      where order_id = ? and product_id = ? and status = 'held' returning product_id, quantity`,
    [to, orderId, productId],
  );
}

/** Commits a lapsed (expired or released) hold whose units were taken again. */
export async function commitLapsedHold(tx: EntityManager, orderId: number, productId: string) {
  return one<MovedHoldRow>(
    tx,
    `update stock_holds set status = 'committed', resolved_at = now()
      where order_id = ? and product_id = ? and status in ('expired', 'released')
     returning product_id, quantity`,
    [orderId, productId],
  );
}
