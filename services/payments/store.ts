import type { EntityManager } from '@mikro-orm/postgresql';
import { tablesOf, type Row } from '../../entities/database.js';
import { exec, many, manyPlanned, one } from '../../entities/db.js';
import type { LedgerLeg, PaymentState } from '../../domain/payments/index.js';
import type { AdmissionRow } from '../platform/context.js';

// The payments family's statements: the only code that names payments, payment_events and
// ledger_entries. The moves that must hold under concurrency are single guarded statements (the
// refund headroom) or run on a payment row locked for the transaction (a move, its timeline row and
// its ledger legs).

type Payment = Row<'payments', 'payments'>;

export const PAYMENT_COLUMNS = [
  'id',
  'account_id',
  'reference',
  'state',
  'amount_minor',
  'currency',
  'refunded_minor',
  'subject_id',
  'subject_type',
  'is_refund',
  'refund_of',
  'reason',
  'payer',
  'method',
  'provider',
  'attempts',
  'last_error',
  'expires_at',
  'settled_at',
  'checkout_url',
  'checkout_code',
  'created_by',
  'created_at',
  'updated_at',
] as const;
export type PaymentRow = Pick<Payment, (typeof PAYMENT_COLUMNS)[number]>;
const SELECTED = PAYMENT_COLUMNS.join(', ');

export interface PaymentFilter {
  /** The states kept; null keeps every state. */
  states: readonly PaymentState[] | null;
  subjectId?: string;
}

function filtered(em: EntityManager, accountId: number, f: PaymentFilter) {
  let q = tablesOf(em, 'payments').selectFrom('payments').where('account_id', '=', accountId);
  if (f.states) q = q.where('state', 'in', f.states);
  if (f.subjectId !== undefined) q = q.where('subject_id', '=', f.subjectId);
  return q;
}

/**
 * How many of the account's payments the filter keeps, and one page of them, newest first. With
 * `admission` (a subject's page only; RequestContext.admission) the one statement also makes the
 * request's authentication: it reads nothing unless the admission's `ok` has a row, and answers
 * the admission's row beside the page, which the caller settles before anything else.
 */
export async function paymentPage(
  em: EntityManager,
  accountId: number,
  f: PaymentFilter,
  limit: number,
  offset: number,
  admission?: { sql: string; params: unknown[] },
): Promise<{ total: number; rows: PaymentRow[]; admission?: AdmissionRow }> {
  if (f.subjectId !== undefined) return subjectPage(em, accountId, f.states, f.subjectId, limit, offset, admission);
  // Planned per request: the count (most of the time, up to a whole account's rows) is planned with
  // the literal states, so `open` finds its partial index, and with the literal limit.
  const [{ n }, rows] = await Promise.all([
    filtered(em, accountId, f)
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .executeTakeFirstOrThrow(),
    filtered(em, accountId, f)
      .select(PAYMENT_COLUMNS)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(limit)
      .offset(offset)
      .execute(),
  ]);
  return { total: Number(n), rows };
}

const SUBJECT_WHERE = 'account_id = ? and subject_id = ? and (?::varchar[] is null or state = any(?::varchar[]))';
/**
 * One record's payments: a few rows on payments_account_subject_index, so the total and the page
 * come from one statement planned once per connection (manyPlanned); planned per request, its
 * planning was most of its time (docs/benchmarks.md). `admitted` gates both on the admission's `ok`.
 */
const subjectPageSql = (admitted: boolean) => {
  const gate = admitted ? ' and exists (select from ok)' : '';
  const total = `(select count(*) as total from payments where ${SUBJECT_WHERE}${gate}) t`;
  const page = `(select ${SELECTED} from payments where ${SUBJECT_WHERE}${gate} order by created_at desc, id desc limit ? offset ?) p`;
  return admitted
    ? `select adm.*, t.total, p.* from adm cross join ${total} left join lateral ${page} on true
        where set_config('synchronous_commit', 'off', true) is not null`
    : `select t.total, p.* from ${total} left join lateral ${page} on true`;
};
const SUBJECT_PAGE_SQL = subjectPageSql(false);
const ADMITTED_SUBJECT_PAGE_SQL = subjectPageSql(true);

