import type { EntityManager } from '@mikro-orm/postgresql';
import { many } from '../../../entities/db.js';
import { tablesOf, type Row } from '../../../entities/database.js';
import type { KnownPayment, Mismatch, MismatchKind, OurSettlement, SettlementKind } from '../../../domain/payments/index.js';

// Reconciliation's statements (docs/payments.md, "Reconciliation"): our provider_clearing legs of a
// period or of named provider ids, the payments a provider's lines name, and the mismatches,
// recorded once per provider and key.

export type MismatchRow = Row<'payments', 'payment_mismatches'>;

/** Whose payments a provider reconciles: those storing its key, and, for the configured provider, those storing none. */
export interface ProviderScope {
  provider: string;
  /** The configured provider: a payment that stores no provider is its. */
  configured: boolean;
  /** One account's only (an operator's run for an account). */
  accountId?: number;
}

interface SettlementRow {
  account_id: number;
  payment_id: string;
  reference: string;
  provider_ref: string | null;
  provider_receipt: string | null;
  kind: 'charge' | 'refund';
  amount_minor: string;
  currency: string;
  occurred_at: string;
}

// A payment reached the provider when it has the provider's id of its request or its receipt; one
// that never did (settled by hand, in tests) has nothing there to be matched with and is left out.
const SETTLEMENTS = `
  select l.account_id, l.payment_id, p.reference, p.provider_ref, p.provider_receipt, l.kind,
         sum(l.amount_minor)::text as amount_minor, l.currency, min(l.occurred_at)::text as occurred_at
    from ledger_entries l join payments p on p.id = l.payment_id
   where l.account = 'provider_clearing'
     and (p.provider_ref is not null or p.provider_receipt is not null)
     and (p.provider = ? or (p.provider is null and ?::boolean))
     and (?::int is null or l.account_id = ?::int)`;
const GROUPED = 'group by l.account_id, l.payment_id, p.reference, p.provider_ref, p.provider_receipt, l.kind, l.currency';

/** What names a payment at the provider: the id of its request, or its receipt of the money (a fixed column, never a request's key). */
export type ProviderName = 'provider_ref' | 'provider_receipt';
const NAMED_BY: Record<ProviderName, string> = { provider_ref: 'p.provider_ref', provider_receipt: 'p.provider_receipt' };

const scopeParams = (s: ProviderScope) => [s.provider, s.configured, s.accountId ?? null, s.accountId ?? null];

const settlementOf = (r: SettlementRow): OurSettlement => ({
  accountId: r.account_id,
  paymentId: r.payment_id,
  reference: r.reference,
  providerRef: r.provider_ref,
  receipt: r.provider_receipt,
  kind: r.kind === 'refund' ? 'reversal' : 'payment',
  amountMinor: Number(r.amount_minor),
  currency: r.currency,
  occurredAt: new Date(r.occurred_at),
});

/** Our settlements (provider_clearing legs, per payment and kind) entered in [from, to). */
export async function settlementsBetween(em: EntityManager, scope: ProviderScope, from: Date, to: Date): Promise<OurSettlement[]> {
  const rows = await many<SettlementRow>(em, `${SETTLEMENTS} and l.occurred_at >= ? and l.occurred_at < ? ${GROUPED}`, [
    ...scopeParams(scope),
    from,
    to,
  ]);
  return rows.map(settlementOf);
}

/** Our settlements of the payments these provider ids (or receipts) name, whenever they were entered. */
export async function settlementsNamed(
  em: EntityManager,
  scope: ProviderScope,
  by: ProviderName,
  names: readonly string[],
): Promise<OurSettlement[]> {
  if (!names.length) return [];
  const rows = await many<SettlementRow>(em, `${SETTLEMENTS} and ${NAMED_BY[by]} = any(?::text[]) ${GROUPED}`, [
    ...scopeParams(scope),
    names,
  ]);
  return rows.map(settlementOf);
}

