// The provider's report for reconciliation: an M-Pesa organisation statement, read as the M-Pesa
// org portal exports it (a CSV download; Daraja has no statement API). Its columns, as the portal
// names them: Receipt No., Completion Time, Initiation Time, Details, Transaction Status, Paid In,
// Withdrawn, Balance, Balance Confirmed, Reason Type, Other Party Info, Linked Transaction ID,
// A/C No.; times are Nairobi's, amounts whole shillings with two decimals, withdrawals may carry a
// minus sign, and a few lines about the organisation and the period come before the header row.
//
// One column more is read when present: `API Request ID`, the id our API call got (an STK push's
// CheckoutRequestID, a reversal's ConversationID). Safaricom's statement has no such column (only
// the simulator writes it), so against Safaricom every line arrives without providerRef and is
// matched to our payment by its receipt (docs/payments.md, "Reconciliation").
import { parse } from 'csv-parse/sync';
import type { SettlementLine } from '../types.js';
import { darajaTimestamp } from './payload.js';

/** Where the simulator serves the statement (under the Daraja base URL); Safaricom serves none. */
export const STATEMENT_PATH = '/org/v1/statement';

const NAIROBI_OFFSET_MS = 3 * 3600_000;

/** `yyyy-MM-dd HH:mm:ss` in Nairobi time, as the statement writes its times and takes its period. */
export function statementTime(ms: number): string {
  const s = darajaTimestamp(ms);
  return `${s.slice(0, 4)}-${s.slice(4, 6)}-${s.slice(6, 8)} ${s.slice(8, 10)}:${s.slice(10, 12)}:${s.slice(12, 14)}`;
}

/** A statement time back to an instant; null when it is not one (a day that does not exist included). */
export function parseStatementTime(v: string): Date | null {
  const m = /^(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2}):(\d{2})$/.exec(v.trim());
  if (!m) return null;
  const [, y, mo, d, h, mi, se] = m.map(Number);
  const ms = Date.UTC(y, mo - 1, d, h, mi, se) - NAIROBI_OFFSET_MS;
  return statementTime(ms) === v.trim().replace('T', ' ') ? new Date(ms) : null;
}

/** The query of one period: the shortcode and its bounds, whole seconds that cover [from, to). */
export function statementQuery(shortCode: string, from: Date, to: Date): string {
  const q = new URLSearchParams({
    ShortCode: shortCode,
    StartDate: statementTime(Math.floor(from.getTime() / 1000) * 1000),
    EndDate: statementTime(Math.ceil(to.getTime() / 1000) * 1000),
  });
  return `${STATEMENT_PATH}?${q.toString()}`;
}

/** A statement the adapter cannot read whole: reconciling against part of it would report money as missing. */
export class UnreadableStatement extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UnreadableStatement';
  }
}

/** A column name as compared: lower case, one space, no trailing full stop (`Receipt No.` = `receipt no`). */
const columnKey = (name: string) => name.trim().toLowerCase().replace(/\s+/g, ' ').replace(/\.$/, '');
const REQUIRED = ['receipt no', 'completion time', 'transaction status', 'paid in', 'withdrawn'] as const;

/** `1,500.00`, `-500.00`, `` → minor units (always positive) or null when empty; NaN when not a number. */
function minorOf(cell: string | undefined): number | null {
  const t = (cell ?? '').trim().replace(/,/g, '');
  if (t === '') return null;
  if (!/^-?\d+(\.\d{1,2})?$/.test(t)) return NaN;
  return Math.abs(Math.round(Number(t) * 100));
}

/** `254708374149 - Jane Doe` → +254708374149; null when the cell starts with no phone number. */
function payerOf(cell: string | undefined): string | null {
  const m = /^\s*\+?(\d{9,15})\b/.exec(cell ?? '');
  return m ? `+${m[1]}` : null;
}

/**
 * The settled transactions of a statement completed in [from, to): money paid in (payments) and
 * reversals. Withdrawals that are neither (charges, settlements to the bank) are not ours to
 * compare and are left out, as are lines whose status is not Completed. Throws UnreadableStatement
 * for a statement without its header or with a line it cannot read.
 */
export function parseStatement(csv: string, from: Date, to: Date): SettlementLine[] {
  let rows: string[][];
  try {
    rows = parse(csv.replace(/^\uFEFF/, ''), { relax_column_count: true, skip_empty_lines: true, trim: true }) as string[][];
  } catch (err) {
    throw new UnreadableStatement(`The statement is not CSV: ${(err as Error).message}`);
  }
  const headerAt = rows.findIndex((r) => columnKey(r[0] ?? '') === 'receipt no');
  if (headerAt < 0) throw new UnreadableStatement('The statement has no header row (Receipt No., Completion Time, …).');
  const col = new Map(rows[headerAt]!.map((name, i) => [columnKey(name), i]));
  const missing = REQUIRED.filter((c) => !col.has(c));
  if (missing.length) throw new UnreadableStatement(`The statement has no ${missing.join(', ')} column.`);
  const cell = (r: string[], name: string) => {
    const i = col.get(name);
    return i === undefined ? '' : (r[i] ?? '').trim();
  };

  const lines: SettlementLine[] = [];
  for (const [n, r] of rows.slice(headerAt + 1).entries()) {
    const where = `line ${n + 1} after the header`;
    if (cell(r, 'transaction status').toLowerCase() !== 'completed') continue;
    const receipt = cell(r, 'receipt no');
    const completedAt = parseStatementTime(cell(r, 'completion time'));
    const paidIn = minorOf(cell(r, 'paid in'));
    const withdrawn = minorOf(cell(r, 'withdrawn'));
    if (!receipt) throw new UnreadableStatement(`The statement's ${where} has no Receipt No.`);
    if (!completedAt) throw new UnreadableStatement(`The statement's ${where} (${receipt}) has no readable Completion Time.`);
    if (Number.isNaN(paidIn) || Number.isNaN(withdrawn))
      throw new UnreadableStatement(`The statement's ${where} (${receipt}) has an amount that is not a number.`);
    const reversal = /reversal/i.test(cell(r, 'reason type')) || /^reversal\b/i.test(cell(r, 'details'));
    const amountMinor = reversal ? (withdrawn ?? paidIn) : paidIn;
    if (!amountMinor) continue;
    if (completedAt < from || completedAt >= to) continue;
    lines.push({
      providerRef: cell(r, 'api request id') || null,
      receipt,
      kind: reversal ? 'reversal' : 'payment',
      amountMinor,
      currency: cell(r, 'currency').toUpperCase() || null,
      completedAt,
      payer: payerOf(cell(r, 'other party info')),
      reverses: reversal ? cell(r, 'linked transaction id') || null : null,
    });
  }
  return lines;
}