type SubjectPageRow = { total: string } & { [K in keyof PaymentRow]: PaymentRow[K] | null } & Partial<AdmissionRow>;

async function subjectPage(
  em: EntityManager,
  accountId: number,
  states: readonly PaymentState[] | null,
  subjectId: string,
  limit: number,
  offset: number,
  admission?: { sql: string; params: unknown[] },
) {
  const where = [accountId, subjectId, states, states];
  const found = admission
    ? await manyPlanned<SubjectPageRow>(em, `with ${admission.sql}\n${ADMITTED_SUBJECT_PAGE_SQL}`, [
        ...admission.params,
        ...where,
        ...where,
        limit,
        offset,
      ])
    : await manyPlanned<SubjectPageRow>(em, SUBJECT_PAGE_SQL, [...where, ...where, limit, offset]);
  // The total's row comes back alone (its page columns null) when the page is past the end.
  const rows = found
    .filter((r) => r.id !== null)
    .map(
      ({ total: _total, adm_matched: _m, adm_count: _c, adm_previous: _p, adm_touch_due: _t, adm_key_id: _k, ...row }) => row as PaymentRow,
    );
  const first = found[0];
  return {
    total: Number(first?.total ?? 0),
    rows,
    ...(admission && first
      ? {
          admission: {
            adm_matched: first.adm_matched ?? false,
            adm_count: first.adm_count ?? null,
            adm_previous: first.adm_previous ?? null,
            adm_touch_due: first.adm_touch_due ?? null,
            adm_key_id: first.adm_key_id ?? null,
          },
        }
      : {}),
  };
}

/** One payment of the account by its UUID or its reference (locked for the transaction with `forUpdate`). */
export async function readPaymentRow(
  em: EntityManager,
  accountId: number,
  key: { id: string } | { reference: string },
  forUpdate = false,
): Promise<PaymentRow | null> {
  let q = tablesOf(em, 'payments').selectFrom('payments').select(PAYMENT_COLUMNS).where('account_id', '=', accountId);
  q = 'id' in key ? q.where('id', '=', key.id) : q.where('reference', '=', key.reference);
  return (await (forUpdate ? q.forUpdate() : q).executeTakeFirst()) ?? null;
}

/** A payment's timeline, oldest first. */
export async function eventsOf(em: EntityManager, paymentId: string) {
  return tablesOf(em, 'payments')
    .selectFrom('payment_events')
    .select(['old_state', 'new_state', 'refused', 'source', 'message', 'occurred_at'])
    .where('payment_id', '=', paymentId)
    .orderBy('occurred_at')
    .orderBy('id')
    .execute();
}

/** A payment's ledger legs, by entry_no. */
export async function ledgerOf(em: EntityManager, paymentId: string) {
  return tablesOf(em, 'payments')
    .selectFrom('ledger_entries')
    .select(['entry_no', 'kind', 'direction', 'account', 'amount_minor', 'currency', 'occurred_at'])
    .where('payment_id', '=', paymentId)
    .orderBy('entry_no')
    .execute();
}

/** The refunds of a payment, newest first. */
export async function refundsOf(em: EntityManager, accountId: number, paymentId: string) {
  return tablesOf(em, 'payments')
    .selectFrom('payments')
    .select(PAYMENT_COLUMNS)
    .where('account_id', '=', accountId)
    .where('refund_of', '=', paymentId)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .execute();
}

export interface NewPayment {
  accountId: number;
  reference: string;
  state: PaymentState;
  amountMinor: number;
  currency: string;
  subjectId: string | null;
  subjectType: string | null;
  isRefund: boolean;
  refundOf: string | null;
  reason: string | null;
  payer: string | null;
  method: string | null;
  provider: string | null;
  expiresAt: Date | null;
  checkoutUrl: string | null;
  checkoutCode: string | null;
  createdBy: string | null;
}

