// Reconciliation (issue 26 point 5; docs/payments.md "Reconciliation"): our ledger against the
// payment provider's report of what it settled, as ledgers reconcile against a bank statement
// (Modern Treasury, Formance: every movement has an external id, and each side is matched on it).
//
// Our side is the provider_clearing leg of each settled payment and refund (what we say the
// provider holds for the business); the provider's side is its report's lines. They are matched per
// kind (a payment's charge against money paid in; a refund against a reversal) on the provider's
// receipt of the money when our payment keeps one (`provider_receipt`: what Safaricom's statement
// names every line by), else on the provider's id of the request that moved the money
// (`provider_ref`: a push's attempt id, a refund's, which only the simulator's statement carries).
// Within a period, three disagreements are found:
//
// - missing_at_provider: we settled money the provider's report does not show;
// - missing_in_ours: the provider settled money our ledger does not have (a payment we still think
//   open or failed, or money naming no payment of ours at all);
// - amount_differs: both have it, for different amounts (or currencies, where the report names one).
//
// Only what happened inside the period is judged, but each side is looked for beyond it: a payment
// the provider completed at 10:59 may reach our ledger at 11:02, so the caller hands in the
// provider's lines of a wider period and our legs of every payment the period's lines name.

export type MismatchKind = 'missing_at_provider' | 'missing_in_ours' | 'amount_differs';
export const MISMATCH_KINDS: readonly MismatchKind[] = ['missing_at_provider', 'missing_in_ours', 'amount_differs'];

/** A payment's money in from its payer, or a refund's money back. */
export type SettlementKind = 'payment' | 'reversal';
export const SETTLEMENT_KINDS: readonly SettlementKind[] = ['payment', 'reversal'];

/** One of our settlements: a payment's (or refund's) provider_clearing legs, summed. */
export interface OurSettlement {
  accountId: number;
  paymentId: string;
  reference: string;
  /** Null for a payment that never reached a provider (nothing there to match it with). */
  providerRef: string | null;
  /** The provider's receipt of the money (a paid result's; a refund's reversal), when the payment keeps one. */
  receipt: string | null;
  kind: SettlementKind;
  amountMinor: number;
  currency: string;
  occurredAt: Date;
}

/** One line of the provider's report (providers' SettlementLine, in the fields compared). */
export interface TheirSettlement {
  providerRef: string | null;
  receipt: string;
  kind: SettlementKind;
  amountMinor: number;
  currency: string | null;
  completedAt: Date;
  payer: string | null;
}

/** A payment of ours a report line names, whatever its state (to say whose money a line is). */
export interface KnownPayment {
  accountId: number;
  paymentId: string;
  reference: string;
  providerRef: string | null;
  receipt: string | null;
  isRefund: boolean;
  state: string;
  currency: string;
}

export interface Mismatch {
  kind: MismatchKind;
  settlement: SettlementKind;
  /** Stable across runs: the same disagreement found again is the same key (recorded once). */
  key: string;
  /** Whose money: null when the line names no payment of ours. */
  accountId: number | null;
  paymentId: string | null;
  reference: string | null;
  /** Our payment's state when it has no settlement for a line (missing_in_ours); null otherwise. */
  paymentState: string | null;
  providerRef: string | null;
  receipt: string | null;
  ourAmountMinor: number | null;
  providerAmountMinor: number | null;
  /** Ours (the line's when we have none; null when it names none). */
  currency: string | null;
  /** The line's, where it names one that is not ours. */
  providerCurrency: string | null;
  payer: string | null;
  /** When the money moved: the provider's completion, else our ledger's entry. */
  occurredAt: Date;
}

export interface Comparison {
  /** Our settlements inside the period, and the report's lines inside it. */
  ours: number;
  theirs: number;
  /** Settlements both sides have for the same amount, counted once whichever side was in the period. */
  matched: number;
  mismatches: Mismatch[];
}

export interface Period {
  from: Date;
  to: Date;
}

const inPeriod = (at: Date, p: Period) => at >= p.from && at < p.to;

/**
 * The key a settlement is grouped and recorded under: its provider id per kind, else what names it
 * on its own side only. A line our settlement claims by its receipt takes our settlement's key, so a
 * disagreement keeps one key whichever way its line was matched.
 */
const ourKey = (s: OurSettlement) => `${s.kind}:${s.providerRef !== null ? `ref:${s.providerRef}` : `payment:${s.paymentId}`}`;
const theirKey = (l: TheirSettlement) => `${l.kind}:${l.providerRef !== null ? `ref:${l.providerRef}` : `receipt:${l.receipt}`}`;
const receiptKey = (kind: SettlementKind, receipt: string) => `${kind}:receipt:${receipt}`;

