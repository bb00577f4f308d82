import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  NEXT_STATES,
  OPEN_STATES,
  PAYMENT_STATES,
  SETTLED_STATES,
  balances,
  canMove,
  displayAmount,
  imbalance,
  isOpen,
  isSettled,
  ledgerLegs,
  newReference,
  nextStates,
  nextStatesOf,
  parseReference,
  paymentKey,
  refundCancellable,
  refundHolds,
  stateFilter,
  type PaymentState,
} from '../../domain/payments/index.js';

// The payment family's pure rules (issue 26): the contract's state table, the list's state filter,
// the reference, the display amount and the ledger legs of every move.

test('the state table is the contract’s, row by row', () => {
  assert.deepEqual(NEXT_STATES, {
    draft: ['pending', 'cancelled', 'expired'],
    pending: ['authorised', 'paid', 'failed', 'expired', 'cancelled'],
    authorised: ['paid', 'failed', 'expired', 'cancelled'],
    paid: ['partly_refunded', 'refunded'],
    partly_refunded: ['partly_refunded', 'refunded'],
    failed: ['pending', 'cancelled'],
    expired: [],
    cancelled: [],
    refunded: [],
  });
  assert.equal(canMove('partly_refunded', 'partly_refunded'), true, 'another partial refund');
  assert.equal(canMove('failed', 'pending'), true, 'a retry');
  for (const from of PAYMENT_STATES)
    for (const to of PAYMENT_STATES) assert.equal(canMove(from, to), nextStates(from).includes(to), `${from} → ${to}`);
  assert.equal(canMove('draft', 'paid'), false);
  assert.equal(canMove('refunded', 'paid'), false);
  assert.equal(canMove('expired', 'pending'), false);
});

test('open and settled are the contract’s sets', () => {
  assert.deepEqual(
    PAYMENT_STATES.filter((s) => isOpen(s)),
    ['draft', 'pending', 'authorised'],
  );
  assert.deepEqual(
    PAYMENT_STATES.filter((s) => isSettled(s)),
    ['paid', 'partly_refunded', 'refunded'],
  );
  assert.deepEqual([...OPEN_STATES], ['draft', 'pending', 'authorised']);
  assert.deepEqual([...SETTLED_STATES], ['paid', 'partly_refunded', 'refunded']);
  // A refund holds headroom while it can still settle, and gives it back otherwise.
  assert.deepEqual(
    PAYMENT_STATES.filter((s) => refundHolds(s)),
    ['draft', 'pending', 'authorised', 'paid'],
  );
});

test('next_states: a payment’s is the contract’s row; a refund is never refunded, nor cancelled once past draft', () => {
  for (const s of PAYMENT_STATES) assert.deepEqual(nextStatesOf(s, false), nextStates(s), s);
  assert.deepEqual(
    PAYMENT_STATES.filter((s) => refundCancellable(s)),
    ['draft'],
  );
  assert.deepEqual(nextStatesOf('draft', true), ['pending', 'cancelled', 'expired']);
  assert.deepEqual(nextStatesOf('pending', true), ['authorised', 'paid', 'failed', 'expired']);
  assert.deepEqual(nextStatesOf('failed', true), ['pending']);
  for (const s of SETTLED_STATES) assert.deepEqual(nextStatesOf(s, true), [], s);
});

test('the list’s state filter: open, one state, all, trimmed and lower-cased, unknown leaves it unfiltered', () => {
  assert.deepEqual(stateFilter('open'), ['draft', 'pending', 'authorised']);
  assert.deepEqual(stateFilter(' OPEN '), ['draft', 'pending', 'authorised']);
  assert.deepEqual(stateFilter(' PAID '), ['paid']);
  assert.deepEqual(stateFilter('Partly_Refunded'), ['partly_refunded']);
  assert.equal(stateFilter('all'), null);
  assert.equal(stateFilter(' ALL'), null);
  assert.equal(stateFilter('settled'), null);
  assert.equal(stateFilter('paid,failed'), null);
  assert.equal(stateFilter(''), null);
  assert.equal(stateFilter(undefined), null);
});

