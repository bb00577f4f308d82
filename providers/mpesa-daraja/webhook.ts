// What Daraja posts to us (after our signature was verified, ./signature.ts): the STK result
// {Body:{stkCallback:{MerchantRequestID, CheckoutRequestID, ResultCode, ResultDesc,
// CallbackMetadata?:{Item:[{Name, Value?}]}}}} and the reversal's {Result:{ResultType, ResultCode,
// ResultDesc, OriginatorConversationID, ConversationID, TransactionID, ResultParameters?:
// {ResultParameter:[{Key, Value}]}}}. Neither echoes our reference, so our callback URLs carry it
// (`?ref=`). Items are read by name, never by position; CallbackMetadata exists only on success.
import { isRecord } from '../http.js';
import { decodeUtf8 } from '../../domain/platform/utf8.js';
import { MalformedWebhook, type PaymentResultEvent, type RefundResultEvent, type WebhookRequest } from '../types.js';
import { minorOf, parseDarajaTime } from './payload.js';
import { callbackOutcome } from './status.js';

export const PAYMENT_RESULT_PATH = '/providers/payments/result';
export const PAYMENT_REFUND_RESULT_PATH = '/providers/payments/refund-result';

/** Daraja's documented acknowledgement: anything else (or no 200) makes it retry. */
export const DARAJA_ACCEPTED = '{"ResultCode":0,"ResultDesc":"Accepted"}';

const rec = (v: unknown): Record<string, unknown> => (isRecord(v) ? v : {});
const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const codeOf = (v: unknown): string | null =>
  typeof v === 'number' && Number.isInteger(v) ? String(v) : typeof v === 'string' && v !== '' ? v : null;
const str = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null);

function readJson(req: WebhookRequest): unknown {
  const text = decodeUtf8(req.rawBody);
  if (text === null) throw new MalformedWebhook('The request body is not valid UTF-8.');
  try {
    return JSON.parse(text);
  } catch {
    throw new MalformedWebhook('The request body is not valid JSON.');
  }
}

/** Our reference from the callback URL's `?ref=`; null when absent. */
export function referenceOf(url: string): string | null {
  const q = url.indexOf('?');
  if (q < 0) return null;
  return new URLSearchParams(url.slice(q + 1)).get('ref') || null;
}

/** The STK push result. */
export function parseStkCallback(req: WebhookRequest): PaymentResultEvent[] {
  const cb = rec(rec(rec(readJson(req)).Body).stkCallback);
  const providerRef = str(cb.CheckoutRequestID);
  const code = codeOf(cb.ResultCode);
  if (!providerRef || code === null) throw new MalformedWebhook('Body.stkCallback needs CheckoutRequestID and ResultCode.');
  const items = new Map<string, unknown>();
  for (const item of list(rec(cb.CallbackMetadata).Item)) {
    const name = str(rec(item).Name);
    if (name) items.set(name, rec(item).Value);
  }
  const { state, reason } = callbackOutcome(code);
  const phone = items.get('PhoneNumber');
  const payer = typeof phone === 'number' || typeof phone === 'string' ? `+${String(phone).replace(/\D/g, '')}` : null;
  return [
    {
      type: 'payment_result',
      providerRef,
      reference: referenceOf(req.url),
      outcome: state,
      reason,
      providerCode: code,
      message: str(cb.ResultDesc) ?? '',
      amountMinor: items.has('Amount') ? minorOf(items.get('Amount')) : null,
      receipt: state === 'paid' ? str(items.get('MpesaReceiptNumber')) : null,
      payer: payer === '+' ? null : payer,
      occurredAt: parseDarajaTime(items.get('TransactionDate')),
    },
  ];
}

/** A reversal's result (ResultURL) or its queue timeout (QueueTimeOutURL, the same envelope with a failure code). */
export function parseReversalResult(req: WebhookRequest): RefundResultEvent[] {
  const r = rec(rec(readJson(req)).Result);
  const providerRef = str(r.ConversationID) ?? str(r.OriginatorConversationID);
  const code = codeOf(r.ResultCode);
  if (!providerRef || code === null) throw new MalformedWebhook('Result needs ConversationID and ResultCode.');
  const params = new Map<string, unknown>();
  for (const p of list(rec(r.ResultParameters).ResultParameter)) {
    const key = str(rec(p).Key);
    if (key) params.set(key, rec(p).Value);
  }
  const ok = code === '0';
  return [
    {
      type: 'refund_result',
      providerRef,
      reference: referenceOf(req.url),
      outcome: ok ? 'refunded' : 'failed',
      providerCode: code,
      message: str(r.ResultDesc) ?? '',
      amountMinor: params.has('Amount') ? minorOf(params.get('Amount')) : null,
      receipt: ok ? str(r.TransactionID) : null,
      occurredAt: parseDarajaTime(params.get('TransCompletedTime')),
    },
  ];
}
