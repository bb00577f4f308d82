import { emitBusinessEvent } from '../automations/index.js';
import { randomInt } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import {
  canMove,
  displayAmount,
  isCurrencyCode,
  isSettled,
  ledgerLegs,
  newReference,
  paymentKey,
  refundCancellable,
  refundHolds,
  type PaymentState,
} from '../../domain/payments/index.js';
import { conflict, notFound, validationFailed, type FieldErrors } from '../platform/errors.js';
import { paymentSummary, type PaymentSummary } from './payments.js';
import type { AfterPaid, PaidSubjects } from './subjects.js';
import {
  appendLedger,
  giveRefundHeadroomBack,
  insertEvent,
  insertPayment,
  providerRefOf,
  readPaymentRow,
  setState,
  settledRefundsMinor,
  startPush,
  takeRefundHeadroom,
  unstartPush,
  type NewPayment,
  type PaymentRow,
} from './store.js';

// Where payments come from and how they move (issue 26, points 2-5). These are the services the
// payment workflow's activities call: each runs in one transaction, so a move, its timeline row and
// its ledger legs are written together or not at all, and an illegal move is recorded on the
// timeline (with the source that asked) and never applied.

/** How long a new payment's reference may be tried before giving up (eight random digits a day: a collision is rare). */
const REFERENCE_TRIES = 5;

export interface RequestPaymentInput {
  accountId: number;
  /** 100 minor units a major unit, whatever the currency. */
  amountMinor: number;
  currency: string;
  subjectId?: string | null;
  subjectType?: string | null;
  /** draft (nothing sent yet, the default) or pending (pushed to the payer at once). */
  state?: 'draft' | 'pending';
  payer?: string | null;
  method?: string | null;
  provider?: string | null;
  expiresAt?: Date | null;
  checkoutUrl?: string | null;
  checkoutCode?: string | null;
  /** An actor label: api_key:12, operator, system:shop-page. */
  createdBy?: string | null;
  /** Who asked, for the first timeline row (checkout, chat_order, operator, …). */
  source: string;
  message?: string | null;
}

const textProblem = (v: string | null | undefined, max: number, what: string) =>
  v === undefined || v === null
    ? null
    : typeof v !== 'string' || v.trim() === '' || v.length > max
      ? `${what} must be 1 to ${max} characters.`
      : null;

function amountProblem(n: unknown): string | null {
  return typeof n === 'number' && Number.isSafeInteger(n) && n > 0 ? null : 'The amount must be a whole number of minor units, at least 1.';
}

function requestProblems(i: RequestPaymentInput): FieldErrors | null {
  const errors: FieldErrors = {};
  const put = (field: string, problem: string | null) => {
    if (problem) errors[field] = [problem];
  };
  put('amount_minor', amountProblem(i.amountMinor));
  put('currency', typeof i.currency === 'string' && isCurrencyCode(i.currency) ? null : 'The currency must be 3 capital letters.');
  put('subject_id', textProblem(i.subjectId, 191, 'subject_id'));
  put('subject_type', textProblem(i.subjectType, 64, 'subject_type'));
  put('payer', textProblem(i.payer, 191, 'payer'));
  put('method', textProblem(i.method, 32, 'method'));
  put('provider', textProblem(i.provider, 64, 'provider'));
  put('checkout_code', textProblem(i.checkoutCode, 64, 'checkout_code'));
  put('source', textProblem(i.source, 64, 'source') ?? (i.source ? null : 'source is required.'));
  if (i.state !== undefined && i.state !== 'draft' && i.state !== 'pending') put('state', 'A payment starts as draft or pending.');
  if (i.expiresAt && Number.isNaN(i.expiresAt.getTime())) put('expires_at', 'The expiry must be a time.');
  return Object.keys(errors).length ? errors : null;
}

