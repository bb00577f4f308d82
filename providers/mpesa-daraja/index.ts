// The Safaricom Daraja adapter (M-Pesa Express, its query, reversals, the organisation statement as
// the report): everything about this provider, behind PaymentProvider.
import type { PaymentProvider, ProviderResult, WebhookRequest } from '../types.js';
import { DarajaClient, REVERSAL_PATH, STK_PUSH_PATH, STK_QUERY_PATH, type DarajaOptions } from './client.js';
import {
  accountReference,
  darajaMsisdn,
  darajaTimestamp,
  refundResultUrl,
  resultUrl,
  reversalBody,
  stkPushBody,
  stkQueryBody,
  transactionDesc,
  wholeUnits,
  type TransactionType,
} from './payload.js';
import { CALLBACK_SIGNATURE_HEADER, verifyCallbackSignature } from './signature.js';
import { BEING_PROCESSED_ERROR, STILL_PROCESSING_CODE, queryOutcome } from './status.js';
import { parseStatement, statementQuery, UnreadableStatement } from './statement.js';
import { DARAJA_ACCEPTED, PAYMENT_REFUND_RESULT_PATH, PAYMENT_RESULT_PATH, parseReversalResult, parseStkCallback } from './webhook.js';

export interface DarajaSettings extends DarajaOptions {
  /** Our public origin: result URLs are built on it. */
  publicBaseUrl: string;
  /** The business shortcode (paybill or till) payments go to. */
  shortCode: string;
  /** The Lipa na M-Pesa Online passkey (the STK Password's key). */
  passkey: string;
  /** The API operator that may reverse, and its password encrypted with Safaricom's certificate. */
  initiator: string;
  securityCredential: string;
  /** Key of X-Callback-Signature (./signature.ts). */
  callbackSecret: string;
  /** The currencies the account charges in (Daraja itself knows only KES). */
  currencies: readonly string[];
  transactionType?: TransactionType;
}

const refused = (code: string, message: string): ProviderResult<never> => ({ ok: false, permanent: true, code, message });

