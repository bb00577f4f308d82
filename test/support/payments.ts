// Payments for the tests: there is no REST write that makes or moves one (the contract has none),
// so a test makes them through the services the workflow's activities call, on the run's database.
// The test drives such a payment itself, so it is marked as owed no workflow (workflow_started_at):
// otherwise the stack's reconciler would start one for it half a minute later and race the test's
// own moves. `owed: true` leaves it owed, as a payment whose start was lost. Refunds made here are
// marked the same way (a refund in draft is owed its refund workflow).
import { openOrm } from '../../entities/orm.js';
import { exec } from '../../entities/db.js';
import assert from 'node:assert/strict';
import { admin, eventually, uniquePhone } from './stack.js';
import { recordMove, requestPayment, requestRefund, type RequestPaymentInput } from '../../services/payments/index.js';
import type { PaymentState } from '../../domain/payments/index.js';

export type PaymentOrm = Awaited<ReturnType<typeof openOrm>>;

/** An ORM on the stack's database (DATABASE_URL, set by scripts/test.ts); close it in `after`. */
export const paymentsOrm = (pool = 8) => openOrm(process.env.DATABASE_URL!, pool);

/** The walks from draft to each state, as the state table allows them (refund states are reached by refunds). */
const WALKS: Record<Exclude<PaymentState, 'partly_refunded' | 'refunded'>, PaymentState[]> = {
  draft: [],
  pending: ['pending'],
  authorised: ['pending', 'authorised'],
  paid: ['pending', 'paid'],
  failed: ['pending', 'failed'],
  expired: ['expired'],
  cancelled: ['cancelled'],
};

export function paymentsOf(orm: PaymentOrm) {
  const em = () => orm.em.fork();
  const request = async (accountId: number, over: Partial<RequestPaymentInput> = {}, o: { owed?: boolean } = {}) => {
    const p = await requestPayment(em(), {
      accountId,
      amountMinor: 1_000_000,
      currency: 'TZS',
      source: 'test',
      createdBy: 'system:test',
      ...over,
    });
    if (!o.owed) await exec(em(), 'update payments set workflow_started_at = now() where id = ?', [p.id]);
    return p;
  };
  const move = (accountId: number, payment: string, to: PaymentState, source = 'provider', message?: string) =>
    recordMove(em(), { accountId, payment, to, source, message });
  /** A refund requested through the service (draft, no workflow); `owed: true` leaves it owed its workflow, as one whose start was lost. */
  const requestRefundOf = async (
    accountId: number,
    payment: string,
    amountMinor: number,
    reason = 'customer asked',
    o: { owed?: boolean } = {},
  ) => {
    const r = await requestRefund(em(), { accountId, payment, amountMinor, reason, source: 'operator', createdBy: 'operator' });
    if (!o.owed) await exec(em(), 'update payments set workflow_started_at = now() where id = ?', [r.id]);
    return r;
  };
  /** A payment walked to `state` (partly_refunded and refunded by settled refunds). */
  async function inState(accountId: number, state: PaymentState, over: Partial<RequestPaymentInput> = {}) {
    const p = await request(accountId, over);
    if (state === 'partly_refunded' || state === 'refunded') {
      for (const to of WALKS.paid) await move(accountId, p.id, to);
      const amount = state === 'refunded' ? p.amount_minor : Math.floor(p.amount_minor / 4);
      const r = await requestRefund(em(), { accountId, payment: p.id, amountMinor: amount, reason: 'test', source: 'test' });
      await exec(em(), 'update payments set workflow_started_at = now() where id = ?', [r.id]);
      await move(accountId, r.id, 'pending', 'workflow');
      await move(accountId, r.id, 'paid');
      return p;
    }
    for (const to of WALKS[state]) await move(accountId, p.id, to);
    return p;
  }
  /** A refund requested (draft) and sent, as its workflow would send it (pending); the test stands in for the provider's result. */
  async function refund(accountId: number, payment: string, amountMinor: number, reason = 'customer asked') {
    const r = await requestRefundOf(accountId, payment, amountMinor, reason);
    return (await move(accountId, r.id, 'pending', 'workflow', 'reversal sent')).payment;
  }
  return { em, request, move, inState, refund, requestRefund: requestRefundOf };
}

/**
 * A payment paid at the simulated provider through its workflow, so it keeps the provider's receipt
 * (what its refunds reverse): requested by the operator with a payer, pushed, settled by the signed
 * callback. Answers the paid payment as the operator reads it, and its payer.
 */
export async function paidAtProvider(accountId: number, o: { amountMinor: number; currency?: string; subjectId?: string }) {
  const payer = uniquePhone('2547');
  const made = await admin('POST', `/accounts/${accountId}/payments`, {
    amount_minor: o.amountMinor,
    currency: o.currency ?? 'KES',
    payer,
    subject_type: 'order',
    subject_id: o.subjectId ?? `order-${payer.slice(-6)}`,
  });
  assert.equal(made.status, 201, made.text);
  const paid = await eventually(
    () => admin('GET', `/accounts/${accountId}/payments/${made.body.data.id}`),
    (r) => r.body?.data?.state === 'paid',
    30_000,
    200,
    'paid at the provider',
  );
  return { ...paid.body.data, payer };
}
