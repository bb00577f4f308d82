// The M-Pesa organisation statement of the simulated shortcode, served from the simulator's own
// payments, reversals and extra lines (mpesa-daraja.ts), as the org portal exports it (a CSV; Daraja
// has no statement API, so the path is the simulator's own):
//
//   GET /daraja/org/v1/statement?ShortCode=174379&StartDate=2026-11-27 10:00:00&EndDate=2026-11-27 12:00:00
//       Bearer (a Daraja token); times in Nairobi, EndDate exclusive → text/csv:
//       a few lines about the organisation and the period, then the header row
//       Receipt No., Completion Time, Initiation Time, Details, Transaction Status, Paid In,
//       Withdrawn, Balance, Balance Confirmed, Reason Type, Other Party Info, Linked Transaction ID,
//       A/C No., API Request ID
//
// `API Request ID` is the simulator's addition (Safaricom's statement has no such column): the id
// the push (CheckoutRequestID) or the reversal (ConversationID) was acknowledged with. With
// `statementRequestIds: false` (POST /_sim/payments/config) the column is left out, as Safaricom's
// export is, and a line names its payment by its receipt alone. Only money that moved is a line: a
// paid push (Paid In), a reversal that went through (Withdrawn, negative, linked to the receipt it
// reverses).
//
// Controls, to make the statement disagree with what the API said (reconciliation tests):
//   POST /_sim/payments/{CheckoutRequestID}/statement {omit?, amount?, completed?}
//        omit: the line is left out; amount: it shows this many whole units; completed: a push that
//        did not pay shows as paid (the provider settled it but told us otherwise)
//   POST /_sim/payments/statement/lines {amount, phone, accountReference?, completedAt?}
//        money paid to the shortcode without any API request (a payer paying the paybill directly)
//   GET  /_sim/payments/statement   the lines as JSON (every line, no period)
// Fault: `statement_unavailable` (provider "payment", no `to`) answers 503 503.001.01.
import type { Router } from '@koa/router';
import type { Context as KoaContext } from 'koa';
import { readJson } from './body.js';
import { PAYMENT_STATEMENT_FAULT_KINDS } from './faults.js';
import { isObj } from './graph-errors.js';
import type { SimState } from './state.js';
import { digitsOf } from './util.js';

type Context = KoaContext & { params: Record<string, string> };

export const STATEMENT_PATH = '/org/v1/statement';

export const STATEMENT_COLUMNS = [
  'Receipt No.',
  'Completion Time',
  'Initiation Time',
  'Details',
  'Transaction Status',
  'Paid In',
  'Withdrawn',
  'Balance',
  'Balance Confirmed',
  'Reason Type',
  'Other Party Info',
  'Linked Transaction ID',
  'A/C No.',
  'API Request ID',
] as const;

export interface StatementAmendment {
  omit: boolean;
  /** Whole units shown instead of what was paid; null: what was paid. */
  amount: number | null;
  /** Shown as paid although the push did not pay (its receipt is made up when it had none). */
  completed: boolean;
  receipt: string | null;
}
export const noAmendment = (): StatementAmendment => ({ omit: false, amount: null, completed: false, receipt: null });

export interface ExtraLine {
  receipt: string;
  phone: string;
  /** Whole units. */
  amount: number;
  accountReference: string;
  completedAt: number;
}

export interface StatementLine {
  receipt: string;
  completedAt: number;
  initiatedAt: number;
  details: string;
  /** Whole units: positive paid in, negative withdrawn. */
  amount: number;
  reasonType: string;
  otherParty: string;
  linked: string;
  accountReference: string;
  apiRequestId: string;
}

const NAIROBI_OFFSET_MS = 3 * 3600_000;
/** `yyyy-MM-dd HH:mm:ss` in Nairobi. */
function nairobiTime(ms: number): string {
  return new Date(ms + NAIROBI_OFFSET_MS).toISOString().slice(0, 19).replace('T', ' ');
}
function parseNairobiTime(v: unknown): number | null {
  if (typeof v !== 'string' || !/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/.test(v)) return null;
  const ms = Date.parse(`${v.replace(' ', 'T')}Z`) - NAIROBI_OFFSET_MS;
  return Number.isFinite(ms) && nairobiTime(ms) === v ? ms : null;
}
/** Statement times are whole seconds. */
const second = (ms: number) => Math.floor(ms / 1000) * 1000;
const party = (phone: string) => `${phone} - Simulated Payer`;

