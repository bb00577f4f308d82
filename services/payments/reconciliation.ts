import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Client } from '@temporalio/client';
import type { FromSchema } from 'json-schema-to-ts';
import type { Config } from '../../config.js';
import type { SettlementLine } from '../../providers/index.js';
import { recordNotices, requireAccount, type NoticeInput } from '../account/index.js';
import { emitBusinessEvent } from '../automations/index.js';
import { compareSettlements, displayAmount, type Mismatch, type OurSettlement, type Period } from '../../domain/payments/index.js';
import { startWorkflow } from '../../temporal/starters.js';
import { paymentReconciliationRunStarter, paymentReconciliationWorkflowId } from '../../workflows/payments/reconciliation.starter.js';
import type { ReconciliationProgress } from '../../workflows/payments/reconciliation.js';
import type { OperatorContext, RequestContext } from '../platform/context.js';
import { validationFailed } from '../platform/errors.js';
import { pageAnswer, pageOf, pageQueryProperties } from '../platform/pagination.js';
import { iso } from '../platform/time.js';
import {
  insertMismatches,
  mismatchPage,
  MISMATCH_FIELDS,
  paymentsNamed,
  settlementsBetween,
  settlementsNamed,
  type MismatchRecord,
  type ProviderScope,
} from './store/reconciliation.js';

// Reconciliation (issue 26 point 5; docs/payments.md "Reconciliation"): one slice of a period
// compared (our provider_clearing legs against the provider's report, domain/payments/
// reconciliation.ts) and its mismatches recorded with, for each account whose money it is, a notice
// and a `payment.mismatch` business event, in one transaction: a mismatch recorded once tells once.
// The operator runs it on demand and lists what was found.

/** How far beyond a slice each side is looked for: a payment completed at the provider at 10:59 reaches our ledger after its callback or poll. */
export const RECONCILIATION_MARGIN_MS = 60 * 60_000;
/** The longest period one run may cover: hour slices, about 750 of them (the workflow's history stays small). */
export const MAX_PERIOD_DAYS = 31;
/** How long an operator's run-now waits for the run's result before answering it is still running. */
const RUN_WAIT_MS = 10_000;

export interface SliceInput {
  /** The provider key and whether it is the configured one (a payment storing no provider is its). */
  provider: string;
  configured: boolean;
  period: Period;
  /** The provider's lines of the period widened by RECONCILIATION_MARGIN_MS each way. */
  lines: readonly SettlementLine[];
  accountId?: number;
  /** The run (its workflow id), recorded on each mismatch it finds first. */
  foundBy: string;
}

export interface SliceCounts {
  ours: number;
  theirs: number;
  matched: number;
  missingAtProvider: number;
  missingInOurs: number;
  amountDiffers: number;
  recorded: number;
}

/** Compares one slice and records what disagrees; answers the counts. */
export async function reconcileSlice(em: EntityManager, input: SliceInput): Promise<SliceCounts> {
  const scope: ProviderScope = {
    provider: input.provider,
    configured: input.configured,
    ...(input.accountId !== undefined ? { accountId: input.accountId } : {}),
  };
  // A line names a payment of ours by its receipt (Safaricom's statement) or by the request's id (the simulator's column).
  const refs = [...new Set(input.lines.flatMap((l) => (l.providerRef === null ? [] : [l.providerRef])))];
  const receipts = [...new Set(input.lines.map((l) => l.receipt))];
  const [inPeriod, ofRefs, ofReceipts, knownByRef, knownByReceipt] = await Promise.all([
    settlementsBetween(em, scope, input.period.from, input.period.to),
    settlementsNamed(em, scope, 'provider_ref', refs),
    settlementsNamed(em, scope, 'provider_receipt', receipts),
    paymentsNamed(em, scope, 'provider_ref', refs),
    paymentsNamed(em, scope, 'provider_receipt', receipts),
  ]);
  const ours = new Map<string, OurSettlement>();
  for (const s of [...inPeriod, ...ofRefs, ...ofReceipts]) ours.set(`${s.paymentId}:${s.kind}`, s);
  const known = [...new Map([...knownByRef, ...knownByReceipt].map((k) => [k.paymentId, k])).values()];
  // One account's run judges only the lines that name its payments: the rest are other accounts' money or nobody's.
  const mine = new Set(known.flatMap((k) => [k.providerRef, k.receipt].filter((x): x is string => x !== null)));
  const lines =
    input.accountId === undefined
      ? input.lines
      : input.lines.filter((l) => mine.has(l.receipt) || (l.providerRef !== null && mine.has(l.providerRef)));
  const found = compareSettlements([...ours.values()], lines, known, input.period);
  const recorded = await em.transactional((tx) => recordMismatches(tx, input.provider, input.foundBy, found.mismatches));
  const count = (kind: Mismatch['kind']) => found.mismatches.filter((m) => m.kind === kind).length;
  return {
    ours: found.ours,
    theirs: found.theirs,
    matched: found.matched,
    missingAtProvider: count('missing_at_provider'),
    missingInOurs: count('missing_in_ours'),
    amountDiffers: count('amount_differs'),
    recorded,
  };
}

