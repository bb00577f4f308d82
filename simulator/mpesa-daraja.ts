// Safaricom Daraja (M-Pesa Express, its query, reversals) under /daraja, with the shapes of notes
// templates-forms-flows-posts-payments.md §5.1:
//
//   GET  /oauth/v1/generate?grant_type=client_credentials   Basic base64(key:secret)
//          → {access_token, expires_in: "3599"} (a string, as Daraja sends it)
//   POST /mpesa/stkpush/v1/processrequest   Bearer; {BusinessShortCode, Password, Timestamp,
//          TransactionType, Amount, PartyA, PartyB, PhoneNumber, CallBackURL, AccountReference,
//          TransactionDesc} → {MerchantRequestID, CheckoutRequestID, ResponseCode: "0",
//          ResponseDescription, CustomerMessage}; paymentResultDelayMs later the payer "answers" and
//          the signed result {Body: {stkCallback: {…, ResultCode, ResultDesc, CallbackMetadata?}}}
//          goes to CallBackURL
//   POST /mpesa/stkpushquery/v1/query   {BusinessShortCode, Password, Timestamp, CheckoutRequestID}
//          → while pending 500 {requestId, errorCode: "500.001.1001", errorMessage: "The transaction
//          is being processed"}; settled 200 {ResponseCode, ResponseDescription, MerchantRequestID,
//          CheckoutRequestID, ResultCode (a string), ResultDesc}
//   POST /mpesa/reversal/v1/request   {Initiator, SecurityCredential, CommandID: "TransactionReversal",
//          TransactionID (the receipt), Amount, ReceiverParty, RecieverIdentifierType, ResultURL,
//          QueueTimeOutURL, Remarks, Occasion} → {OriginatorConversationID, ConversationID,
//          ResponseCode: "0", ResponseDescription}; later {Result: {ResultType, ResultCode,
//          ResultDesc, OriginatorConversationID, ConversationID, TransactionID, ResultParameters,
//          ReferenceData}} to ResultURL
//
// Errors use Daraja's envelope {requestId, errorCode, errorMessage}; the HTTP status is the code's
// first segment (400.002.02 → 400, 404.001.03 → 404, 500.001.1001 → 500).
//
// Choices where the notes are thin (docs/payments.md, "Provider"): Daraja signs no callback, so every
// callback here carries our X-Callback-Signature (signing.ts, paymentJson). Partial reversals are
// accepted (UNVERIFIED on Daraja) up to what is left of the payment; an unknown receipt is R000002,
// more than is left R000001, a wrong initiator or credential 2001. Phone numbers of 10 to 15 digits
// are taken (Daraja itself takes Kenyan 2547…/2541… only). Like Daraja, pushes are never
// deduplicated; a repeated X-Idempotency-Key is counted on the payment it repeats (`duplicates`).
import { Router } from '@koa/router';
import { randomBytes, randomInt, randomUUID } from 'node:crypto';
import type { Context as KoaContext } from 'koa';
import { readJson } from './body.js';
import {
  PAYMENT_DELIVERY_FAULT_KINDS,
  PAYMENT_PUSH_FAULT_KINDS,
  PAYMENT_RESULT_FAULT_KINDS,
  PAYMENT_REVERSAL_FAULT_KINDS,
  type Fault,
} from './faults.js';
import { isObj } from './graph-errors.js';
import type { SimulatorOptions } from './options.js';
import { paymentJson, type SignedRequest } from './signing.js';
import type { CallbackRecord, SimState } from './state.js';
import { digitsOf, isHttpUrl } from './util.js';
import { deliver } from './webhooks.js';
import {
  STATEMENT_PATH,
  noAmendment,
  serveStatement,
  statementControls,
  type ExtraLine,
  type StatementAmendment,
} from './mpesa-statement.js';

type Context = KoaContext & { params: Record<string, string> };