export function createMpesaDaraja(o: DarajaSettings): PaymentProvider {
  const client = new DarajaClient(o);
  const now = o.now ?? Date.now;
  const currencies = o.currencies.map((c) => c.toUpperCase());
  const amountOf = (amountMinor: number, currency: string): ProviderResult<number> => {
    if (!currencies.includes(currency.toUpperCase()))
      return refused('unsupported_currency', `This payment provider charges ${currencies.join(', ')}, not ${currency}.`);
    const whole = wholeUnits(amountMinor);
    return whole === null
      ? refused('invalid_amount', 'Mobile money charges whole units of at least 1: the amount has cents or is not positive.')
      : { ok: true, value: whole };
  };
  const answer = {
    status: 200,
    contentType: 'application/json',
    body: DARAJA_ACCEPTED,
    schema: { type: 'object', properties: { ResultCode: { type: 'integer' }, ResultDesc: { type: 'string' } } },
  };
  const query = { type: 'object', properties: { ref: { type: 'string', description: 'Our payment reference' } } };

  return {
    key: 'mpesa-daraja',
    kind: 'payment',
    currencies,
    callbacks: [
      {
        method: 'POST',
        path: PAYMENT_RESULT_PATH,
        summary: 'Payment result (M-Pesa Express STK callback, X-Callback-Signature)',
        answer: { ...answer, description: 'Result taken' },
        query,
        parse: parseStkCallback,
      },
      {
        method: 'POST',
        path: PAYMENT_REFUND_RESULT_PATH,
        summary: 'Refund result (M-Pesa reversal Result or queue timeout, X-Callback-Signature)',
        answer: { ...answer, description: 'Result taken' },
        query,
        parse: parseReversalResult,
      },
    ],

    async requestToPay(r) {
      const amount = amountOf(r.amountMinor, r.currency);
      if (!amount.ok) return amount;
      const msisdn = darajaMsisdn(r.payer);
      if (!/^\d{8,15}$/.test(msisdn)) return refused('invalid_payer', 'The payer must be a phone number in E.164.');
      const res = await client.post(
        STK_PUSH_PATH,
        stkPushBody({
          shortCode: o.shortCode,
          passkey: o.passkey,
          transactionType: o.transactionType ?? 'CustomerPayBillOnline',
          amount: amount.value,
          msisdn,
          callbackUrl: r.callbackUrl ?? resultUrl(o.publicBaseUrl, r.reference),
          accountReference: accountReference(r.reference),
          transactionDesc: transactionDesc(r.note),
          timestamp: darajaTimestamp(now()),
        }),
        // Daraja keeps no idempotency key and ignores the header; the simulator records repeats of it,
        // so a test sees a push that was sent twice.
        { 'x-idempotency-key': r.reference },
      );
      if (!res.ok) return res.failure;
      const j = res.json;
      if (String(j.ResponseCode) !== '0')
        return refused(String(j.ResponseCode ?? 'rejected'), String(j.ResponseDescription ?? 'Request refused'));
      if (typeof j.CheckoutRequestID !== 'string' || j.CheckoutRequestID === '')
        return { ok: false, permanent: false, code: 'invalid_response', message: 'The acknowledgement names no CheckoutRequestID.' };
      return { ok: true, value: { providerRef: j.CheckoutRequestID, message: String(j.CustomerMessage ?? j.ResponseDescription ?? '') } };
    },

    async status(providerRef) {
      const res = await client.post(STK_QUERY_PATH, stkQueryBody(o.shortCode, o.passkey, darajaTimestamp(now()), providerRef));
      if (!res.ok) {
        // "The transaction is being processed" comes as an error envelope with a 500: still pending.
        if (res.failure.code === BEING_PROCESSED_ERROR)
          return { ok: true, value: { state: 'pending', reason: null, providerCode: BEING_PROCESSED_ERROR, message: res.failure.message } };
        return res.failure;
      }
      // ResultCode is a string here (a number in callbacks).
      const code = res.json.ResultCode === undefined || res.json.ResultCode === null ? STILL_PROCESSING_CODE : String(res.json.ResultCode);
      const { state, reason } = queryOutcome(code);
      return { ok: true, value: { state, reason, providerCode: code, message: String(res.json.ResultDesc ?? '') } };
    },

    async refund(r) {
      const amount = amountOf(r.amountMinor, r.currency);
      if (!amount.ok) return amount;
      if (r.originalProviderRef === '') return refused('receipt_required', 'A reversal needs the M-Pesa receipt of the payment.');
      const url = r.callbackUrl ?? refundResultUrl(o.publicBaseUrl, r.reference);
      const res = await client.post(
        REVERSAL_PATH,
        reversalBody({
          initiator: o.initiator,
          securityCredential: o.securityCredential,
          transactionId: r.originalProviderRef,
          amount: amount.value,
          shortCode: o.shortCode,
          resultUrl: url,
          // A reversal that waits too long in Daraja's queue is reported here, as a failed result.
          queueTimeOutUrl: `${url}${url.includes('?') ? '&' : '?'}timeout=1`,
          remarks: r.reason,
          occasion: r.reference,
        }),
        { 'x-idempotency-key': r.reference },
      );
      if (!res.ok) return res.failure;
      const j = res.json;
      if (String(j.ResponseCode) !== '0')
        return refused(String(j.ResponseCode ?? 'rejected'), String(j.ResponseDescription ?? 'Reversal refused'));
      const ref = typeof j.ConversationID === 'string' && j.ConversationID !== '' ? j.ConversationID : null;
      if (!ref) return { ok: false, permanent: false, code: 'invalid_response', message: 'The acknowledgement names no ConversationID.' };
      return { ok: true, value: { providerRef: ref, message: String(j.ResponseDescription ?? '') } };
    },

    async report({ from, to }) {
      const res = await client.getText(statementQuery(o.shortCode, from, to), 'text/csv');
      if (!res.ok) return res.failure;
      try {
        return { ok: true, value: parseStatement(res.text, from, to) };
      } catch (err) {
        if (!(err instanceof UnreadableStatement)) throw err;
        return { ok: false, permanent: true, code: 'invalid_report', message: err.message };
      }
    },

    verifyCallback: (req: WebhookRequest) => {
      const v = req.headers[CALLBACK_SIGNATURE_HEADER];
      return verifyCallbackSignature(o.callbackSecret, req.rawBody, typeof v === 'string' ? v : undefined, now());
    },
  };
}

export { signCallback, verifyCallbackSignature, CALLBACK_SIGNATURE_HEADER } from './signature.js';
export { PAYMENT_RESULT_PATH, PAYMENT_REFUND_RESULT_PATH } from './webhook.js';
