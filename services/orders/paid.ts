import type { EntityManager } from '@mikro-orm/postgresql';
import { recordNotice } from '../account/index.js';
import { emitEvent } from '../webhooks/index.js';
import { collectedBefore, type AfterPaid, type PaidPayment, type PaidSubject } from '../payments/index.js';
import { moveOrderStatus, signalOrderMovedOn } from './holds.js';
import { orderView } from './orders.js';
import { readOrderRow } from './store.js';

// An order's payment is paid (issue 26, points 3 and 6; the contract's order.paid: "an order payment
// settles"). The payments family tells us in the transaction of its move into paid (PaidSubject,
// services/payments/subjects.ts; the worker wires it), so the order's move, its held stock and
// order.paid commit with the payment's move, once. docs/payments.md "An order's payment is paid".
//
// The contract's order has no paid status. What a Shopify merchant expects, in our statuses:
// - pending → confirmed, by the operator's own path (moveOrderStatus): the held stock is committed
//   and the order's TTL workflow is told after the commit, as for a PUT of the status;
// - confirmed or later keeps its status (the merchant already moved it on);
// - cancelled or refunded stays so (money never revives an order): an account notice says money
//   arrived for it, so the merchant refunds the payment or reopens the order;
// - order.paid goes out in every one of these cases, the order as it now stands and the payment.
// The order is paid when its settled payments in its currency (less their refunds) first cover its
// total: a partial payment, or one in another currency, moves nothing and emits nothing (Shopify's
// "partially paid" fires no orders/paid either); the payment itself is paid and listed all the same.

/** An order's id from a payment's subject_id: digits within the id range, else no order of ours. */
function orderIdOf(subjectId: string | null): number | null {
  if (!subjectId || !/^\d{1,10}$/.test(subjectId)) return null;
  const n = Number(subjectId);
  return n >= 1 && n <= 2_147_483_647 ? n : null;
}

/** The payment as order.paid tells it. */
const paymentFields = (p: PaidPayment['payment']) => ({
  id: p.id,
  reference: p.reference,
  amount_minor: p.amount_minor,
  amount: p.amount,
  currency: p.currency,
  method: p.method,
  paid_at: p.settled_at,
});

/** The orders family's PaidSubject for subject_type `order` (activities/index.ts wires it). */
export const orderPaid: PaidSubject = async (tx: EntityManager, paid: PaidPayment) => {
  const { accountId, payment } = paid;
  const orderId = orderIdOf(payment.subject_id);
  // Locked first: a status PUT, the TTL and another payment of this order wait for this transaction.
  const order = orderId === null ? null : await readOrderRow(tx, accountId, orderId, true);
  if (!order || orderId === null) return { outcome: 'no such order' };
  if (payment.currency !== order.total_currency)
    return { outcome: `paid in ${payment.currency}, the order is in ${order.total_currency}: not counted` };
  const total = Number(order.total_amount);
  const before = await collectedBefore(tx, paid);
  if (before >= total) return { outcome: 'the order was already paid' };
  if (before + payment.amount_minor < total) return { outcome: `partly paid: ${before + payment.amount_minor} of ${total}` };

  const actor = `payment:${payment.reference}`;
  let afterCommit: AfterPaid | undefined;
  let view = orderView(order);
  if (order.status === 'pending') {
    view = (await moveOrderStatus(tx, accountId, orderId, 'confirmed', actor))!.view;
    afterCommit = (deps) => signalOrderMovedOn(deps, accountId, orderId, 'confirmed');
  } else if (order.status === 'cancelled' || order.status === 'refunded') {
    await recordNotice(tx, accountId, {
      kind: 'order.paid',
      message: `Payment ${payment.reference} of ${payment.amount} was paid for order ${orderId}, which is ${order.status}: refund the payment or reopen the order.`,
      data: { order_id: orderId, status: order.status, payment_id: payment.id, reference: payment.reference },
      dedupeKey: `order.paid:${orderId}:${payment.id}`,
    });
  }
  await emitEvent(
    tx,
    accountId,
    'order.paid',
    { ...view, payment: paymentFields(payment) },
    payment.settled_at ? new Date(payment.settled_at) : new Date(),
  );
  return { outcome: order.status === 'pending' ? 'paid: confirmed' : `paid: kept ${order.status}`, afterCommit };
};