/** Daraja's words for the result codes the simulator produces. */
export const RESULT_DESCRIPTIONS: Record<number, string> = {
  0: 'The service request is processed successfully.',
  1: 'The balance is insufficient for the transaction.',
  1001: 'Unable to lock subscriber, a transaction is already in process for the current subscriber',
  1019: 'Transaction has expired',
  1025: 'An error occurred while sending a push request',
  1032: 'Request cancelled by user',
  1037: 'DS timeout user cannot be reached',
  2001: 'The initiator information is invalid.',
  9999: 'An error occurred while sending a push request',
};
const FAULT_RESULT: Record<string, number> = { insufficient_funds: 1, payer_cancels: 1032, no_answer: 1037, expiry: 1019, wrong_pin: 2001 };
const ACCEPTED = 'Success. Request accepted for processing';

export interface SimPayment {
  seq: number;
  merchantRequestId: string;
  checkoutRequestId: string;
  shortCode: string;
  phone: string;
  /** Whole shillings. */
  amount: number;
  /** What the result reports paid, whole shillings, when a `payment_result` fault's `amount` says another than the push's. */
  reportedAmount: number | null;
  accountReference: string;
  transactionDesc: string;
  callbackUrl: string;
  idempotencyKey: string | null;
  /** Later pushes that carried the same X-Idempotency-Key (each a real push, as on Daraja). */
  duplicates: number;
  state: 'pending' | 'settled';
  resultCode: number | null;
  resultDesc: string | null;
  receipt: string | null;
  /** Whole shillings reversed so far. */
  reversed: number;
  delivery: 'normal' | 'duplicate' | 'late' | 'none';
  /** The last signed callback (what /callback replays byte for byte). */
  callback: SignedRequest | null;
  callbacksSent: number;
  createdAt: number;
  settledAt: number | null;
  /** How the organisation statement shows it (controls under /_sim/payments/{id}/statement). */
  statement: StatementAmendment;
}

export interface SimReversal {
  seq: number;
  originatorConversationId: string;
  conversationId: string;
  transactionId: string;
  amount: number;
  resultUrl: string;
  queueTimeOutUrl: string;
  remarks: string;
  occasion: string;
  state: 'pending' | 'settled';
  resultCode: number | string | null;
  resultDesc: string | null;
  receipt: string | null;
  createdAt: number;
  settledAt: number | null;
}

export interface PaymentsConfig {
  resultDelayMs: number;
  lateCallbackMs: number;
  tokenTtlSeconds: number;
  /** The statement's `API Request ID` column (the simulator's own); false: the columns of Safaricom's export only. */
  statementRequestIds: boolean;
}

export interface PaymentsState {
  config: PaymentsConfig;
  payments: SimPayment[];
  byCheckout: Map<string, SimPayment>;
  byReceipt: Map<string, SimPayment>;
  byKey: Map<string, SimPayment>;
  reversals: SimReversal[];
  /** Money paid to the shortcode without an API request (a payer paying the paybill directly): statement lines only. */
  extraLines: ExtraLine[];
  /** access token → expiry (ms). */
  tokens: Map<string, number>;
}

export function createPaymentsState(o: SimulatorOptions): PaymentsState {
  return {
    config: {
      resultDelayMs: o.paymentResultDelayMs,
      lateCallbackMs: o.paymentLateCallbackMs,
      tokenTtlSeconds: o.paymentTokenTtlSeconds,
      statementRequestIds: true,
    },
    payments: [],
    byCheckout: new Map(),
    byReceipt: new Map(),
    byKey: new Map(),
    reversals: [],
    extraLines: [],
    tokens: new Map(),
  };
}

/** Forgets payments, reversals and tokens; the timing configuration survives, as the other fakes' does. */
export function resetPaymentsState(s: PaymentsState): void {
  s.payments.length = 0;
  s.byCheckout.clear();
  s.byReceipt.clear();
  s.byKey.clear();
  s.reversals.length = 0;
  s.extraLines.length = 0;
  s.tokens.clear();
}

// --- Identifiers and times in Daraja's formats -----------------------------------------------------

