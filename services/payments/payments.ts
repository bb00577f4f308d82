import type { FromSchema } from 'json-schema-to-ts';
import { displayAmount, isOpen, isSettled, nextStatesOf, paymentKey, stateFilter, type PaymentState } from '../../domain/payments/index.js';
import { notFound } from '../platform/errors.js';
import { iso } from '../platform/time.js';
import type { RequestContext } from '../platform/context.js';
import { pageOf } from '../platform/pagination.js';
import { eventsOf, ledgerOf, paymentPage, readPaymentRow, refundsOf, type PaymentRow } from './store.js';

// Reading payments (Endpoints > Payments; Resources > Payment). Payments are written by the
// services in moves.ts (requested for a record, moved by the provider's news, refunded), never by
// a REST write: the contract has none.

export const PAYMENT_PAGE = { default: 25, max: 100 } as const;

/** The contract's row, except for a refund: never refunded, and not cancelled once sent (domain/payments/states.ts). */
function nextOf(p: Pick<PaymentRow, 'state' | 'is_refund'>): PaymentState[] {
  return [...nextStatesOf(p.state, p.is_refund)];
}

/** The contract's payment summary (Resources > Payment): what the list shows and the detail starts with. */
export function paymentSummary(p: PaymentRow) {
  const amount = Number(p.amount_minor);
  const refunded = Number(p.refunded_minor);
  return {
    id: p.id,
    reference: p.reference,
    state: p.state,
    amount_minor: amount,
    amount: displayAmount(amount, p.currency),
    currency: p.currency,
    refunded_minor: refunded,
    refundable_minor: amount - refunded,
    refunded: refunded > 0 ? displayAmount(refunded, p.currency) : null,
    is_open: isOpen(p.state),
    is_settled: isSettled(p.state),
    next_states: nextOf(p),
    subject_id: p.subject_id,
    subject_type: p.subject_type,
    is_refund: p.is_refund,
    refund_of: p.refund_of,
    reason: p.reason,
    payer: p.payer,
    method: p.method,
    provider: p.provider,
    attempts: p.attempts,
    last_error: p.last_error,
    expires_at: iso(p.expires_at),
    settled_at: iso(p.settled_at),
    checkout_url: p.checkout_url,
    checkout_code: p.checkout_code,
    created_at: iso(p.created_at),
    updated_at: iso(p.updated_at),
  };
}
export type PaymentSummary = ReturnType<typeof paymentSummary>;

/** GET /payments: the filters and the page (default 25, at most 100; limit wins over per_page). */
export const paymentListQuery = {
  type: 'object',
  properties: {
    state: {
      type: 'string',
      description:
        'open (draft, pending, authorised), one state, or all; trimmed and lower-cased; a value that is none of these leaves the list unfiltered',
    },
    subject_id: { type: 'string', maxLength: 191, description: 'only payments for this business record' },
    page: { type: 'integer', minimum: 1, maximum: 2_147_483_647 },
    per_page: { type: 'integer', minimum: 1, maximum: 2_147_483_647, description: 'default 25; above 100 reads as 100' },
    limit: { type: 'integer', minimum: 1, maximum: 2_147_483_647, description: 'wins over per_page; default 25; above 100 reads as 100' },
  },
} as const;
export type PaymentQuery = FromSchema<typeof paymentListQuery>;

/** The account's payments, newest first, as the contract pages them: `{data, meta}`. */
export async function listPayments(rc: RequestContext, q: PaymentQuery) {
  const { page, perPage, offset } = pageOf({ page: q.page, limit: q.limit ?? q.per_page ?? PAYMENT_PAGE.default });
  // A subject's page is one statement planned once per connection: the request's authentication is
  // made by it too when the door asked for it (one round trip for both).
  const admission = q.subject_id !== undefined && rc.admission?.pending && !rc.em.isInTransaction() ? rc.admission : undefined;
  const { total, rows, ...made } = await paymentPage(
    rc.em,
    rc.account.id,
    { states: stateFilter(q.state), subjectId: q.subject_id },
    perPage,
    offset,
    admission?.sql(),
  );
  // First: a refused or changed credential read nothing, and the door answers it.
  if (admission) {
    if (!made.admission) throw new Error('the admitted page statement answered no row');
    admission.settle(made.admission);
  }
  return {
    data: rows.map(paymentSummary),
    meta: { current_page: page, per_page: perPage, total, last_page: Math.max(1, Math.ceil(total / perPage)) },
  };
}

/** One payment with who asked for it, its timeline (oldest first), its ledger (by entry_no) and its refunds (newest first). */
export async function getPayment(rc: RequestContext, ref: string) {
  const key = paymentKey(ref);
  const row = key && (await readPaymentRow(rc.em, rc.account.id, key));
  if (!row) throw notFound('Payment');
  const [events, ledger, refunds] = await Promise.all([
    eventsOf(rc.em, row.id),
    ledgerOf(rc.em, row.id),
    refundsOf(rc.em, rc.account.id, row.id),
  ]);
  return {
    ...paymentSummary(row),
    created_by: row.created_by,
    timeline: events.map((e) => ({
      old_state: e.old_state,
      new_state: e.new_state,
      source: e.source,
      message: e.message,
      occurred_at: iso(e.occurred_at),
    })),
    ledger: ledger.map((l) => ({
      entry_no: l.entry_no,
      kind: l.kind,
      direction: l.direction,
      account: l.account,
      amount_minor: Number(l.amount_minor),
      amount: displayAmount(Number(l.amount_minor), l.currency),
      currency: l.currency,
      occurred_at: iso(l.occurred_at),
    })),
    refunds: refunds.map(paymentSummary),
  };
}
export type PaymentDetail = Awaited<ReturnType<typeof getPayment>>;