/** Every line of the statement, oldest first (no period). */
export function statementLines(state: SimState, makeReceipt: () => string): StatementLine[] {
  const ps = state.payments;
  const lines: StatementLine[] = [];
  for (const p of ps.payments) {
    const a = p.statement;
    if (p.state !== 'settled' || p.settledAt === null || a.omit) continue;
    if (p.resultCode !== 0 && !a.completed) continue;
    if (!p.receipt && !a.receipt) a.receipt = makeReceipt();
    lines.push({
      receipt: (p.receipt ?? a.receipt)!,
      completedAt: second(p.settledAt),
      initiatedAt: second(p.createdAt),
      details: `Pay Bill Online from ${party(p.phone)} Acc. ${p.accountReference}`,
      amount: a.amount ?? p.amount,
      reasonType: 'Pay Bill Online',
      otherParty: party(p.phone),
      linked: '',
      accountReference: p.accountReference,
      apiRequestId: p.checkoutRequestId,
    });
  }
  for (const v of ps.reversals) {
    if (v.state !== 'settled' || v.resultCode !== 0 || !v.receipt || v.settledAt === null) continue;
    const original = ps.byReceipt.get(v.transactionId);
    lines.push({
      receipt: v.receipt,
      completedAt: second(v.settledAt),
      initiatedAt: second(v.createdAt),
      details: `Reversal of ${v.transactionId}`,
      amount: -v.amount,
      reasonType: 'Reversal',
      otherParty: original ? party(original.phone) : '',
      linked: v.transactionId,
      accountReference: '',
      apiRequestId: v.conversationId,
    });
  }
  for (const x of ps.extraLines) {
    lines.push({
      receipt: x.receipt,
      completedAt: second(x.completedAt),
      initiatedAt: second(x.completedAt),
      details: `Pay Bill from ${party(x.phone)} Acc. ${x.accountReference}`,
      amount: x.amount,
      reasonType: 'Pay Bill',
      otherParty: party(x.phone),
      linked: '',
      accountReference: x.accountReference,
      apiRequestId: '',
    });
  }
  return lines.sort((a, b) => a.completedAt - b.completedAt);
}

const quote = (v: string | number) => `"${String(v).replace(/"/g, '""')}"`;
const money = (units: number) => (units === 0 ? '' : units.toFixed(2));

/** The CSV of the lines completed in [start, end), with the running balance of the whole statement. */
export function statementCsv(state: SimState, makeReceipt: () => string, start: number, end: number): string {
  const rows: string[] = [
    [quote('Organization Name'), quote('Simulated Business')].join(','),
    [quote('Short Code'), quote(state.options.paymentShortCode)].join(','),
    [quote('Time Period'), quote(`${nairobiTime(start)} - ${nairobiTime(end)}`)].join(','),
    '',
  ];
  const withIds = state.payments.config.statementRequestIds;
  const columns = withIds ? STATEMENT_COLUMNS : STATEMENT_COLUMNS.filter((c) => c !== 'API Request ID');
  rows.push(columns.map(quote).join(','));
  let balance = 0;
  for (const l of statementLines(state, makeReceipt)) {
    balance += l.amount;
    if (l.completedAt < start || l.completedAt >= end) continue;
    rows.push(
      [
        l.receipt,
        nairobiTime(l.completedAt),
        nairobiTime(l.initiatedAt),
        l.details,
        'Completed',
        l.amount > 0 ? money(l.amount) : '',
        l.amount < 0 ? money(l.amount) : '',
        balance.toFixed(2),
        'true',
        l.reasonType,
        l.otherParty,
        l.linked,
        l.accountReference,
        ...(withIds ? [l.apiRequestId] : []),
      ]
        .map(quote)
        .join(','),
    );
  }
  return `${rows.join('\r\n')}\r\n`;
}

