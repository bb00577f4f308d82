import { loadConfig, type Config } from '../../config.js';
import type { Logger } from '../../logger.js';
import { startPaymentAfterCommit, tellPaymentCancelled, type PaymentFlowDeps } from './flow.js';
import { startRefundAfterCommit } from './refunds.js';
import type { EntityManager } from '@mikro-orm/postgresql';
import { isKnownCurrency, paymentKey } from '../../domain/payments/index.js';
import { conflict, notFound, validationFailed, type FieldErrors } from '../platform/errors.js';
import { actorLabel, type RequestContext } from '../platform/context.js';
import { parseRecipient } from '../platform/phones.js';
import { recordMove, requestPayment, requestRefund } from './moves.js';
import type { PaymentSummary } from './payments.js';
import { readPaymentRow } from './store.js';

// Where payments come from (issue 26, point 2): an order's checkout (the shop page, a chat order)
// and the operator, who requests a payment for any subject, refunds one and cancels one. Each is
// written in the caller's transaction; what the payment does next (the push to the payer, expiry,
// the provider's news) is the payment workflow's, started after the commit by afterPaymentRequested.

/**
 * The one place a requested payment's workflow is started, after the transaction that wrote the
 * payment has committed (so the workflow never reads a payment that is not there): the payment
 * workflow for a payment, the refund workflow for a refund, the start recorded on a payment. The
 * request is committed and answered whatever happens here: a start that fails is logged, and the
 * payment or refund stays in draft until the worker's reconciler starts it (startOwedPayments, a
 * pass or two later).
 */
export async function afterPaymentRequested(
  // Lenient as startOrderHoldAfterCommit is: callers hand over the deps they hold (a Partial<Config> in the chat ingress).
  deps: { temporal: PaymentFlowDeps['temporal']; config: Partial<Pick<Config, 'taskQueue'>>; log?: Logger; orm?: PaymentFlowDeps['orm'] },
  payment: PaymentSummary | null,
  accountId: number,
): Promise<void> {
  if (!payment) return;
  const flow: PaymentFlowDeps = {
    temporal: deps.temporal,
    config: { taskQueue: deps.config.taskQueue ?? loadConfig().taskQueue },
    log: deps.log,
    orm: deps.orm,
  };
  try {
    if (payment.is_refund) await startRefundAfterCommit(flow, payment, accountId);
    else await startPaymentAfterCommit(flow, payment, accountId);
  } catch (err) {
    deps.log?.warn(
      { err, payment: payment.id, reference: payment.reference },
      'payment workflow not started; the reconciler will start it',
    );
  }
}

/** The payer as a payment stores it: a phone number in E.164, or a field error naming why not. */
function payerOf(raw: string | null | undefined, field: string, errors: FieldErrors): string | null {
  if (raw === undefined || raw === null) return null;
  const parsed = parseRecipient(raw);
  if ('e164' in parsed) return parsed.e164;
  errors[field] = [`The payer must be a phone number in international format (+<country code><number>): ${parsed.problem}`];
  return null;
}

export interface OrderPaymentInput {
  accountId: number;
  orderId: number;
  /** The order's total_amount: hundredths, which is the payments' 100 minor units a major unit for every currency. */
  totalMinor: number;
  currency: string;
  /** The customer's handle when the order knows it (a chat's customer number); null for a shop-page basket filled by whoever held the link. */
  customer: string | null;
  /** checkout (the shop page) or chat_order. */
  source: string;
  createdBy: string;
}

/**
 * The payment of a new order, for its total, in the order's transaction: draft, subject the order,
 * the payer the customer's number when the order knows one (else null: the customer names it when
 * paying, as a Stripe PaymentIntent waits for its payment method). An order with nothing to collect
 * (a total of 0, or a currency that is no ISO 4217 code) gets none, rather than failing the order.
 */