const money = (minor: string | number | null, currency: string | null) =>
  minor === null ? '' : currency ? displayAmount(Number(minor), currency) : `${Number(minor) / 100}`;

/** One sentence for the account's notice. */
function noticeMessage(m: MismatchRecord, paymentState: string | null): string {
  const what = `${m.settlement === 'reversal' ? 'refund' : 'payment'}${m.reference ? ` ${m.reference}` : ''}`;
  const ours = money(m.our_amount_minor, m.currency);
  const theirs = `${money(m.provider_amount_minor, m.provider_currency ?? m.currency)}${m.receipt ? ` (receipt ${m.receipt})` : ''}`;
  if (m.kind === 'missing_at_provider')
    return `The ${what} of ${ours} is settled in our ledger, but the payment provider's report does not show it.`;
  if (m.kind === 'missing_in_ours')
    return `The payment provider reports the ${what} settled, ${theirs}, but our ledger has not recorded it${paymentState ? ` (the payment is ${paymentState})` : ''}.`;
  return `The ${what}: our ledger has ${ours}, the payment provider's report ${theirs}.`;
}

/** The event's data (and the notice's): in the contract's words, no provider-internal id. */
function eventData(m: MismatchRecord, paymentState: string | null) {
  return {
    mismatch_id: Number(m.id),
    mismatch: m.kind,
    settlement: m.settlement,
    payment_id: m.payment_id,
    reference: m.reference,
    payment_state: paymentState,
    receipt: m.receipt,
    our_amount_minor: m.our_amount_minor === null ? null : Number(m.our_amount_minor),
    provider_amount_minor: m.provider_amount_minor === null ? null : Number(m.provider_amount_minor),
    currency: m.currency,
    provider_currency: m.provider_currency,
    provider: m.provider,
    occurred_at: iso(m.occurred_at),
  };
}

/**
 * Records the mismatches not recorded before, and for each whose money is an account's, its notice
 * and its `payment.mismatch` event, all in the caller's transaction. Answers how many were new.
 */
export async function recordMismatches(
  tx: EntityManager,
  provider: string,
  foundBy: string,
  mismatches: readonly Mismatch[],
): Promise<number> {
  const rows = await insertMismatches(tx, provider, foundBy, mismatches);
  const stateOf = new Map(mismatches.map((m) => [m.key, m.paymentState]));
  const byAccount = new Map<number, { notices: NoticeInput[]; rows: MismatchRecord[] }>();
  for (const r of rows) {
    if (r.account_id === null) continue;
    const a = byAccount.get(r.account_id) ?? { notices: [], rows: [] };
    a.rows.push(r);
    a.notices.push({
      kind: 'payment.mismatch',
      message: noticeMessage(r, stateOf.get(r.key) ?? null),
      data: eventData(r, stateOf.get(r.key) ?? null),
      dedupeKey: `payment.mismatch:${r.id}`,
    });
    byAccount.set(r.account_id, a);
  }
  for (const [accountId, a] of byAccount) {
    await recordNotices(tx, accountId, a.notices);
    for (const r of a.rows)
      await emitBusinessEvent(tx, accountId, 'payment.mismatch', eventData(r, stateOf.get(r.key) ?? null), 'payments');
  }
  return rows.length;
}

// --- The operator's list ------------------------------------------------------------------------