/** The payment row; null when its reference is already the account's (the caller draws another). */
export async function insertPayment(tx: EntityManager, p: NewPayment): Promise<PaymentRow | null> {
  return one<PaymentRow>(
    tx,
    `insert into payments (id, account_id, reference, state, amount_minor, currency, refunded_minor, subject_id, subject_type,
                           is_refund, refund_of, reason, payer, method, provider, attempts, expires_at, checkout_url, checkout_code,
                           created_by, created_at, updated_at)
     values (gen_random_uuid(), ?, ?, ?, ?, ?, 0, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, now(), now())
     on conflict (account_id, reference) do nothing
     returning ${SELECTED}`,
    [
      p.accountId,
      p.reference,
      p.state,
      p.amountMinor,
      p.currency,
      p.subjectId,
      p.subjectType,
      p.isRefund,
      p.refundOf,
      p.reason,
      p.payer,
      p.method,
      p.provider,
      p.state === 'pending' ? 1 : 0,
      p.expiresAt,
      p.checkoutUrl,
      p.checkoutCode,
      p.createdBy,
    ],
  );
}

export interface TimelineRow {
  accountId: number;
  paymentId: string;
  oldState: PaymentState | null;
  newState: PaymentState;
  refused?: PaymentState | null;
  source: string;
  message: string | null;
}

/** One row of a payment's timeline. */
export async function insertEvent(tx: EntityManager, e: TimelineRow): Promise<void> {
  await tablesOf(tx, 'payments')
    .insertInto('payment_events')
    .values({
      account_id: e.accountId,
      payment_id: e.paymentId,
      old_state: e.oldState,
      new_state: e.newState,
      refused: e.refused ?? null,
      source: e.source,
      message: e.message,
      occurred_at: new Date(),
    })
    .execute();
}

export interface MovePatch {
  providerRef?: string | null;
  lastError?: string | null;
  /** The provider's receipt of the money moved (a paid payment's is what its refunds reverse). */
  receipt?: string | null;
}

/**
 * Moves a locked payment from `from` to `to` (guarded on `from`, so a move computed from a stale
 * read changes nothing). A move into pending counts an attempt; into paid stamps settled_at.
 */
export async function setState(tx: EntityManager, id: string, from: PaymentState, to: PaymentState, patch: MovePatch = {}) {
  return one<PaymentRow>(
    tx,
    `update payments
        set state = ?, updated_at = now(),
            attempts = attempts + (case when ? = 'pending' then 1 else 0 end),
            settled_at = case when ? = 'paid' then now() else settled_at end,
            last_error = case when ? then ? else last_error end,
            provider_ref = case when ? then ? else provider_ref end,
            provider_receipt = case when ? then ? else provider_receipt end
      where id = ? and state = ?
     returning ${SELECTED}`,
    [
      to,
      to,
      to,
      patch.lastError !== undefined,
      patch.lastError ?? null,
      patch.providerRef !== undefined,
      patch.providerRef ?? null,
      patch.receipt !== undefined,
      patch.receipt ?? null,
      id,
      from,
    ],
  );
}

/**
 * Takes `amount` of a settled payment's refundable headroom for a refund, in one guarded statement:
 * no row when the payment is not the account's, not settled, itself a refund, or has less than
 * `amount` left. Concurrent requests queue on the row and each re-checks the headroom it leaves,
 * so together they never take more than amount_minor.
 */
export async function takeRefundHeadroom(tx: EntityManager, accountId: number, paymentId: string, amount: number) {
  return one<Pick<Payment, 'amount_minor' | 'refunded_minor'>>(
    tx,
    `update payments set refunded_minor = refunded_minor + ?, updated_at = now()
      where id = ? and account_id = ? and not is_refund and state in ('paid', 'partly_refunded')
        and amount_minor - refunded_minor >= ?
     returning amount_minor, refunded_minor`,
    [amount, paymentId, accountId, amount],
  );
}

