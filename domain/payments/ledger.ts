import type { PaymentState } from './states.js';

// The ledger rules (Resources > Payment, ledger[]; docs/payments.md "Ledger"): double entry, every
// leg names an account and a direction, and the legs of one move balance (debits = credits). Only
// a move that moves money writes legs; the rest of the walk (requested, pushed, authorised, failed,
// expired, cancelled) moves none.
//
// Accounts, from the business's side:
// - provider_clearing: what the payment provider holds for the business (an asset; debits add).
// - customer_payments: what the business's customers have paid it (income; credits add, refunds debit).
//
// A payment that settles (→ paid) collects its amount: debit provider_clearing, credit
// customer_payments. A refund is a payment of its own (is_refund, refund_of); when it settles it
// gives its amount back: debit customer_payments, credit provider_clearing. Its parent's move to
// partly_refunded or refunded follows from the refund and moves no money of its own, so the money
// is counted once, on the refund's ledger.

export const LEDGER_ACCOUNTS = ['provider_clearing', 'customer_payments'] as const;
export type LedgerAccount = (typeof LEDGER_ACCOUNTS)[number];
export const LEDGER_DIRECTIONS = ['debit', 'credit'] as const;
export type LedgerDirection = (typeof LEDGER_DIRECTIONS)[number];
export const LEDGER_KINDS = ['charge', 'refund'] as const;
export type LedgerKind = (typeof LEDGER_KINDS)[number];

export interface LedgerLeg {
  kind: LedgerKind;
  direction: LedgerDirection;
  account: LedgerAccount;
  amountMinor: number;
}

export interface MoneyMove {
  to: PaymentState;
  isRefund: boolean;
  amountMinor: number;
}

/** The legs a move writes, in entry order (debit first); none for a move that moves no money. */
export function ledgerLegs(move: MoneyMove): LedgerLeg[] {
  if (move.to !== 'paid' || move.amountMinor <= 0) return [];
  const [from, to]: [LedgerAccount, LedgerAccount] = move.isRefund
    ? ['customer_payments', 'provider_clearing']
    : ['provider_clearing', 'customer_payments'];
  const kind: LedgerKind = move.isRefund ? 'refund' : 'charge';
  return [
    { kind, direction: 'debit', account: from, amountMinor: move.amountMinor },
    { kind, direction: 'credit', account: to, amountMinor: move.amountMinor },
  ];
}

/** Debits minus credits of some legs (0 when they balance). */
export function imbalance(legs: readonly Pick<LedgerLeg, 'direction' | 'amountMinor'>[]): number {
  return legs.reduce((sum, l) => sum + (l.direction === 'debit' ? l.amountMinor : -l.amountMinor), 0);
}

/** Each account's balance, debits positive, from some legs. */
export function balances(legs: readonly Pick<LedgerLeg, 'direction' | 'account' | 'amountMinor'>[]): Map<string, number> {
  const out = new Map<string, number>();
  for (const l of legs) out.set(l.account, (out.get(l.account) ?? 0) + (l.direction === 'debit' ? l.amountMinor : -l.amountMinor));
  return out;
}