export const mismatchSchema = {
  type: 'object',
  required: MISMATCH_FIELDS,
  properties: {
    id: { type: 'integer' },
    provider: { type: 'string', description: 'the provider adapter (mpesa-daraja)' },
    kind: {
      type: 'string',
      enum: ['missing_at_provider', 'missing_in_ours', 'amount_differs'],
      description:
        'missing_at_provider: settled in our ledger, not in the report; missing_in_ours: the reverse; amount_differs: both, different amounts',
    },
    settlement: { type: 'string', enum: ['payment', 'reversal'], description: 'money paid in, or given back by a refund' },
    account_id: { type: ['integer', 'null'], description: 'whose money; null when the provider’s line names no payment of ours' },
    payment_id: { type: ['string', 'null'], format: 'uuid' },
    reference: { type: ['string', 'null'] },
    provider_ref: { type: ['string', 'null'], description: 'the provider’s id of the request that moved the money' },
    receipt: { type: ['string', 'null'], description: 'the provider’s transaction id (M-Pesa receipt)' },
    our_amount_minor: { type: ['integer', 'null'] },
    provider_amount_minor: { type: ['integer', 'null'] },
    currency: { type: ['string', 'null'] },
    provider_currency: { type: ['string', 'null'], description: 'the report’s currency where it names one that is not ours' },
    payer: { type: ['string', 'null'], description: 'the payer’s phone as the provider reports it' },
    occurred_at: { type: 'string', format: 'date-time', description: 'when the money moved' },
    found_by: { type: 'string', description: 'the reconciliation run (workflow id) that found it' },
    found_at: { type: 'string', format: 'date-time' },
  },
} as const;

export const mismatchQuerySchema = {
  type: 'object',
  properties: {
    account: { type: 'integer', minimum: 1, maximum: 2_147_483_647, description: 'only this account’s' },
    kind: { type: 'string', enum: ['missing_at_provider', 'missing_in_ours', 'amount_differs'] },
    settlement: { type: 'string', enum: ['payment', 'reversal'] },
    provider: { type: 'string', minLength: 1, maxLength: 64 },
    ...pageQueryProperties,
  },
} as const;
export type MismatchQuery = FromSchema<typeof mismatchQuerySchema>;

const mismatchView = (r: MismatchRecord) => ({
  id: Number(r.id),
  provider: r.provider,
  kind: r.kind,
  settlement: r.settlement,
  account_id: r.account_id,
  payment_id: r.payment_id,
  reference: r.reference,
  provider_ref: r.provider_ref,
  receipt: r.receipt,
  our_amount_minor: r.our_amount_minor === null ? null : Number(r.our_amount_minor),
  provider_amount_minor: r.provider_amount_minor === null ? null : Number(r.provider_amount_minor),
  currency: r.currency,
  provider_currency: r.provider_currency,
  payer: r.payer,
  occurred_at: iso(r.occurred_at),
  found_by: r.found_by,
  found_at: iso(r.found_at),
});

/** Every account's mismatches (or one account's), newest first, 20 a page by default. */
export async function listMismatches(oc: OperatorContext, q: MismatchQuery) {
  if (q.account !== undefined) await requireAccount(oc, q.account);
  const page = pageOf(q);
  const { total, rows } = await mismatchPage(
    oc.em,
    {
      ...(q.account !== undefined ? { accountId: q.account } : {}),
      ...(q.kind ? { kind: q.kind } : {}),
      ...(q.settlement ? { settlement: q.settlement } : {}),
      ...(q.provider ? { provider: q.provider } : {}),
    },
    page.perPage,
    page.offset,
  );
  return pageAnswer('mismatches', rows.map(mismatchView), page, total);
}

// --- The operator's run-now -------------------------------------------------------------------------

export const reconcileBodySchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    from: { type: 'string', format: 'date-time', description: 'default: the schedule’s window before `to`' },
    to: { type: 'string', format: 'date-time', description: 'default: now, less the schedule’s lag (PAYMENT_RECONCILIATION_LAG_MINUTES)' },
    account: { type: 'integer', minimum: 1, maximum: 2_147_483_647, description: 'only this account’s payments; default every account’s' },
  },
} as const;
export type ReconcileBody = FromSchema<typeof reconcileBodySchema>;