/** GET the statement (after the bearer check): the period's lines, or Daraja's envelope for a bad query or a fault. */
export function serveStatement(
  ctx: KoaContext,
  state: SimState,
  refuse: (errorCode: string, message: string) => void,
  makeReceipt: () => string,
): void {
  const fault = state.faults.take('payment', null, PAYMENT_STATEMENT_FAULT_KINDS);
  if (fault) return refuse('503.001.01', fault.message ?? 'Service Unavailable');
  if (String(ctx.query.ShortCode ?? '') !== state.options.paymentShortCode) return refuse('400.002.02', 'Bad Request - Invalid ShortCode');
  const start = parseNairobiTime(ctx.query.StartDate);
  const end = parseNairobiTime(ctx.query.EndDate);
  if (start === null) return refuse('400.002.02', 'Bad Request - Invalid StartDate');
  if (end === null || end <= start) return refuse('400.002.02', 'Bad Request - Invalid EndDate');
  ctx.type = 'text/csv; charset=utf-8';
  ctx.body = statementCsv(state, makeReceipt, start, end);
}

function refuse(ctx: Context, status: number, error: string): void {
  ctx.status = status;
  ctx.body = { error };
}

/** The statement's controls on the /_sim/payments router (registered before its /:id routes). */
export function statementControls(r: Router, state: SimState, makeReceipt: () => string): void {
  const ps = state.payments;

  r.get('/statement', (ctx) => {
    const lines = statementLines(state, makeReceipt);
    ctx.body = { count: lines.length, lines };
  });

  r.post('/statement/lines', async (ctx) => {
    const b = await readJson(ctx);
    if (!isObj(b)) return refuse(ctx as Context, 400, 'body must be a JSON object');
    const phone = typeof b.phone === 'string' ? digitsOf(b.phone) : '';
    const completedAt = b.completedAt === undefined ? Date.now() : typeof b.completedAt === 'string' ? Date.parse(b.completedAt) : NaN;
    if (typeof b.amount !== 'number' || !Number.isInteger(b.amount) || b.amount < 1)
      return refuse(ctx as Context, 400, 'amount must be a whole number of units, at least 1');
    if (!/^\d{10,15}$/.test(phone)) return refuse(ctx as Context, 400, 'phone must be a phone number');
    if (b.accountReference !== undefined && typeof b.accountReference !== 'string')
      return refuse(ctx as Context, 400, 'accountReference must be a string');
    if (!Number.isFinite(completedAt)) return refuse(ctx as Context, 400, 'completedAt must be an ISO 8601 time');
    const line: ExtraLine = {
      receipt: makeReceipt(),
      phone,
      amount: b.amount,
      accountReference: typeof b.accountReference === 'string' ? b.accountReference.slice(0, 12) : '',
      completedAt,
    };
    ps.extraLines.push(line);
    ctx.status = 201;
    ctx.body = line;
  });

  r.post('/:id/statement', async (ctx: Context) => {
    const p = ps.byCheckout.get(ctx.params.id!);
    const b = await readJson(ctx);
    if (!p) return refuse(ctx, 404, 'no such CheckoutRequestID');
    if (!isObj(b)) return refuse(ctx, 400, 'body must be a JSON object');
    if (b.omit !== undefined && typeof b.omit !== 'boolean') return refuse(ctx, 400, 'omit must be a boolean');
    if (b.completed !== undefined && typeof b.completed !== 'boolean') return refuse(ctx, 400, 'completed must be a boolean');
    if (b.amount !== undefined && b.amount !== null && (typeof b.amount !== 'number' || !Number.isInteger(b.amount) || b.amount < 1))
      return refuse(ctx, 400, 'amount must be a whole number of units, at least 1, or null');
    if (typeof b.omit === 'boolean') p.statement.omit = b.omit;
    if (typeof b.completed === 'boolean') p.statement.completed = b.completed;
    if (b.amount !== undefined) p.statement.amount = b.amount as number | null;
    ctx.body = { checkoutRequestId: p.checkoutRequestId, statement: p.statement };
  });
}