/** Inserts a payment under a fresh reference, and its first timeline row. */
async function insertWithReference(tx: EntityManager, p: Omit<NewPayment, 'reference'>, source: string, message: string | null) {
  for (let i = 0; i < REFERENCE_TRIES; i++) {
    const row = await insertPayment(tx, { ...p, reference: newReference(new Date(), randomInt(100_000_000)) });
    if (row) {
      await insertEvent(tx, { accountId: p.accountId, paymentId: row.id, oldState: null, newState: row.state, source, message });
      return row;
    }
  }
  throw new Error(`no free payment reference after ${REFERENCE_TRIES} tries`);
}

/**
 * Requests a payment for a business record (an order, a basket's checkout, any subject the
 * operator names): the payment in draft (or pending) and its first timeline row. Refuses (422,
 * nothing written) an amount that is not a positive whole number of minor units, a currency that is
 * not three capital letters, and over-long texts. Joins the caller's transaction when there is one.
 */
export async function requestPayment(em: EntityManager, input: RequestPaymentInput): Promise<PaymentSummary> {
  const problems = requestProblems(input);
  if (problems) throw validationFailed(problems);
  const row = await em.transactional((tx) =>
    insertWithReference(
      tx,
      {
        accountId: input.accountId,
        state: input.state ?? 'draft',
        amountMinor: input.amountMinor,
        currency: input.currency,
        subjectId: input.subjectId ?? null,
        subjectType: input.subjectType ?? null,
        isRefund: false,
        refundOf: null,
        reason: null,
        payer: input.payer ?? null,
        method: input.method ?? null,
        provider: input.provider ?? null,
        expiresAt: input.expiresAt ?? null,
        checkoutUrl: input.checkoutUrl ?? null,
        checkoutCode: input.checkoutCode ?? null,
        createdBy: input.createdBy ?? null,
      },
      input.source,
      input.message ?? null,
    ),
  );
  return paymentSummary(row);
}

export interface RequestRefundInput {
  accountId: number;
  /** The payment to refund: its UUID or its reference. */
  payment: string;
  amountMinor: number;
  reason?: string | null;
  createdBy?: string | null;
  source: string;
}

/**
 * Requests a refund of a settled payment: a payment of its own (is_refund, refund_of, reason) in
 * draft, whose amount is taken from the parent's refundable headroom by one guarded statement,
 * so concurrent refunds never give back more than was paid (refunded_minor +
 * refundable_minor = amount_minor at every moment). Refuses, writing nothing: an amount of zero or
 * less, or more than is refundable (422 amount_minor); a payment that is not settled, or is itself a
 * refund (409); another account's or an unknown payment (404).
 *
 * The headroom is taken last, after the refund's own rows: the guarded statement locks the parent's
 * row until the commit, and every refund of that payment queues on it, so the lock is held for that
 * statement and the commit only (docs/benchmarks.md, "Concurrent partial refunds"). A refund the
 * headroom refuses rolls its rows back with the transaction. A refusal the unlocked read already
 * shows (not settled, too little left) is answered before anything is written: that read is a
 * committed state, and nothing is taken on it.
 */