export async function requestOrderPayment(tx: EntityManager, o: OrderPaymentInput): Promise<PaymentSummary | null> {
  const currency = o.currency.toUpperCase();
  if (!Number.isSafeInteger(o.totalMinor) || o.totalMinor < 1 || !isKnownCurrency(currency)) return null;
  const payer = o.customer ? parseRecipient(o.customer) : null;
  return requestPayment(tx, {
    accountId: o.accountId,
    amountMinor: o.totalMinor,
    currency,
    subjectType: 'order',
    subjectId: String(o.orderId),
    payer: payer && 'e164' in payer ? payer.e164 : null,
    createdBy: o.createdBy,
    source: o.source,
    message: `For order ${o.orderId}`,
  });
}

export interface OperatorPaymentRequest {
  subject_type?: string;
  subject_id?: string;
  amount_minor: number;
  currency: string;
  payer?: string;
  method?: string;
  expires_at?: string;
}

/** The operator asks for a payment for any subject it names: draft, written whole or not at all. */
export async function requestPaymentFor(rc: RequestContext, body: OperatorPaymentRequest): Promise<PaymentSummary> {
  const errors: FieldErrors = {};
  if (!isKnownCurrency(body.currency))
    errors.currency = [`${body.currency} is not an ISO 4217 currency code (3 capital letters: TZS, KES, USD).`];
  const payer = payerOf(body.payer, 'payer', errors);
  const expiresAt = body.expires_at === undefined ? null : new Date(body.expires_at);
  if (expiresAt && !(expiresAt.getTime() > Date.now())) errors.expires_at = ['The expiry must be a time in the future.'];
  if (Object.keys(errors).length) throw validationFailed(errors);
  return requestPayment(rc.em, {
    accountId: rc.account.id,
    amountMinor: body.amount_minor,
    currency: body.currency,
    subjectType: body.subject_type ?? null,
    subjectId: body.subject_id ?? null,
    payer,
    method: body.method ?? null,
    expiresAt,
    createdBy: actorLabel(rc.actor),
    source: 'operator',
  });
}

/**
 * A refund of a settled payment, of amount_minor or (none given) of all that is still refundable,
 * through the guarded statement of requestRefund: over-refunds, zero and negative amounts are 422,
 * an unsettled payment or a refund 409, another account's 404; nothing is written then. The refund
 * is in draft; the caller starts its workflow after the commit (afterPaymentRequested).
 */
export async function refundPayment(
  rc: RequestContext,
  payment: string,
  body: { amount_minor?: number; reason: string },
): Promise<PaymentSummary> {
  let amount = body.amount_minor;
  if (amount === undefined) {
    const key = paymentKey(payment);
    const row = key && (await readPaymentRow(rc.em, rc.account.id, key));
    if (!row) throw notFound('Payment');
    amount = Number(row.amount_minor) - Number(row.refunded_minor);
    if (amount < 1) throw conflict(`Nothing of ${row.reference} is left to refund.`);
  }
  return requestRefund(rc.em, {
    accountId: rc.account.id,
    payment,
    amountMinor: amount,
    reason: body.reason,
    createdBy: actorLabel(rc.actor),
    source: 'operator',
  });
}

/**
 * The operator cancels an open payment (draft, pending, authorised, or failed: the contract's moves
 * into cancelled), or a refund still in draft (never sent: its workflow, if it runs, finds its own
 * move to pending refused and sends nothing). Any other is refused (409), a refund past draft
 * included (it may be at the provider already), and the refusal recorded on the payment's timeline
 * with the operator as its source, as recordMove records every refused move. Once the move has
 * committed, the payment's workflow is told (a signal), so it stops pushing and polling at once.
 */
export async function cancelPayment(
  rc: RequestContext,
  deps: { temporal: PaymentFlowDeps['temporal'] },
  payment: string,
  body: { reason?: string },
): Promise<PaymentSummary> {
  const outcome = await recordMove(rc.em, {
    accountId: rc.account.id,
    payment,
    to: 'cancelled',
    source: 'operator',
    message: body.reason ?? null,
  });
  if (!outcome.applied) throw conflict(outcome.refusal);
  await tellPaymentCancelled({ temporal: deps.temporal, log: rc.log }, rc.account.id, outcome.payment, 'operator');
  return outcome.payment;
}