export const reconciliationRunSchema = {
  type: 'object',
  required: ['run_id', 'state', 'from', 'to', 'account_id', 'provider', 'counts'],
  properties: {
    run_id: { type: 'string', description: 'the run’s workflow id (Temporal UI)' },
    state: {
      type: 'string',
      enum: ['completed', 'running'],
      description: 'running: still going after a short wait; its mismatches are listed as found',
    },
    from: { type: 'string', format: 'date-time' },
    to: { type: 'string', format: 'date-time' },
    account_id: { type: ['integer', 'null'] },
    provider: { type: ['string', 'null'] },
    counts: {
      type: ['object', 'null'],
      required: ['ours', 'theirs', 'matched', 'missing_at_provider', 'missing_in_ours', 'amount_differs', 'recorded', 'slices_failed'],
      properties: {
        ours: { type: 'integer', description: 'our settlements in the period' },
        theirs: { type: 'integer', description: 'the provider’s lines in the period' },
        matched: { type: 'integer' },
        missing_at_provider: { type: 'integer' },
        missing_in_ours: { type: 'integer' },
        amount_differs: { type: 'integer' },
        recorded: { type: 'integer', description: 'mismatches new in this run (the rest were recorded before)' },
        slices_failed: { type: 'integer', description: 'hours whose report could not be read; see failures' },
        failures: { type: 'array', items: { type: 'string' } },
      },
    },
  },
} as const;

export interface ReconcileDeps {
  temporal: Client;
  config: Pick<Config, 'taskQueue' | 'paymentReconciliationWindowMinutes' | 'paymentReconciliationLagMinutes'>;
}

const MINUTE = 60_000;

/** The period of a run-now: what the operator named, the schedule's window and lag for what they did not. */
export function runPeriod(body: ReconcileBody, config: ReconcileDeps['config'], now = Date.now()): { from: Date; to: Date } {
  const to =
    body.to !== undefined
      ? new Date(body.to)
      : new Date(Math.floor((now - config.paymentReconciliationLagMinutes * MINUTE) / MINUTE) * MINUTE);
  const from = body.from !== undefined ? new Date(body.from) : new Date(to.getTime() - config.paymentReconciliationWindowMinutes * MINUTE);
  if (from >= to) throw validationFailed({ to: ['must be after from'] }, 'The period ends before it starts.');
  if (to.getTime() - from.getTime() > MAX_PERIOD_DAYS * 24 * 60 * MINUTE)
    throw validationFailed({ from: [`the period is at most ${MAX_PERIOD_DAYS} days`] }, `A run covers at most ${MAX_PERIOD_DAYS} days.`);
  return { from, to };
}

/**
 * Starts a reconciliation run over the period (every account's, or the one `rc` acts for) and waits
 * a little for its result: the counts when it finished, else `running` (its mismatches are listed as
 * they are found).
 */
export async function runReconciliation(deps: ReconcileDeps, body: ReconcileBody, rc?: RequestContext) {
  const { from, to } = runPeriod(body, deps.config);
  const accountId = rc?.account.id;
  const key = { runId: randomUUID(), ...(accountId !== undefined ? { accountId } : {}) };
  const handle = await startWorkflow(deps, paymentReconciliationRunStarter, key, [
    { from: from.toISOString(), to: to.toISOString(), ...(accountId !== undefined ? { accountId } : {}) },
  ]);
  const result = handle.result();
  result.catch(() => undefined);
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), RUN_WAIT_MS)));
  let done: ReconciliationProgress | null;
  try {
    done = await Promise.race([result, late]);
  } finally {
    clearTimeout(timer);
  }
  return {
    run_id: paymentReconciliationWorkflowId(key),
    state: done ? ('completed' as const) : ('running' as const),
    from: from.toISOString(),
    to: to.toISOString(),
    account_id: accountId ?? null,
    provider: done?.provider ?? null,
    counts: done
      ? {
          ours: done.ours,
          theirs: done.theirs,
          matched: done.matched,
          missing_at_provider: done.missingAtProvider,
          missing_in_ours: done.missingInOurs,
          amount_differs: done.amountDiffers,
          recorded: done.recorded,
          slices_failed: done.slicesFailed,
          failures: done.failures,
        }
      : null,
  };
}