export async function requestRefund(em: EntityManager, input: RequestRefundInput): Promise<PaymentSummary> {
  const amountError = amountProblem(input.amountMinor);
  if (amountError) throw validationFailed({ amount_minor: [amountError] });
  const reasonError = textProblem(input.reason, 1000, 'reason');
  if (reasonError) throw validationFailed({ reason: [reasonError] });
  const key = paymentKey(input.payment);
  return em.transactional(async (tx) => {
    const parent = key && (await readPaymentRow(tx, input.accountId, key));
    if (!parent) throw notFound('Payment');
    if (parent.is_refund) throw conflict('A refund cannot be refunded.');
    const refused = (p: PaymentRow) => {
      if (!isSettled(p.state)) return conflict(`Only a paid payment can be refunded; ${p.reference} is ${p.state}.`);
      const left = Number(p.amount_minor) - Number(p.refunded_minor);
      return validationFailed({
        amount_minor: [`At most ${left} minor units (${displayAmount(left, p.currency)}) of ${p.reference} can still be refunded.`],
      });
    };
    if (!isSettled(parent.state) || Number(parent.amount_minor) - Number(parent.refunded_minor) < input.amountMinor) throw refused(parent);
    const refund = await insertWithReference(
      tx,
      {
        accountId: input.accountId,
        // Not yet at the provider: its workflow moves it to pending as it sends the reversal, so a
        // refund in draft was surely never sent.
        state: 'draft',
        amountMinor: input.amountMinor,
        currency: parent.currency,
        subjectId: parent.subject_id,
        subjectType: parent.subject_type,
        isRefund: true,
        refundOf: parent.id,
        reason: input.reason ?? null,
        payer: parent.payer,
        method: parent.method,
        provider: parent.provider,
        expiresAt: null,
        checkoutUrl: null,
        checkoutCode: null,
        createdBy: input.createdBy ?? null,
      },
      input.source,
      `Refund of ${displayAmount(input.amountMinor, parent.currency)} from ${parent.reference}`,
    );
    const took = await takeRefundHeadroom(tx, input.accountId, parent.id, input.amountMinor);
    // Thrown inside the transaction: the refund's rows go with it.
    if (!took) throw refused((await readPaymentRow(tx, input.accountId, { id: parent.id }))!);
    return paymentSummary(refund);
  });
}

export interface MoveInput {
  accountId: number;
  /** The payment's UUID or reference. */
  payment: string;
  to: PaymentState;
  /** Who asks: provider, provider_poll, expiry, operator, checkout, … (recorded on the timeline). */
  source: string;
  message?: string | null;
  /** The provider's id of the payment, once it has one. */
  providerRef?: string | null;
  /** Set with a move to failed: what went wrong (the provider's words). */
  lastError?: string | null;
  /**
   * What the provider says was paid, with a move into paid: minor units, and the currency when the
   * provider names one. A move whose amount or currency is not the payment's is refused.
   */
  reported?: { amountMinor: number | null; currency?: string | null } | null;
  /** The provider's receipt of the money moved, from a paid result (what a refund of the payment reverses). */
  receipt?: string | null;
}

/** mismatch: the refusal is the provider reporting another amount or currency than the payment's (logged as a warning). */
export type MoveOutcome =
  | {
      applied: true;
      payment: PaymentSummary;
      /** A move into paid of a payment whose subject's family was told: what it did, and its step for after the commit. */
      subject?: { outcome: string; afterCommit?: AfterPaid };
    }
  | { applied: false; refusal: string; payment: PaymentSummary; mismatch: boolean };

/**
 * Applies one move of a payment, or refuses it. On the payment's row locked for the transaction:
 * a move the state table does not have is refused, recorded on the timeline with its source and
 * never applied; so is a move into partly_refunded or refunded asked for directly (those follow
 * from refunds settling, which is the only way money goes back), and a refund's cancel once it is
 * past draft (it may be at the provider already). An applied move writes its
 * timeline row and its ledger legs (domain/payments/ledger.ts) in the same transaction. A refund
 * that settles moves its parent to partly_refunded or refunded; one that fails, expires or is
 * cancelled gives its amount back to the parent's refundable headroom, and one taken from failed to
 * pending again takes it again (refused when it is no longer there). A payment (not a refund) moved
 * into paid tells its subject's family through `paidSubjects` (services/payments/subjects.ts), in
 * this transaction.
 */