const NAIROBI_OFFSET_MS = 3 * 3600_000;
/** `yyyyMMddHHmmss` in Nairobi time (UTC+3 all year). */
export function nairobiStamp(ms: number = Date.now()): string {
  return new Date(ms + NAIROBI_OFFSET_MS).toISOString().replace(/[-:T]/g, '').slice(0, 14);
}
const RECEIPT_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
/** M-Pesa receipts are 10 upper-case letters and digits (e.g. LGR7OWQX0R). */
const receipt = () => Array.from({ length: 10 }, () => RECEIPT_ALPHABET[randomInt(RECEIPT_ALPHABET.length)]).join('');
const merchantRequestId = () => `${randomInt(10_000, 99_999)}-${randomInt(10_000_000, 99_999_999)}-1`;
/** e.g. ws_CO_03072023054410314768168060: ddMMyyyyHHmmss, three more digits and the payer's number. */
function checkoutRequestId(phone: string): string {
  const s = nairobiStamp();
  return `ws_CO_${s.slice(6, 8)}${s.slice(4, 6)}${s.slice(0, 4)}${s.slice(8)}${randomInt(100, 999)}${phone.slice(-9)}${randomInt(10, 99)}`;
}
const conversationId = () => `AG_${nairobiStamp().slice(0, 8)}_${randomBytes(10).toString('hex')}`;

function darajaError(ctx: Context, errorCode: string, errorMessage: string): void {
  ctx.status = Number(errorCode.split('.')[0]) || 400;
  ctx.body = { requestId: `${randomInt(1000, 99_999)}-${randomInt(1_000_000, 9_999_999)}-1`, errorCode, errorMessage };
}
const badRequest = (ctx: Context, what: string) => darajaError(ctx, '400.002.02', `Bad Request - Invalid ${what}`);

// --- Routes ------------------------------------------------------------------------------------------