/** Gives a refund's amount back to its parent's headroom (the refund failed, expired or was cancelled). */
export async function giveRefundHeadroomBack(tx: EntityManager, paymentId: string, amount: number): Promise<void> {
  await exec(tx, 'update payments set refunded_minor = refunded_minor - ?, updated_at = now() where id = ? and refunded_minor >= ?', [
    amount,
    paymentId,
    amount,
  ]);
}

/** What a payment's settled refunds gave back (the parent's state follows it). */
export async function settledRefundsMinor(tx: EntityManager, paymentId: string): Promise<number> {
  const row = await one<{ n: string }>(
    tx,
    `select coalesce(sum(amount_minor), 0)::text as n from payments where refund_of = ? and is_refund and state = 'paid'`,
    [paymentId],
  );
  return Number(row?.n ?? 0);
}

/**
 * Appends a move's legs to a locked payment's ledger, numbered on from its last entry_no (the
 * lock keeps the numbers gapless; the unique (payment_id, entry_no) refuses a second writer).
 */
export async function appendLedger(
  tx: EntityManager,
  accountId: number,
  paymentId: string,
  currency: string,
  legs: readonly LedgerLeg[],
): Promise<void> {
  if (!legs.length) return;
  await exec(
    tx,
    `insert into ledger_entries (account_id, payment_id, entry_no, kind, direction, account, amount_minor, currency, occurred_at)
     select ?, ?, (select coalesce(max(entry_no), 0) from ledger_entries where payment_id = ?) + l.n, l.kind, l.direction, l.account, l.amount_minor, ?, now()
       from jsonb_to_recordset(?::jsonb) as l(n int, kind text, direction text, account text, amount_minor bigint)
      order by l.n`,
    [
      accountId,
      paymentId,
      paymentId,
      currency,
      JSON.stringify(
        legs.map((l, i) => ({ n: i + 1, kind: l.kind, direction: l.direction, account: l.account, amount_minor: l.amountMinor })),
      ),
    ],
  );
}

/** Stores the provider's id of the payment's current attempt (its callbacks name it); a later attempt's id replaces it. */
export async function setProviderRef(
  em: EntityManager,
  accountId: number,
  paymentId: string,
  provider: string,
  providerRef: string,
): Promise<void> {
  // The adapter's key is stored with it (a payment that named none took the configured one), so the
  // callback's lookup runs on the (provider, provider_ref) index.
  await tablesOf(em, 'payments')
    .updateTable('payments')
    .set({ provider, provider_ref: providerRef, updated_at: new Date() })
    .where('account_id', '=', accountId)
    .where('id', '=', paymentId)
    .execute();
}

/**
 * Keeps the provider's receipt of a payment's money when the payment has none yet (the first one
 * stays). Answers whether it was stored. A refund's receipt is its workflow's to keep (recordMove).
 */
export async function keepReceipt(em: EntityManager, paymentId: string, receipt: string): Promise<boolean> {
  const row = await one<{ id: string }>(
    em,
    `update payments set provider_receipt = ?, updated_at = now()
      where id = ? and provider_receipt is null and not is_refund
     returning id`,
    [receipt, paymentId],
  );
  return row !== null;
}

/** What a refund reverses at the provider: the receipt of the payment it refunds (null when that payment's result carried none). */
export async function receiptToReverse(em: EntityManager, accountId: number, refundId: string): Promise<string | null> {
  const row = await tablesOf(em, 'payments')
    .selectFrom('payments as r')
    .innerJoin('payments as parent', 'parent.id', 'r.refund_of')
    .select('parent.provider_receipt')
    .where('r.account_id', '=', accountId)
    .where('r.id', '=', refundId)
    .where('r.is_refund', '=', true)
    .where('parent.account_id', '=', accountId)
    .executeTakeFirst();
  return row?.provider_receipt ?? null;
}

/**
 * The payment a provider callback is about: by the provider's id of the attempt (unique per
 * provider), else by our reference from the callback URL. A reference is unique per account only,
 * so it names a payment only when exactly one account has it; an unpaired one is left unknown.
 */