test('references: PAY-<yyyymmdd>-<8 digits>, parsed trimmed and upper-cased; UUIDs and references name payments, nothing else does', () => {
  const at = new Date('2026-11-27T23:59:59Z');
  assert.equal(newReference(at, 0), 'PAY-20261127-00000000');
  assert.equal(newReference(at, 99_999_999), 'PAY-20261127-99999999');
  assert.equal(newReference(at, 420), 'PAY-20261127-00000420');
  assert.match(newReference(new Date(), 123_456_789), /^PAY-\d{8}-\d{8}$/, 'never more than eight digits');
  assert.equal(parseReference(' pay-20261127-00000042 '), 'PAY-20261127-00000042');
  assert.equal(parseReference('PAY-1-2'), 'PAY-1-2', 'the contract’s shape is PAY-<digits>-<digits>');
  for (const bad of [
    'PAY-',
    'PAY-2026',
    'PAY-2026-',
    'PAY-x-1',
    'PAY--1',
    'PAY-1-2-3',
    'PAYMENT-1-2',
    `PAY-${'1'.repeat(17)}-1`,
    'PAY-١-٢',
  ])
    assert.equal(parseReference(bad), null, bad);
  assert.deepEqual(paymentKey('3F2504E0-4F89-41D3-9A0C-0305E82C3301'), { id: '3f2504e0-4f89-41d3-9a0c-0305e82c3301' });
  assert.deepEqual(paymentKey('pay-20261127-00000042'), { reference: 'PAY-20261127-00000042' });
  for (const bad of ['', '42', 'abc', '3f2504e0-4f89-41d3-9a0c', "PAY-1-2' or 1=1", '../PAY-1-2']) assert.equal(paymentKey(bad), null, bad);
});

test('display amounts: 100 minor units a major unit for every currency; TZS and zero-decimal currencies without decimals when whole', () => {
  assert.equal(displayAmount(1_200_000, 'TZS'), 'TZS 12,000');
  assert.equal(displayAmount(1_200_050, 'TZS'), 'TZS 12,000.50', 'a fraction is never hidden');
  assert.equal(displayAmount(1150, 'USD'), 'USD 11.50');
  assert.equal(displayAmount(5, 'USD'), 'USD 0.05');
  assert.equal(displayAmount(10_000, 'JPY'), 'JPY 100', 'JPY 100 is 10000 minor: the scale is 100 here too');
  assert.equal(displayAmount(125, 'KWD'), 'KWD 1.25', 'a three-decimal currency shows the two the scale holds');
  assert.equal(displayAmount(500_000, 'ugx'), 'UGX 5,000');
  assert.equal(displayAmount(Number.MAX_SAFE_INTEGER, 'USD'), 'USD 90,071,992,547,409.91', 'exact, never through a float division');
});

test('ledger legs: only a move into paid moves money, and every move’s legs balance', () => {
  const amount = 12_345;
  for (const isRefund of [false, true])
    for (const to of PAYMENT_STATES) {
      const legs = ledgerLegs({ to, isRefund, amountMinor: amount });
      assert.equal(imbalance(legs), 0, `${to} ${isRefund ? 'refund' : 'payment'} balances`);
      assert.equal(legs.length, to === 'paid' ? 2 : 0, `${to}: ${JSON.stringify(legs)}`);
    }
  assert.deepEqual(ledgerLegs({ to: 'paid', isRefund: false, amountMinor: amount }), [
    { kind: 'charge', direction: 'debit', account: 'provider_clearing', amountMinor: amount },
    { kind: 'charge', direction: 'credit', account: 'customer_payments', amountMinor: amount },
  ]);
  assert.deepEqual(ledgerLegs({ to: 'paid', isRefund: true, amountMinor: 300 }), [
    { kind: 'refund', direction: 'debit', account: 'customer_payments', amountMinor: 300 },
    { kind: 'refund', direction: 'credit', account: 'provider_clearing', amountMinor: 300 },
  ]);
  // A payment paid and refunded in two parts: the accounts net to zero once all is given back.
  const walk = [
    ...ledgerLegs({ to: 'paid', isRefund: false, amountMinor: 1000 }),
    ...ledgerLegs({ to: 'paid', isRefund: true, amountMinor: 400 }),
    ...ledgerLegs({ to: 'paid', isRefund: true, amountMinor: 600 }),
  ];
  assert.equal(imbalance(walk), 0);
  assert.deepEqual(
    [...balances(walk)],
    [
      ['provider_clearing', 0],
      ['customer_payments', 0],
    ],
  );
  const states: PaymentState[] = ['refunded', 'failed', 'cancelled', 'expired', 'authorised', 'pending', 'draft', 'partly_refunded'];
  for (const to of states) assert.deepEqual(ledgerLegs({ to, isRefund: false, amountMinor: 1 }), [], `${to} moves no money`);
});