export function darajaRouter(state: SimState): Router {
  const r = new Router({ prefix: '/daraja' });
  const o = state.options;
  const ps = state.payments;

  /** Whether the bearer token is one we issued and is still alive; answers 404.001.03 when not. */
  const authorised = (ctx: Context): boolean => {
    const auth = ctx.get('authorization');
    const token = auth.startsWith('Bearer ') ? auth.slice(7).trim() : '';
    const until = ps.tokens.get(token);
    if (until !== undefined && until > Date.now()) return true;
    darajaError(ctx, '404.001.03', 'Invalid Access Token');
    return false;
  };
  const passwordOk = (b: Record<string, unknown>): boolean =>
    typeof b.Timestamp === 'string' &&
    /^\d{14}$/.test(b.Timestamp) &&
    b.Password === Buffer.from(`${o.paymentShortCode}${o.paymentPasskey}${b.Timestamp}`, 'utf8').toString('base64');

  r.get('/oauth/v1/generate', (ctx) => {
    if (ctx.query.grant_type !== 'client_credentials') return darajaError(ctx, '400.008.02', 'Invalid grant type passed');
    const auth = ctx.get('authorization');
    const [key, secret] = auth.startsWith('Basic ') ? Buffer.from(auth.slice(6).trim(), 'base64').toString('utf8').split(':') : [];
    if (key !== o.paymentConsumerKey || secret !== o.paymentConsumerSecret)
      return darajaError(ctx, '400.008.01', 'Invalid Authentication passed');
    const token = randomBytes(21).toString('base64url');
    ps.tokens.set(token, Date.now() + ps.config.tokenTtlSeconds * 1000);
    ctx.body = { access_token: token, expires_in: String(ps.config.tokenTtlSeconds) };
  });

  r.post('/mpesa/stkpush/v1/processrequest', async (ctx) => {
    const b = await readJson(ctx);
    if (!authorised(ctx)) return;
    if (!isObj(b)) return badRequest(ctx, 'request body');
    const phone = typeof b.PhoneNumber === 'string' || typeof b.PhoneNumber === 'number' ? String(b.PhoneNumber) : '';
    const amount =
      typeof b.Amount === 'number' ? b.Amount : typeof b.Amount === 'string' && /^\d+$/.test(b.Amount) ? Number(b.Amount) : NaN;
    if (String(b.BusinessShortCode) !== o.paymentShortCode) return badRequest(ctx, 'BusinessShortCode');
    if (!passwordOk(b)) return badRequest(ctx, 'Password');
    if (b.TransactionType !== 'CustomerPayBillOnline' && b.TransactionType !== 'CustomerBuyGoodsOnline')
      return badRequest(ctx, 'TransactionType');
    if (!Number.isInteger(amount) || amount < 1) return badRequest(ctx, 'Amount');
    if (!/^\d{10,15}$/.test(phone) || String(b.PartyA) !== phone) return badRequest(ctx, 'PhoneNumber');
    if (String(b.PartyB) !== o.paymentShortCode) return badRequest(ctx, 'PartyB');
    if (!isHttpUrl(b.CallBackURL)) return badRequest(ctx, 'CallBackURL');
    if (typeof b.AccountReference !== 'string' || b.AccountReference === '' || b.AccountReference.length > 12)
      return badRequest(ctx, 'AccountReference');
    if (typeof b.TransactionDesc !== 'string' || b.TransactionDesc === '' || b.TransactionDesc.length > 13)
      return badRequest(ctx, 'TransactionDesc');

    const pushFault = state.faults.take('payment', phone, PAYMENT_PUSH_FAULT_KINDS);
    if (pushFault?.kind === 'payment_unavailable') return darajaError(ctx, '503.001.01', pushFault.message ?? 'Service Unavailable');
    const resultFault = state.faults.take('payment', phone, PAYMENT_RESULT_FAULT_KINDS);
    const deliveryFault = state.faults.take('payment', phone, PAYMENT_DELIVERY_FAULT_KINDS);

    const key = ctx.get('x-idempotency-key') || null;
    const repeated = key ? ps.byKey.get(key) : undefined;
    if (repeated) repeated.duplicates += 1;
    const p: SimPayment = {
      seq: state.nextSeq(),
      merchantRequestId: merchantRequestId(),
      checkoutRequestId: checkoutRequestId(phone),
      shortCode: o.paymentShortCode,
      phone,
      amount,
      reportedAmount: resultFault?.amount ?? null,
      accountReference: b.AccountReference,
      transactionDesc: b.TransactionDesc,
      callbackUrl: b.CallBackURL,
      idempotencyKey: key,
      duplicates: 0,
      state: 'pending',
      resultCode: null,
      resultDesc: null,
      receipt: null,
      reversed: 0,
      delivery: deliveryOf(deliveryFault),
      callback: null,
      callbacksSent: 0,
      createdAt: Date.now(),
      settledAt: null,
      statement: noAmendment(),
    };
    ps.payments.push(p);
    ps.byCheckout.set(p.checkoutRequestId, p);
    if (key && !repeated) ps.byKey.set(key, p);
    const code = resultCodeOf(resultFault);
    state.life.spawn('payment result', async (gen) => {
      if (!(await gen.sleep(ps.config.resultDelayMs))) return;
      // A test may have settled it through /_sim/payments/{id}/complete meanwhile.
      if (p.state === 'pending') await settle(state, p, code, resultFault?.message ?? null);
    });

    if (pushFault?.kind === 'payment_timeout') {
      // The push was made (the payer is being asked); only its answer is late, past the caller's patience.
      if (!(await state.life.sleep(o.timeoutFaultMs))) return darajaError(ctx, '503.001.01', 'Service Unavailable');
    }
    ctx.body = {
      MerchantRequestID: p.merchantRequestId,
      CheckoutRequestID: p.checkoutRequestId,
      ResponseCode: '0',
      ResponseDescription: ACCEPTED,
      CustomerMessage: ACCEPTED,
    };
  });

  r.post('/mpesa/stkpushquery/v1/query', async (ctx) => {
    const b = await readJson(ctx);
    if (!authorised(ctx)) return;
    if (!isObj(b)) return badRequest(ctx, 'request body');
    if (String(b.BusinessShortCode) !== o.paymentShortCode) return badRequest(ctx, 'BusinessShortCode');
    if (!passwordOk(b)) return badRequest(ctx, 'Password');
    const p = typeof b.CheckoutRequestID === 'string' ? ps.byCheckout.get(b.CheckoutRequestID) : undefined;
    if (!p) return badRequest(ctx, 'CheckoutRequestID');
    if (p.state === 'pending') return darajaError(ctx, '500.001.1001', 'The transaction is being processed');
    ctx.body = {
      ResponseCode: '0',
      ResponseDescription: 'The service request has been accepted successsfully',
      MerchantRequestID: p.merchantRequestId,
      CheckoutRequestID: p.checkoutRequestId,
      // A string here, a number in the callback, as on Daraja.
      ResultCode: String(p.resultCode),
      ResultDesc: p.resultDesc,
    };
  });

  r.post('/mpesa/reversal/v1/request', async (ctx) => {
    const b = await readJson(ctx);
    if (!authorised(ctx)) return;
    if (!isObj(b)) return badRequest(ctx, 'request body');
    const amount =
      typeof b.Amount === 'number' ? b.Amount : typeof b.Amount === 'string' && /^\d+$/.test(b.Amount) ? Number(b.Amount) : NaN;
    if (b.CommandID !== 'TransactionReversal') return badRequest(ctx, 'CommandID');
    if (typeof b.TransactionID !== 'string' || b.TransactionID === '') return badRequest(ctx, 'TransactionID');
    if (!Number.isInteger(amount) || amount < 1) return badRequest(ctx, 'Amount');
    if (String(b.ReceiverParty) !== o.paymentShortCode) return badRequest(ctx, 'ReceiverParty');
    if (!isHttpUrl(b.ResultURL)) return badRequest(ctx, 'ResultURL');
    if (!isHttpUrl(b.QueueTimeOutURL)) return badRequest(ctx, 'QueueTimeOutURL');
    // The answer's faults, armed for the reversed payment's payer once it is paid (a push would take them first).
    const answerFault = state.faults.take('payment', ps.byReceipt.get(b.TransactionID)?.phone ?? null, PAYMENT_PUSH_FAULT_KINDS);
    if (answerFault?.kind === 'payment_unavailable') return darajaError(ctx, '503.001.01', answerFault.message ?? 'Service Unavailable');
    const v: SimReversal = {
      seq: state.nextSeq(),
      originatorConversationId: randomUUID(),
      conversationId: conversationId(),
      transactionId: b.TransactionID,
      amount,
      resultUrl: b.ResultURL,
      queueTimeOutUrl: b.QueueTimeOutURL,
      remarks: typeof b.Remarks === 'string' ? b.Remarks : '',
      occasion: typeof b.Occasion === 'string' ? b.Occasion : '',
      state: 'pending',
      resultCode: null,
      resultDesc: null,
      receipt: null,
      createdAt: Date.now(),
      settledAt: null,
    };
    ps.reversals.push(v);
    const credentialsOk = b.Initiator === o.paymentInitiator && b.SecurityCredential === o.paymentSecurityCredential;
    state.life.spawn('reversal result', async (gen) => {
      if (!(await gen.sleep(ps.config.resultDelayMs))) return;
      await settleReversal(state, v, credentialsOk);
    });
    if (answerFault?.kind === 'payment_timeout') {
      // The reversal is made and its result posted; only this answer is late, past the caller's patience.
      if (!(await state.life.sleep(o.timeoutFaultMs))) return darajaError(ctx, '503.001.01', 'Service Unavailable');
    }
    ctx.body = {
      OriginatorConversationID: v.originatorConversationId,
      ConversationID: v.conversationId,
      ResponseCode: '0',
      ResponseDescription: 'Accept the service request successfully.',
    };
  });

  // The organisation statement (the org portal's CSV download; Daraja has no such API): mpesa-statement.ts.
  r.get(STATEMENT_PATH, (ctx) => {
    if (!authorised(ctx)) return;
    serveStatement(ctx, state, (code, message) => darajaError(ctx, code, message), receipt);
  });

  return r;
}