export async function recordMove(em: EntityManager, input: MoveInput, opts: { paidSubjects?: PaidSubjects } = {}): Promise<MoveOutcome> {
  const key = paymentKey(input.payment);
  if (!key) throw notFound('Payment');
  return em.transactional(async (tx) => {
    const row = await readPaymentRow(tx, input.accountId, key, true);
    if (!row) throw notFound('Payment');
    // Checked before refusalOf, which takes a refund's headroom when the move may be made.
    const mismatch = canMove(row.state, input.to) ? mismatchOf(row, input) : null;
    const refusal = mismatch ?? (await refusalOf(tx, row, input.to));
    if (refusal) {
      await insertEvent(tx, {
        accountId: row.account_id,
        paymentId: row.id,
        oldState: row.state,
        newState: row.state,
        refused: input.to,
        source: input.source,
        message: input.message ? `${refusal} (${input.message})` : refusal,
      });
      return { applied: false, refusal, payment: paymentSummary(row), mismatch: mismatch !== null };
    }
    const moved = await applyMove(tx, row, input.to, input.source, input.message ?? null, {
      ...(input.providerRef !== undefined ? { providerRef: input.providerRef } : {}),
      ...(input.receipt ? { receipt: input.receipt } : {}),
      ...(input.lastError !== undefined
        ? { lastError: input.lastError }
        : input.to === 'failed' && input.message
          ? { lastError: input.message }
          : {}),
    });
    if (row.is_refund && row.refund_of) await followRefund(tx, row, moved.state, input.source);
    const told = moved.state === 'paid' && !moved.is_refund ? await tellSubject(tx, moved, opts.paidSubjects) : null;
    return { applied: true, payment: paymentSummary(moved), ...(told ? { subject: told } : {}) };
  });
}

/**
 * A paid result whose amount or currency is not the payment's (null when it is, or when the provider
 * did not say). Refused rather than applied: the payment stays open for the operator to look at, as
 * a Stripe or M-Pesa integrator checks the amount before fulfilling; it is not failed either, since
 * money did move and a failed payment may be pushed again.
 */
function mismatchOf(row: PaymentRow, input: MoveInput): string | null {
  const r = input.reported;
  if (input.to !== 'paid' || !r) return null;
  if (r.currency && r.currency.toUpperCase() !== row.currency)
    return `Refused: the provider reported a payment in ${r.currency}; the payment is in ${row.currency}.`;
  if (r.amountMinor !== null && r.amountMinor !== Number(row.amount_minor))
    return (
      `Refused: the provider reported ${displayAmount(r.amountMinor, row.currency)} paid ` +
      `(${r.amountMinor} minor units); the payment is ${displayAmount(Number(row.amount_minor), row.currency)} (${row.amount_minor}).`
    );
  return null;
}

/** Why a move cannot be made (null when it can). Takes a refund's headroom again when it goes back to an open state. */
async function refusalOf(tx: EntityManager, row: PaymentRow, to: PaymentState): Promise<string | null> {
  if (!canMove(row.state, to)) return `Refused: ${row.state} → ${to} is not a move of the payment state table.`;
  if (to === 'partly_refunded' || to === 'refunded')
    return `Refused: ${to} follows from a refund settling; request a refund instead of moving the payment.`;
  if (row.is_refund && to === 'cancelled' && !refundCancellable(row.state))
    return (
      `Refused: a refund can be cancelled only in draft, before it is sent to the provider; ${row.reference} is ${row.state}` +
      (row.state === 'failed'
        ? ' (its amount is refundable again already).'
        : ' (its reversal may already be made at the provider: its result settles it).')
    );
  if (row.is_refund && row.refund_of && !refundHolds(row.state) && refundHolds(to)) {
    const took = await takeRefundHeadroom(tx, row.account_id, row.refund_of, Number(row.amount_minor));
    if (!took)
      return `Refused: the payment this refunds no longer has ${displayAmount(Number(row.amount_minor), row.currency)} refundable.`;
  }
  return null;
}