/** Settlements of one key added up (a payment settles once; a sum keeps a second leg or line visible as a difference). */
function grouped<T extends { amountMinor: number }>(items: readonly T[], keyOf: (t: T) => string) {
  const out = new Map<string, { first: T; amountMinor: number; all: T[] }>();
  for (const t of items) {
    const k = keyOf(t);
    const g = out.get(k);
    if (g) {
      g.amountMinor += t.amountMinor;
      g.all.push(t);
    } else out.set(k, { first: t, amountMinor: t.amountMinor, all: [t] });
  }
  return out;
}

/**
 * Compares our settlements with the provider's lines over `period`. `ours` and `theirs` may reach
 * beyond the period (the caller's margin); a disagreement is reported when the side that has the
 * money has it inside the period, so the same disagreement is found by every run whose period
 * holds it, under the same key. `known` names the payments the lines point at (any state, any time).
 */
export function compareSettlements(
  ours: readonly OurSettlement[],
  theirs: readonly TheirSettlement[],
  known: readonly KnownPayment[],
  period: Period,
): Comparison {
  const ourGroups = grouped(ours, ourKey);
  // A line is ours by its receipt first (Safaricom's statement names nothing else), then by the
  // request's id (theirKey is then our key too).
  const byReceipt = new Map(ours.flatMap((s) => (s.receipt !== null ? [[receiptKey(s.kind, s.receipt), ourKey(s)] as const] : [])));
  const theirGroups = grouped(theirs, (l) => byReceipt.get(receiptKey(l.kind, l.receipt)) ?? theirKey(l));
  const kindOf = (k: KnownPayment): SettlementKind => (k.isRefund ? 'reversal' : 'payment');
  const knownAs = new Map<string, KnownPayment>();
  for (const k of known) if (k.providerRef !== null) knownAs.set(`${kindOf(k)}:ref:${k.providerRef}`, k);
  for (const k of known) if (k.receipt !== null) knownAs.set(receiptKey(kindOf(k), k.receipt), k);
  const knownFor = (l: TheirSettlement) =>
    knownAs.get(receiptKey(l.kind, l.receipt)) ?? (l.providerRef !== null ? knownAs.get(`${l.kind}:ref:${l.providerRef}`) : undefined);
  const mismatches: Mismatch[] = [];
  let matched = 0;

  for (const [key, mine] of ourGroups) {
    const s = mine.first;
    const held = mine.all.some((x) => inPeriod(x.occurredAt, period));
    const line = theirGroups.get(key);
    const lineHeld = line?.all.some((x) => inPeriod(x.completedAt, period)) ?? false;
    if (!held && !lineHeld) continue;
    const base = {
      settlement: s.kind,
      accountId: s.accountId,
      paymentId: s.paymentId,
      reference: s.reference,
      paymentState: null,
      providerRef: s.providerRef,
      ourAmountMinor: mine.amountMinor,
    };
    if (!line) {
      mismatches.push({
        ...base,
        kind: 'missing_at_provider',
        key: `missing_at_provider:${key}`,
        receipt: s.receipt,
        providerAmountMinor: null,
        currency: s.currency,
        providerCurrency: null,
        payer: null,
        occurredAt: s.occurredAt,
      });
      continue;
    }
    const l = line.first;
    const currencyDiffers = l.currency !== null && l.currency !== s.currency;
    if (line.amountMinor !== mine.amountMinor || currencyDiffers) {
      mismatches.push({
        ...base,
        kind: 'amount_differs',
        key: `amount_differs:${key}`,
        receipt: l.receipt,
        providerAmountMinor: line.amountMinor,
        currency: s.currency,
        providerCurrency: currencyDiffers ? l.currency : null,
        payer: l.payer,
        occurredAt: l.completedAt,
      });
    } else matched++;
  }

  for (const [key, line] of theirGroups) {
    if (ourGroups.has(key) || !line.all.some((x) => inPeriod(x.completedAt, period))) continue;
    const l = line.first;
    const k = knownFor(l);
    mismatches.push({
      kind: 'missing_in_ours',
      settlement: l.kind,
      key: `missing_in_ours:${key}`,
      accountId: k?.accountId ?? null,
      paymentId: k?.paymentId ?? null,
      reference: k?.reference ?? null,
      paymentState: k?.state ?? null,
      providerRef: l.providerRef,
      receipt: l.receipt,
      ourAmountMinor: null,
      providerAmountMinor: line.amountMinor,
      // A report that names no currency is in the payment's own (one shortcode, one currency).
      currency: l.currency ?? k?.currency ?? null,
      providerCurrency: null,
      payer: l.payer,
      occurredAt: l.completedAt,
    });
  }

  return {
    ours: ours.filter((s) => inPeriod(s.occurredAt, period)).length,
    theirs: theirs.filter((l) => inPeriod(l.completedAt, period)).length,
    matched,
    mismatches,
  };
}