function deliveryOf(f: Fault | null): SimPayment['delivery'] {
  if (f?.kind === 'duplicate_callback') return 'duplicate';
  if (f?.kind === 'late_callback') return 'late';
  if (f?.kind === 'no_callback') return 'none';
  return 'normal';
}

function resultCodeOf(f: Fault | null): number {
  if (!f) return 0;
  if (f.kind === 'payment_result') return f.code ?? 0;
  return FAULT_RESULT[f.kind] ?? 0;
}

/** The STK result callback exactly as Daraja posts it (CallbackMetadata only on success), signed by us. */
function stkCallback(state: SimState, p: SimPayment, at: number): SignedRequest {
  const stk: Record<string, unknown> = {
    MerchantRequestID: p.merchantRequestId,
    CheckoutRequestID: p.checkoutRequestId,
    ResultCode: p.resultCode,
    ResultDesc: p.resultDesc,
  };
  if (p.resultCode === 0) {
    stk.CallbackMetadata = {
      Item: [
        { Name: 'Amount', Value: p.reportedAmount ?? p.amount },
        { Name: 'MpesaReceiptNumber', Value: p.receipt },
        { Name: 'Balance' },
        { Name: 'TransactionDate', Value: Number(nairobiStamp(at)) },
        { Name: 'PhoneNumber', Value: Number(p.phone) },
      ],
    };
  }
  return paymentJson(state.options.paymentCallbackSecret, { Body: { stkCallback: stk } });
}

