import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  compareSettlements,
  type KnownPayment,
  type OurSettlement,
  type Period,
  type TheirSettlement,
} from '../../domain/payments/index.js';

// Reconciliation's pure comparison (issue 26 point 5): our provider_clearing settlements against the
// provider's report lines, matched per kind on the receipt our payment keeps, else on the provider's
// id of the request, judged inside a period with each side looked for beyond it.

const at = (hhmm: string) => new Date(`2026-11-27T${hhmm}:00Z`);
const PERIOD: Period = { from: at('10:00'), to: at('11:00') };

const ours = (ref: string | null, o: Partial<OurSettlement> = {}): OurSettlement => ({
  accountId: 7,
  paymentId: `pay-${ref ?? 'none'}`,
  reference: `PAY-20261127-${ref ?? '0'}`,
  providerRef: ref,
  receipt: null,
  kind: 'payment',
  amountMinor: 150_000,
  currency: 'KES',
  occurredAt: at('10:30'),
  ...o,
});
const line = (ref: string | null, o: Partial<TheirSettlement> = {}): TheirSettlement => ({
  providerRef: ref,
  receipt: `R${ref ?? 'X'}`,
  kind: 'payment',
  amountMinor: 150_000,
  currency: null,
  completedAt: at('10:29'),
  payer: '+254700000001',
  ...o,
});
const known = (ref: string, o: Partial<KnownPayment> = {}): KnownPayment => ({
  accountId: 7,
  paymentId: `pay-${ref}`,
  reference: `PAY-20261127-${ref}`,
  providerRef: ref,
  receipt: null,
  isRefund: false,
  state: 'paid',
  currency: 'KES',
  ...o,
});

test('the same money on both sides matches: no mismatch', () => {
  const c = compareSettlements(
    [ours('a'), ours('b', { kind: 'reversal', amountMinor: 40_000 })],
    [line('a'), line('b', { kind: 'reversal', amountMinor: 40_000 })],
    [],
    PERIOD,
  );
  assert.deepEqual(c, { ours: 2, theirs: 2, matched: 2, mismatches: [] });
});

test('settled in ours, absent from the report: missing_at_provider, our payment named', () => {
  const c = compareSettlements([ours('a')], [], [], PERIOD);
  assert.equal(c.matched, 0);
  assert.equal(c.mismatches.length, 1);
  const m = c.mismatches[0]!;
  assert.deepEqual(
    [m.kind, m.settlement, m.key, m.accountId, m.paymentId, m.ourAmountMinor, m.providerAmountMinor, m.receipt],
    ['missing_at_provider', 'payment', 'missing_at_provider:payment:ref:a', 7, 'pay-a', 150_000, null, null],
  );
});

test('in the report, absent from ours: missing_in_ours, for the account whose payment the line names, or for nobody', () => {
  const c = compareSettlements(
    [],
    [line('a'), line(null, { receipt: 'QWERTY1234', payer: '+254711111111', amountMinor: 5_000 })],
    [known('a', { state: 'pending', accountId: 9 })],
    PERIOD,
  );
  const [named, nobody] = c.mismatches;
  assert.deepEqual(
    [
      named!.kind,
      named!.accountId,
      named!.paymentId,
      named!.paymentState,
      named!.providerAmountMinor,
      named!.currency,
      named!.receipt,
      named!.key,
    ],
    ['missing_in_ours', 9, 'pay-a', 'pending', 150_000, 'KES', 'Ra', 'missing_in_ours:payment:ref:a'],
  );
  assert.deepEqual(
    [
      nobody!.kind,
      nobody!.accountId,
      nobody!.paymentId,
      nobody!.providerRef,
      nobody!.currency,
      nobody!.receipt,
      nobody!.key,
      nobody!.payer,
    ],
    ['missing_in_ours', null, null, null, null, 'QWERTY1234', 'missing_in_ours:payment:receipt:QWERTY1234', '+254711111111'],
  );
  assert.equal(c.theirs, 2);
});