/** The payments (refunds included) these provider ids (or receipts) name, in any state. */
export async function paymentsNamed(
  em: EntityManager,
  scope: ProviderScope,
  by: ProviderName,
  names: readonly string[],
): Promise<KnownPayment[]> {
  if (!names.length) return [];
  const rows = await many<{
    id: string;
    account_id: number;
    reference: string;
    provider_ref: string | null;
    provider_receipt: string | null;
    is_refund: boolean;
    state: string;
    currency: string;
  }>(
    em,
    `select p.id, p.account_id, p.reference, p.provider_ref, p.provider_receipt, p.is_refund, p.state, p.currency from payments p
      where ${NAMED_BY[by]} = any(?::text[]) and (p.provider = ? or (p.provider is null and ?::boolean))
        and (?::int is null or p.account_id = ?::int)`,
    [names, ...scopeParams(scope)],
  );
  return rows.map((r) => ({
    accountId: r.account_id,
    paymentId: r.id,
    reference: r.reference,
    providerRef: r.provider_ref,
    receipt: r.provider_receipt,
    isRefund: r.is_refund,
    state: r.state,
    currency: r.currency,
  }));
}

/** What a mismatch shows the operator (the list's required fields). */
export const MISMATCH_FIELDS = [
  'id',
  'provider',
  'kind',
  'settlement',
  'account_id',
  'payment_id',
  'reference',
  'provider_ref',
  'receipt',
  'our_amount_minor',
  'provider_amount_minor',
  'currency',
  'provider_currency',
  'payer',
  'occurred_at',
  'found_by',
  'found_at',
] as const;
/** What the store reads and returns of a mismatch: the fields shown, and its dedupe key. */
export const MISMATCH_COLUMNS = [...MISMATCH_FIELDS, 'key'] as const;
export type MismatchRecord = Pick<MismatchRow, (typeof MISMATCH_COLUMNS)[number]>;

/**
 * Records mismatches in one statement; one the provider already has under its key is skipped (on
 * conflict do nothing), so a run over a period already reconciled adds nothing. Answers the rows
 * recorded now.
 */
export async function insertMismatches(
  tx: EntityManager,
  provider: string,
  foundBy: string,
  mismatches: readonly Mismatch[],
): Promise<MismatchRecord[]> {
  if (!mismatches.length) return [];
  return many<MismatchRecord>(
    tx,
    `insert into payment_mismatches (provider, kind, settlement, key, account_id, payment_id, reference, provider_ref, receipt,
                                     our_amount_minor, provider_amount_minor, currency, provider_currency, payer, occurred_at,
                                     found_by, found_at)
     select ?, m.kind, m.settlement, m.key, m.account_id, m.payment_id, m.reference, m.provider_ref, m.receipt,
            m.our_amount_minor, m.provider_amount_minor, m.currency, m.provider_currency, m.payer, m.occurred_at, ?, now()
       from jsonb_to_recordset(?::jsonb) as m(kind text, settlement text, key text, account_id int, payment_id uuid,
              reference text, provider_ref text, receipt text, our_amount_minor bigint, provider_amount_minor bigint, currency text,
              provider_currency text, payer text, occurred_at timestamptz, ord bigint)
      order by m.ord
     on conflict (provider, key) do nothing
     returning ${MISMATCH_COLUMNS.join(', ')}`,
    [
      provider,
      foundBy,
      JSON.stringify(
        mismatches.map((m, i) => ({
          kind: m.kind,
          settlement: m.settlement,
          key: m.key,
          account_id: m.accountId,
          payment_id: m.paymentId,
          reference: m.reference,
          provider_ref: m.providerRef,
          receipt: m.receipt,
          our_amount_minor: m.ourAmountMinor,
          provider_amount_minor: m.providerAmountMinor,
          currency: m.currency,
          provider_currency: m.providerCurrency,
          payer: m.payer,
          occurred_at: m.occurredAt.toISOString(),
          ord: i,
        })),
      ),
    ],
  );
}

export interface MismatchFilter {
  accountId?: number;
  kind?: MismatchKind;
  settlement?: SettlementKind;
  provider?: string;
}

/** Mismatches newest first (of one account, kind, settlement or provider when given), one page, and how many in all. */
export async function mismatchPage(em: EntityManager, f: MismatchFilter, limit: number, offset: number) {
  let base = tablesOf(em, 'payments').selectFrom('payment_mismatches');
  if (f.accountId !== undefined) base = base.where('account_id', '=', f.accountId);
  if (f.kind) base = base.where('kind', '=', f.kind);
  if (f.settlement) base = base.where('settlement', '=', f.settlement);
  if (f.provider) base = base.where('provider', '=', f.provider);
  const [{ n }, rows] = await Promise.all([
    base.select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow(),
    base.select(MISMATCH_COLUMNS).orderBy('found_at', 'desc').orderBy('id', 'desc').limit(limit).offset(offset).execute(),
  ]);
  return { total: Number(n), rows };
}