async function post(
  state: SimState,
  kind: CallbackRecord['kind'],
  id: string,
  url: string,
  request: SignedRequest,
): Promise<CallbackRecord> {
  return deliver(state, { provider: 'payment', kind, messageId: id, url, request });
}

/** The payer answered (or did not): the result is fixed, the query reports it, and the callback goes out as the delivery fault says. */
export async function settle(state: SimState, p: SimPayment, code: number, desc: string | null): Promise<void> {
  const at = Date.now();
  p.state = 'settled';
  p.settledAt = at;
  p.resultCode = code;
  p.resultDesc = desc ?? RESULT_DESCRIPTIONS[code] ?? `Simulated result ${code}`;
  if (code === 0) {
    p.receipt = receipt();
    state.payments.byReceipt.set(p.receipt, p);
  }
  if (p.delivery === 'none') return;
  if (p.delivery === 'late' && !(await state.life.sleep(state.payments.config.lateCallbackMs))) return;
  p.callback = stkCallback(state, p, at);
  p.callbacksSent += 1;
  await post(state, 'payment.result', p.checkoutRequestId, p.callbackUrl, p.callback);
  if (p.delivery === 'duplicate') {
    // Daraja retries what it believes unanswered; the second copy is signed anew, so it is fresh.
    p.callback = stkCallback(state, p, at);
    p.callbacksSent += 1;
    await post(state, 'payment.result', p.checkoutRequestId, p.callbackUrl, p.callback);
  }
}

async function settleReversal(state: SimState, v: SimReversal, credentialsOk: boolean): Promise<void> {
  const p = state.payments.byReceipt.get(v.transactionId);
  const fault = state.faults.take('payment', p?.phone ?? null, PAYMENT_REVERSAL_FAULT_KINDS);
  let code: number | string = 0;
  let desc = RESULT_DESCRIPTIONS[0];
  if (!credentialsOk) [code, desc] = [2001, RESULT_DESCRIPTIONS[2001]];
  else if (fault)
    [code, desc] = [fault.code ?? 2001, fault.message ?? RESULT_DESCRIPTIONS[fault.code ?? 2001] ?? 'Simulated reversal failure'];
  else if (!p) [code, desc] = ['R000002', 'The OriginalTransID is invalid.'];
  else if (v.amount > p.amount - p.reversed) [code, desc] = ['R000001', 'The transaction has already been reversed.'];
  v.state = 'settled';
  v.settledAt = Date.now();
  v.resultCode = code;
  v.resultDesc = desc;
  const ok = code === 0;
  if (ok && p) {
    p.reversed += v.amount;
    v.receipt = receipt();
  }
  const result: Record<string, unknown> = {
    ResultType: 0,
    ResultCode: code,
    ResultDesc: desc,
    OriginatorConversationID: v.originatorConversationId,
    ConversationID: v.conversationId,
    TransactionID: v.receipt ?? receipt(),
    ReferenceData: { ReferenceItem: { Key: 'QueueTimeoutURL', Value: v.queueTimeOutUrl } },
  };
  if (ok && p) {
    result.ResultParameters = {
      ResultParameter: [
        { Key: 'DebitAccountBalance', Value: 'Utility Account|KES|0.00|0.00|0.00|0.00' },
        { Key: 'Amount', Value: v.amount },
        { Key: 'TransCompletedTime', Value: Number(nairobiStamp()) },
        { Key: 'OriginalTransactionID', Value: v.transactionId },
        { Key: 'Charge', Value: 0 },
        { Key: 'CreditPartyPublicName', Value: `${p.phone} - Simulated Payer` },
        { Key: 'DebitPartyPublicName', Value: `${p.shortCode} - Simulated Business` },
      ],
    };
  }
  await post(
    state,
    'payment.reversal',
    v.conversationId,
    v.resultUrl,
    paymentJson(state.options.paymentCallbackSecret, { Result: result }),
  );
}