test('both sides, different amounts: amount_differs with both amounts and the receipt; a different currency too', () => {
  const c = compareSettlements([ours('a'), ours('b')], [line('a', { amountMinor: 140_000 }), line('b', { currency: 'TZS' })], [], PERIOD);
  assert.deepEqual(
    c.mismatches.map((m) => [m.kind, m.providerRef, m.ourAmountMinor, m.providerAmountMinor, m.currency, m.providerCurrency, m.receipt]),
    [
      ['amount_differs', 'a', 150_000, 140_000, 'KES', null, 'Ra'],
      ['amount_differs', 'b', 150_000, 150_000, 'KES', 'TZS', 'Rb'],
    ],
  );
  assert.equal(compareSettlements([ours('c')], [line('c', { currency: 'KES' })], [], PERIOD).matched, 1, 'the same currency matches');
});

test('a payment and a reversal under the same provider id are not each other', () => {
  const c = compareSettlements([ours('a', { kind: 'reversal' })], [line('a')], [known('a')], PERIOD);
  assert.deepEqual(
    c.mismatches.map((m) => [m.kind, m.settlement]),
    [
      ['missing_at_provider', 'reversal'],
      ['missing_in_ours', 'payment'],
    ],
  );
});

test('each side is found beyond the period: a line at 10:59 whose ledger entry came at 11:02 matches, from either period', () => {
  const late = ours('a', { occurredAt: at('11:02') });
  const early = line('a', { completedAt: at('10:59') });
  assert.deepEqual(compareSettlements([late], [early], [], PERIOD), { ours: 0, theirs: 1, matched: 1, mismatches: [] });
  const next = { from: at('11:00'), to: at('12:00') };
  assert.deepEqual(compareSettlements([late], [early], [], next), { ours: 1, theirs: 0, matched: 1, mismatches: [] });
});

test('what happened outside the period on both sides is not judged; the same disagreement has the same key in every period holding it', () => {
  const outside = compareSettlements([ours('a', { occurredAt: at('09:30') })], [line('b', { completedAt: at('11:30') })], [], PERIOD);
  assert.deepEqual(outside, { ours: 0, theirs: 0, matched: 0, mismatches: [] });
  const overlapping = [PERIOD, { from: at('10:15'), to: at('11:15') }].map(
    (p) => compareSettlements([ours('a')], [line('a', { amountMinor: 1 })], [], p).mismatches[0]!.key,
  );
  assert.deepEqual(overlapping, ['amount_differs:payment:ref:a', 'amount_differs:payment:ref:a']);
});

test('two lines for one provider id add up: a payment the provider settled twice shows as a difference', () => {
  const c = compareSettlements([ours('a')], [line('a'), line('a', { receipt: 'Ra2' })], [], PERIOD);
  assert.deepEqual(
    c.mismatches.map((m) => [m.kind, m.ourAmountMinor, m.providerAmountMinor]),
    [['amount_differs', 150_000, 300_000]],
  );
});

test('our settlement with no provider id is judged on its own: missing_at_provider under the payment’s id', () => {
  const c = compareSettlements([ours(null)], [], [], PERIOD);
  assert.deepEqual(
    c.mismatches.map((m) => m.key),
    ['missing_at_provider:payment:payment:pay-none'],
  );
});

// Safaricom's own statement names every line by its M-Pesa receipt alone (no request id column).
const safaricom = (receipt: string, o: Partial<TheirSettlement> = {}) => line(null, { receipt, ...o });

