// Safaricom Daraja's request bodies: M-Pesa Express (STK push) and its query, and the reversal
// (notes: templates-forms-flows-posts-payments.md §5.1). Daraja charges whole shillings, numbers
// phones as digits without '+', and stamps requests in Nairobi time.
import { PAYMENT_REFUND_RESULT_PATH, PAYMENT_RESULT_PATH } from './webhook.js';

export type TransactionType = 'CustomerPayBillOnline' | 'CustomerBuyGoodsOnline';

/** Daraja's AccountReference and TransactionDesc limits (dart_mpesa docs; UNVERIFIED against Safaricom). */
export const ACCOUNT_REFERENCE_MAX = 12;
export const TRANSACTION_DESC_MAX = 13;

// Nairobi keeps UTC+3 all year (no daylight saving), so a fixed offset is exact.
const NAIROBI_OFFSET_MS = 3 * 3600_000;

/** `yyyyMMddHHmmss` in Nairobi time, as Password and Timestamp need it. */
export function darajaTimestamp(ms: number): string {
  return new Date(ms + NAIROBI_OFFSET_MS).toISOString().replace(/[-:T]/g, '').slice(0, 14);
}

/** A Nairobi `yyyyMMddHHmmss` (a number in callbacks, e.g. 20170727154800) as an instant; null when unreadable. */
export function parseDarajaTime(v: unknown): Date | null {
  const s = typeof v === 'number' ? String(v) : typeof v === 'string' ? v : '';
  const m = /^(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})$/.exec(s);
  if (!m) return null;
  const [, y, mo, d, h, mi, se] = m.map(Number);
  const ms = Date.UTC(y, mo - 1, d, h, mi, se) - NAIROBI_OFFSET_MS;
  const at = new Date(ms);
  // Date.UTC rolls 20260231 over into March; a date that does not read back is not a date.
  return darajaTimestamp(ms) === s ? at : null;
}

/** base64(ShortCode + Passkey + Timestamp): what proves an STK request comes from the shortcode's owner. */
export function stkPassword(shortCode: string, passkey: string, timestamp: string): string {
  return Buffer.from(`${shortCode}${passkey}${timestamp}`, 'utf8').toString('base64');
}

/** +254708374149 → 254708374149. */
export function darajaMsisdn(e164: string): string {
  return e164.replace(/\D/g, '');
}

/** Minor units (hundredths) to the whole shillings Daraja charges; null when there are cents or it is not positive. */
export function wholeUnits(amountMinor: number): number | null {
  return Number.isSafeInteger(amountMinor) && amountMinor > 0 && amountMinor % 100 === 0 ? amountMinor / 100 : null;
}

/** Daraja's amounts (1.00 in callbacks, "1" in results) in minor units; null when not a number. */
export function minorOf(v: unknown): number | null {
  const n = typeof v === 'number' ? v : typeof v === 'string' && v.trim() !== '' ? Number(v) : NaN;
  return Number.isFinite(n) && n >= 0 ? Math.round(n * 100) : null;
}

/** What the payer's prompt names: our reference as far as Daraja's 12 characters allow (letters and digits only). */
export function accountReference(reference: string): string {
  return reference.replace(/[^A-Za-z0-9-]/g, '').slice(0, ACCOUNT_REFERENCE_MAX) || 'PAYMENT';
}

export function transactionDesc(note: string): string {
  return note.replace(/\s+/g, ' ').trim().slice(0, TRANSACTION_DESC_MAX) || 'Payment';
}

/** Our result URL for one payment: the reference rides in the query, since Daraja's callback does not echo it. */
export function resultUrl(publicBaseUrl: string, reference: string, path = PAYMENT_RESULT_PATH): string {
  return `${publicBaseUrl}${path}?ref=${encodeURIComponent(reference)}`;
}

export const refundResultUrl = (publicBaseUrl: string, reference: string) =>
  resultUrl(publicBaseUrl, reference, PAYMENT_REFUND_RESULT_PATH);

export interface StkPushInput {
  shortCode: string;
  passkey: string;
  transactionType: TransactionType;
  /** Whole shillings. */
  amount: number;
  msisdn: string;
  callbackUrl: string;
  accountReference: string;
  transactionDesc: string;
  timestamp: string;
}

/** POST /mpesa/stkpush/v1/processrequest. */
export function stkPushBody(i: StkPushInput): Record<string, unknown> {
  return {
    BusinessShortCode: i.shortCode,
    Password: stkPassword(i.shortCode, i.passkey, i.timestamp),
    Timestamp: i.timestamp,
    TransactionType: i.transactionType,
    Amount: i.amount,
    PartyA: i.msisdn,
    PartyB: i.shortCode,
    PhoneNumber: i.msisdn,
    CallBackURL: i.callbackUrl,
    AccountReference: i.accountReference,
    TransactionDesc: i.transactionDesc,
  };
}

/** POST /mpesa/stkpushquery/v1/query. */
export function stkQueryBody(shortCode: string, passkey: string, timestamp: string, checkoutRequestId: string): Record<string, unknown> {
  return {
    BusinessShortCode: shortCode,
    Password: stkPassword(shortCode, passkey, timestamp),
    Timestamp: timestamp,
    CheckoutRequestID: checkoutRequestId,
  };
}

export interface ReversalInput {
  initiator: string;
  securityCredential: string;
  /** The M-Pesa receipt of the payment to reverse. */
  transactionId: string;
  /** Whole shillings. */
  amount: number;
  shortCode: string;
  resultUrl: string;
  queueTimeOutUrl: string;
  remarks: string;
  occasion: string;
}

/** POST /mpesa/reversal/v1/request. `RecieverIdentifierType` is Daraja's own spelling; "11" = a paybill/till organisation. */
export function reversalBody(i: ReversalInput): Record<string, unknown> {
  return {
    Initiator: i.initiator,
    SecurityCredential: i.securityCredential,
    CommandID: 'TransactionReversal',
    TransactionID: i.transactionId,
    Amount: i.amount,
    ReceiverParty: i.shortCode,
    RecieverIdentifierType: '11',
    ResultURL: i.resultUrl,
    QueueTimeOutURL: i.queueTimeOutUrl,
    // Daraja takes up to 100 characters in each.
    Remarks: i.remarks.slice(0, 100) || 'Refund',
    Occasion: i.occasion.slice(0, 100),
  };
}