// --- Controls (/_sim/payments) ---------------------------------------------------------------------

function paymentView({ callback, ...p }: SimPayment): Record<string, unknown> {
  return { ...p, lastCallback: callback ? callback.body : null };
}

export function paymentsSimRouter(state: SimState): Router {
  const r = new Router({ prefix: '/_sim/payments' });
  const ps = state.payments;

  r.get('/', (ctx) => {
    const phone = typeof ctx.query.phone === 'string' ? digitsOf(ctx.query.phone) : null;
    const list = ps.payments.filter((p) => !phone || p.phone === phone);
    ctx.body = { count: list.length, payments: list.map(paymentView) };
  });

  r.get('/config', (ctx) => {
    ctx.body = { ...ps.config };
  });

  r.post('/config', async (ctx) => {
    const input = await readJson(ctx);
    if (!isObj(input)) {
      ctx.status = 400;
      ctx.body = { error: 'body must be a JSON object' };
      return;
    }
    const errors: string[] = [];
    const next = { ...ps.config };
    for (const key of ['resultDelayMs', 'lateCallbackMs', 'tokenTtlSeconds'] as const) {
      const v = input[key];
      if (v === undefined) continue;
      if (typeof v !== 'number' || !Number.isFinite(v) || v < 0) errors.push(`${key} must be a number ≥ 0`);
      else next[key] = v;
    }
    if (input.statementRequestIds !== undefined) {
      if (typeof input.statementRequestIds !== 'boolean') errors.push('statementRequestIds must be a boolean');
      else next.statementRequestIds = input.statementRequestIds;
    }
    if (errors.length > 0) {
      ctx.status = 400;
      ctx.body = { error: errors.join('; ') };
      return;
    }
    Object.assign(ps.config, next);
    ctx.body = { ...ps.config };
  });

  r.get('/reversals', (ctx) => {
    ctx.body = { count: ps.reversals.length, reversals: ps.reversals };
  });

  /** Every token issued so far stops working (the adapter must fetch a new one and try again). */
  r.post('/tokens/expire', (ctx) => {
    const n = ps.tokens.size;
    ps.tokens.clear();
    ctx.body = { expired: n };
  });

  // Before /:id, which would take `statement` for a CheckoutRequestID.
  statementControls(r, state, receipt);

  r.get('/:id', (ctx: Context) => {
    const p = ps.byCheckout.get(ctx.params.id!);
    if (!p) {
      ctx.status = 404;
      ctx.body = { error: 'no such CheckoutRequestID' };
      return;
    }
    ctx.body = paymentView(p);
  });

  /** The payer answers now (with `code`, default 0) instead of after resultDelayMs: a test holds a push with a long delay, then lets it go. */
  r.post('/:id/complete', async (ctx: Context) => {
    const p = ps.byCheckout.get(ctx.params.id!);
    const input = await readJson(ctx);
    const code = isObj(input) && input.code !== undefined ? input.code : 0;
    if (!p) {
      ctx.status = 404;
      ctx.body = { error: 'no such CheckoutRequestID' };
    } else if (p.state !== 'pending') {
      ctx.status = 409;
      ctx.body = { error: 'the payment is already settled' };
    } else if (typeof code !== 'number' || !Number.isInteger(code) || code < 0) {
      ctx.status = 400;
      ctx.body = { error: 'code must be a ResultCode (a non-negative integer)' };
    } else {
      await settle(state, p, code, null);
      ctx.status = 202;
      ctx.body = paymentView(p);
    }
  });

  /** Posts the last callback again, byte for byte and with its original signature: a replay. */
  r.post('/:id/callback', async (ctx: Context) => {
    const p = ps.byCheckout.get(ctx.params.id!);
    if (!p?.callback) {
      ctx.status = 404;
      ctx.body = { error: 'no callback was sent for that CheckoutRequestID' };
      return;
    }
    p.callbacksSent += 1;
    const record = await post(state, 'payment.result', p.checkoutRequestId, p.callbackUrl, p.callback);
    ctx.body = { delivered: record.delivered, statusCode: record.statusCode, attempts: record.attempts.length };
  });

  return r;
}