/** The move itself: the row, its timeline row, its ledger legs. */
async function applyMove(
  tx: EntityManager,
  row: PaymentRow,
  to: PaymentState,
  source: string,
  message: string | null,
  patch: Parameters<typeof setState>[4],
): Promise<PaymentRow> {
  const moved = await setState(tx, row.id, row.state, to, patch);
  // The row is locked for this transaction, so its state cannot have changed since it was read.
  if (!moved) throw new Error(`payment ${row.id} was not in ${row.state}`);
  await insertEvent(tx, { accountId: row.account_id, paymentId: row.id, oldState: row.state, newState: to, source, message });
  const legs = ledgerLegs({ to, isRefund: row.is_refund, amountMinor: Number(row.amount_minor) });
  await appendLedger(tx, row.account_id, row.id, row.currency, legs);
  await emitMoveEvent(tx, moved);
  return moved;
}

/** What a refund's move does to the payment it refunds: headroom given back, or the parent's state following its settled refunds. */
async function followRefund(tx: EntityManager, refund: PaymentRow, to: PaymentState, source: string): Promise<void> {
  const parentId = refund.refund_of!;
  const amount = Number(refund.amount_minor);
  if (refundHolds(refund.state) && !refundHolds(to)) await giveRefundHeadroomBack(tx, parentId, amount);
  if (to !== 'paid') return;
  const parent = (await readPaymentRow(tx, refund.account_id, { id: parentId }, true))!;
  const settled = await settledRefundsMinor(tx, parentId);
  const next: PaymentState = settled >= Number(parent.amount_minor) ? 'refunded' : 'partly_refunded';
  if (!canMove(parent.state, next)) return;
  await applyMove(
    tx,
    parent,
    next,
    'refund',
    `Refund ${refund.reference} of ${displayAmount(amount, refund.currency)} settled (${source})`,
    {},
  );
}

/** Tells a paid payment's subject's family, when the payment names a subject and its type has one. */
async function tellSubject(tx: EntityManager, moved: PaymentRow, subjects: PaidSubjects | undefined) {
  const hook = moved.subject_type && moved.subject_id ? subjects?.[moved.subject_type] : undefined;
  return hook ? hook(tx, { accountId: moved.account_id, payment: paymentSummary(moved) }) : null;
}

/** The business event of each move of a payment (a refund tells through its parent's `payment.refunded`). */
const EVENT_OF: Partial<Record<PaymentState, string>> = {
  pending: 'payment.pending',
  authorised: 'payment.authorised',
  paid: 'payment.paid',
  failed: 'payment.failed',
  expired: 'payment.expired',
  cancelled: 'payment.cancelled',
  partly_refunded: 'payment.refunded',
  refunded: 'payment.refunded',
};

/** Logs the move in the account's business events (declared live=false), in the move's transaction. */
async function emitMoveEvent(tx: EntityManager, moved: PaymentRow): Promise<void> {
  const type = moved.is_refund ? undefined : EVENT_OF[moved.state];
  if (!type) return;
  const p = paymentSummary(moved);
  await emitBusinessEvent(
    tx,
    moved.account_id,
    type,
    {
      payment_id: p.id,
      reference: p.reference,
      state: p.state,
      amount_minor: p.amount_minor,
      currency: p.currency,
      refunded_minor: p.refunded_minor,
      subject_type: p.subject_type,
      subject_id: p.subject_id,
    },
    'payments',
  );
}

/**
 * Marks push number `push` of a payment's workflow as begun, before the provider is called. before:
 * an earlier attempt of the same push had marked it and never recorded that nothing was pushed (its
 * worker stopped mid-call), with the provider's id when that attempt stored one.
 */
export async function markPushStarted(
  em: EntityManager,
  accountId: number,
  paymentId: string,
  push: number,
): Promise<{ before: false } | { before: true; providerRef: string | null }> {
  if (await startPush(em, accountId, paymentId, push)) return { before: false };
  return { before: true, providerRef: await providerRefOf(em, accountId, paymentId) };
}

/** Takes back the mark of push `push`: the provider answered that nothing was pushed (503, throttled), so it may be tried again. */
export async function unmarkPush(em: EntityManager, accountId: number, paymentId: string, push: number): Promise<void> {
  await unstartPush(em, accountId, paymentId, push);
}