export async function paymentForCallback(
  em: EntityManager,
  provider: string,
  providerRef: string | null,
  reference: string | null,
): Promise<{ id: string; account_id: number; state: PaymentState; is_refund: boolean } | null> {
  const q = () => tablesOf(em, 'payments').selectFrom('payments').select(['id', 'account_id', 'state', 'is_refund']);
  if (providerRef) {
    const byRef = await q().where('provider', '=', provider).where('provider_ref', '=', providerRef).limit(2).execute();
    if (byRef.length === 1) return byRef[0];
  }
  if (reference) {
    const byReference = await q().where('reference', '=', reference).limit(2).execute();
    if (byReference.length === 1) return byReference[0];
  }
  return null;
}

/**
 * Marks that push number `push` of the payment's workflow is about to call the provider. Answers
 * false when that push was marked already: an earlier attempt of the same push began its call and
 * never recorded an answer (its worker stopped), so the payer may have been asked.
 */
export async function startPush(em: EntityManager, accountId: number, paymentId: string, push: number): Promise<boolean> {
  const row = await one<{ id: string }>(
    em,
    `update payments set pushes_started = ?, updated_at = now()
      where id = ? and account_id = ? and pushes_started < ?
     returning id`,
    [push, paymentId, accountId, push],
  );
  return row !== null;
}

/** Puts back the mark of push `push`: the provider answered that nothing was pushed, so the push may be tried again. */
export async function unstartPush(em: EntityManager, accountId: number, paymentId: string, push: number): Promise<void> {
  await exec(em, 'update payments set pushes_started = ?, updated_at = now() where id = ? and account_id = ? and pushes_started = ?', [
    push - 1,
    paymentId,
    accountId,
    push,
  ]);
}

/** The provider's id of the payment's attempt, when one is stored. */
export async function providerRefOf(em: EntityManager, accountId: number, paymentId: string): Promise<string | null> {
  const row = await tablesOf(em, 'payments')
    .selectFrom('payments')
    .select('provider_ref')
    .where('account_id', '=', accountId)
    .where('id', '=', paymentId)
    .executeTakeFirst();
  return row?.provider_ref ?? null;
}

/** Records that the payment's workflow was started (or found running, or is owed none): the reconciler leaves it alone. */
export async function markWorkflowStarted(em: EntityManager, paymentId: string): Promise<void> {
  await exec(em, 'update payments set workflow_started_at = now() where id = ? and workflow_started_at is null', [paymentId]);
}

/**
 * Payments still owed their workflow: payments in draft or pending and refunds in draft (a refund
 * past draft was sent by its workflow), requested at least `olderThanSeconds` ago with no start
 * recorded (the start after the commit failed, or the process died before it), oldest first.
 */
export async function paymentsOwingWorkflow(em: EntityManager, olderThanSeconds: number, limit: number): Promise<PaymentRow[]> {
  // The first two conditions are payments_workflow_owed_index's predicate, so the planner reads it.
  return many<PaymentRow>(
    em,
    `select ${SELECTED} from payments
      where workflow_started_at is null and state in ('draft', 'pending') and (not is_refund or state = 'draft')
        and created_at < now() - make_interval(secs => ?)
      order by created_at limit ?`,
    [olderThanSeconds, limit],
  );
}

/**
 * What a subject's settled payments in one currency still hold (each one's amount less what its
 * refunds took), `except` one payment left out. Read by the subject's family under its own lock, so
 * two payments of one subject settling at once see each other (the second waits for the first).
 */
export async function subjectCollectedMinor(
  tx: EntityManager,
  accountId: number,
  subject: { type: string; id: string; currency: string },
  except: string,
): Promise<number> {
  const row = await one<{ n: string }>(
    tx,
    `select coalesce(sum(amount_minor - refunded_minor), 0)::text as n from payments
      where account_id = ? and subject_id = ? and subject_type = ? and currency = ? and not is_refund
        and state in ('paid', 'partly_refunded', 'refunded') and id <> ?`,
    [accountId, subject.id, subject.type, subject.currency, except],
  );
  return Number(row?.n ?? 0);
}