test('a line with no provider id matches our settlement by its receipt: payments and reversals, keyed as ours', () => {
  const c = compareSettlements(
    [ours('a', { receipt: 'SKR1AAAAAA' }), ours('b', { kind: 'reversal', amountMinor: 40_000, receipt: 'SKR1BBBBBB' })],
    [safaricom('SKR1AAAAAA'), safaricom('SKR1BBBBBB', { kind: 'reversal', amountMinor: 40_000 })],
    [],
    PERIOD,
  );
  assert.deepEqual(c, { ours: 2, theirs: 2, matched: 2, mismatches: [] });

  // A difference found by the receipt is recorded under our settlement's key, the one the request's id gives.
  const differs = compareSettlements(
    [ours('a', { receipt: 'SKR1AAAAAA' })],
    [safaricom('SKR1AAAAAA', { amountMinor: 140_000 })],
    [],
    PERIOD,
  );
  assert.deepEqual(
    differs.mismatches.map((m) => [m.kind, m.key, m.paymentId, m.receipt, m.ourAmountMinor, m.providerAmountMinor]),
    [['amount_differs', 'amount_differs:payment:ref:a', 'pay-a', 'SKR1AAAAAA', 150_000, 140_000]],
  );
  const viaRef = compareSettlements(
    [ours('a', { receipt: 'SKR1AAAAAA' })],
    [line('a', { receipt: 'SKR1AAAAAA', amountMinor: 140_000 })],
    [],
    PERIOD,
  );
  assert.equal(viaRef.mismatches[0]!.key, differs.mismatches[0]!.key, 'the same key whichever column named the line');
});

test('the receipt first, the provider id when our payment keeps no receipt; a receipt of another kind is not a match', () => {
  // Paid by a status poll alone: no receipt kept, so only the simulator's request id can match it.
  assert.equal(compareSettlements([ours('a')], [line('a', { receipt: 'SKR1AAAAAA' })], [], PERIOD).matched, 1);
  const unmatched = compareSettlements([ours('a')], [safaricom('SKR1AAAAAA')], [], PERIOD);
  assert.deepEqual(
    unmatched.mismatches.map((m) => [m.kind, m.key]),
    [
      ['missing_at_provider', 'missing_at_provider:payment:ref:a'],
      ['missing_in_ours', 'missing_in_ours:payment:receipt:SKR1AAAAAA'],
    ],
  );
  // Our receipt names the line even when the line's request id names another payment.
  const both = compareSettlements([ours('a', { receipt: 'SKR1AAAAAA' }), ours('b')], [line('b', { receipt: 'SKR1AAAAAA' })], [], PERIOD);
  assert.deepEqual(
    both.mismatches.map((m) => [m.kind, m.paymentId]),
    [['missing_at_provider', 'pay-b']],
  );
  const otherKind = compareSettlements([ours('a', { kind: 'reversal', receipt: 'SKR1AAAAAA' })], [safaricom('SKR1AAAAAA')], [], PERIOD);
  assert.deepEqual(
    otherKind.mismatches.map((m) => [m.kind, m.settlement]),
    [
      ['missing_at_provider', 'reversal'],
      ['missing_in_ours', 'payment'],
    ],
  );
});

test('missing_at_provider carries our receipt; missing_in_ours names the payment whose receipt the line has', () => {
  const gone = compareSettlements([ours('a', { receipt: 'SKR1AAAAAA' })], [], [], PERIOD);
  assert.equal(gone.mismatches[0]!.receipt, 'SKR1AAAAAA');
  // A payment expired before its late callback came: the callback kept its receipt, our ledger has no charge.
  const late = compareSettlements(
    [],
    [safaricom('SKR1CCCCCC')],
    [known('c', { receipt: 'SKR1CCCCCC', state: 'expired', accountId: 9 }), known('d', { receipt: 'SKR1DDDDDD' })],
    PERIOD,
  );
  assert.deepEqual(
    late.mismatches.map((m) => [m.kind, m.accountId, m.paymentId, m.paymentState, m.key]),
    [['missing_in_ours', 9, 'pay-c', 'expired', 'missing_in_ours:payment:receipt:SKR1CCCCCC']],
  );
  const refundLine = compareSettlements(
    [],
    [safaricom('SKR1EEEEEE', { kind: 'reversal' })],
    [known('e', { receipt: 'SKR1EEEEEE', isRefund: true })],
    PERIOD,
  );
  assert.deepEqual(
    refundLine.mismatches.map((m) => [m.settlement, m.paymentId]),
    [['reversal', 'pay-e']],
  );
});
