import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { createMpesaDaraja } from '../../providers/mpesa-daraja/index.js';
import {
  accountReference,
  darajaMsisdn,
  darajaTimestamp,
  minorOf,
  parseDarajaTime,
  resultUrl,
  reversalBody,
  stkPassword,
  stkPushBody,
  transactionDesc,
  wholeUnits,
} from '../../providers/mpesa-daraja/payload.js';
import { CALLBACK_TOLERANCE_SECONDS, signCallback, verifyCallbackSignature } from '../../providers/mpesa-daraja/signature.js';
import { callbackOutcome, queryOutcome } from '../../providers/mpesa-daraja/status.js';
import { parseReversalResult, parseStkCallback } from '../../providers/mpesa-daraja/webhook.js';
import { MalformedWebhook, type WebhookRequest } from '../../providers/types.js';

// The Daraja adapter against the shapes of notes §5.1: request bodies, the ResultCode map, our
// callback signature (valid, forged, unsigned, stale), the callbacks' parsing and the refusals it
// makes before calling anyone. On the wire against the simulator: simulator-mpesa-daraja.test.ts.

const SECRET = 'test-payment-callback-secret';
const NOW = Date.UTC(2026, 10, 27, 9, 30, 15);
const adapter = createMpesaDaraja({
  // Nothing listens there: every test below is answered before a call, or makes none.
  baseUrl: 'http://127.0.0.1:9',
  consumerKey: 'k',
  consumerSecret: 's',
  shortCode: '174379',
  passkey: 'pk',
  initiator: 'testapi',
  securityCredential: 'cred',
  callbackSecret: SECRET,
  currencies: ['kes', 'TZS'],
  publicBaseUrl: 'https://api.example.com',
  now: () => NOW,
  timeoutMs: 1000,
});

const request = (body: unknown, headers: Record<string, string> = {}, url = '/providers/payments/result?ref=PAY-1-2'): WebhookRequest => ({
  url,
  headers,
  rawBody: Buffer.from(typeof body === 'string' ? body : JSON.stringify(body)),
});
const signed = (body: unknown, at = Math.floor(NOW / 1000), secret = SECRET, url?: string): WebhookRequest => {
  const raw = JSON.stringify(body);
  return request(raw, { 'x-callback-signature': signCallback(secret, raw, at) }, url);
};

const PAID = {
  Body: {
    stkCallback: {
      MerchantRequestID: '19465-780693-1',
      CheckoutRequestID: 'ws_CO_27072017154747416',
      ResultCode: 0,
      ResultDesc: 'The service request is processed successfully.',
      CallbackMetadata: {
        // Out of the documented order on purpose: items are read by name.
        Item: [
          { Name: 'PhoneNumber', Value: 254721566839 },
          { Name: 'Amount', Value: 1.0 },
          { Name: 'MpesaReceiptNumber', Value: 'LGR7OWQX0R' },
          { Name: 'Balance' },
          { Name: 'TransactionDate', Value: 20170727154800 },
        ],
      },
    },
  },
};
const CANCELLED = {
  Body: {
    stkCallback: {
      MerchantRequestID: '8555-67195-1',
      CheckoutRequestID: 'ws_CO_27072017151044001',
      ResultCode: 1032,
      ResultDesc: 'Request cancelled by user',
    },
  },
};

test('timestamps are Nairobi time (UTC+3) in yyyyMMddHHmmss, and read back to the same instant', () => {
  assert.equal(darajaTimestamp(NOW), '20261127123015');
  assert.equal(parseDarajaTime(20170727154800)?.toISOString(), '2017-07-27T12:48:00.000Z');
  assert.equal(parseDarajaTime('20261127123015')?.getTime(), NOW);
  for (const bad of [20260231120000, '2026', null, undefined, 'abc', 1.5]) assert.equal(parseDarajaTime(bad), null, String(bad));
});

test('the STK push body: Password = base64(shortcode + passkey + timestamp), whole shillings, digits-only phone, our result URL with the reference', () => {
  const ts = darajaTimestamp(NOW);
  assert.equal(Buffer.from(stkPassword('174379', 'pk', ts), 'base64').toString(), `174379pk${ts}`);
  const body = stkPushBody({
    shortCode: '174379',
    passkey: 'pk',
    transactionType: 'CustomerPayBillOnline',
    amount: 1500,
    msisdn: darajaMsisdn('+254708374149'),
    callbackUrl: resultUrl('https://api.example.com', 'PAY-12-34'),
    accountReference: accountReference('PAY-1234567890-99'),
    transactionDesc: transactionDesc('  Order   A-123 for the shop '),
    timestamp: ts,
  });
  assert.deepEqual(body, {
    BusinessShortCode: '174379',
    Password: stkPassword('174379', 'pk', ts),
    Timestamp: ts,
    TransactionType: 'CustomerPayBillOnline',
    Amount: 1500,
    PartyA: '254708374149',
    PartyB: '174379',
    PhoneNumber: '254708374149',
    CallBackURL: 'https://api.example.com/providers/payments/result?ref=PAY-12-34',
    AccountReference: 'PAY-12345678',
    TransactionDesc: 'Order A-123 f',
  });
  assert.equal(accountReference('$$$'), 'PAYMENT', 'never empty');
  assert.equal(transactionDesc(''), 'Payment');
});

test('amounts: minor units to whole shillings (cents refused), Daraja amounts back to minor units', () => {
  assert.equal(wholeUnits(150_000), 1500);
  for (const bad of [150_050, 0, -100, 1.5, Number.MAX_SAFE_INTEGER + 1]) assert.equal(wholeUnits(bad), null, String(bad));
  assert.equal(minorOf(1.0), 100);
  assert.equal(minorOf('1500'), 150_000);
  assert.equal(minorOf('12.34'), 1234);
  for (const bad of [null, '', 'x', -1]) assert.equal(minorOf(bad), null, String(bad));
});

test('the reversal body keeps Daraja’s own spelling RecieverIdentifierType', () => {
  const b = reversalBody({
    initiator: 'testapi',
    securityCredential: 'cred',
    transactionId: 'LGR7OWQX0R',
    amount: 100,
    shortCode: '174379',
    resultUrl: 'https://x/r',
    queueTimeOutUrl: 'https://x/r?timeout=1',
    remarks: 'r'.repeat(150),
    occasion: 'PAY-1-2',
  });
  assert.equal(b.CommandID, 'TransactionReversal');
  assert.equal(b.RecieverIdentifierType, '11');
  assert.equal(b.ReceiverParty, '174379');
  assert.equal((b.Remarks as string).length, 100);
  assert.ok(!('ReceiverIdentifierType' in b));
});

test('ResultCodes in our words: 0 paid, 1 insufficient funds, 1032 cancelled by the payer, 1037 and 1019 expired; a query never finalises on an unknown code', () => {
  assert.deepEqual(callbackOutcome('0'), { state: 'paid', reason: null });
  assert.deepEqual(callbackOutcome('1'), { state: 'failed', reason: 'insufficient_funds' });
  assert.deepEqual(callbackOutcome('1032'), { state: 'cancelled', reason: 'payer_cancelled' });
  assert.deepEqual(callbackOutcome('1037'), { state: 'expired', reason: 'no_answer' });
  assert.deepEqual(callbackOutcome('1019'), { state: 'expired', reason: 'expired' });
  assert.deepEqual(callbackOutcome('2001'), { state: 'failed', reason: 'wrong_pin' });
  assert.deepEqual(callbackOutcome('1001'), { state: 'failed', reason: 'payer_busy' });
  assert.deepEqual(callbackOutcome('777'), { state: 'failed', reason: 'provider_error' }, 'a result that is not 0 moved no money');
  assert.deepEqual(queryOutcome('1032'), { state: 'cancelled', reason: 'payer_cancelled' });
  assert.deepEqual(queryOutcome('4999'), { state: 'pending', reason: null });
  assert.deepEqual(queryOutcome('777'), { state: 'pending', reason: null });
});

test('callback signatures: a valid one passes; forged, tampered, unsigned, malformed, stale or future ones fail', () => {
  const raw = JSON.stringify(PAID);
  const t = Math.floor(NOW / 1000);
  const good = signCallback(SECRET, raw, t);
  assert.match(good, /^t=\d+,v1=[0-9a-f]{64}$/);
  // The scheme, written out independently of signCallback.
  assert.equal(good, `t=${t},v1=${createHmac('sha256', SECRET).update(`${t}.${raw}`).digest('hex')}`);
  assert.equal(verifyCallbackSignature(SECRET, raw, good, NOW), true);
  assert.equal(
    verifyCallbackSignature(SECRET, Buffer.from(raw), good.toUpperCase().replace('T=', 't=').replace('V1=', 'v1='), NOW),
    true,
    'hex in either case',
  );
  assert.equal(verifyCallbackSignature(SECRET, raw, signCallback('another-secret', raw, t), NOW), false, 'forged with another key');
  assert.equal(verifyCallbackSignature(SECRET, raw.replace('LGR7OWQX0R', 'LGR7OWQX0S'), good, NOW), false, 'body changed after signing');
  assert.equal(verifyCallbackSignature(SECRET, raw, good.replace(`t=${t}`, `t=${t + 1}`), NOW), false, 'timestamp changed after signing');
  assert.equal(verifyCallbackSignature(SECRET, raw, undefined, NOW), false, 'unsigned');
  for (const bad of ['', 'v1=abc', `t=${t}`, `t=x,v1=${'0'.repeat(64)}`, 'sha256=deadbeef'])
    assert.equal(verifyCallbackSignature(SECRET, raw, bad, NOW), false, bad);
  const stale = t - CALLBACK_TOLERANCE_SECONDS - 1;
  assert.equal(verifyCallbackSignature(SECRET, raw, signCallback(SECRET, raw, stale), NOW), false, 'replayed after the window');
  assert.equal(
    verifyCallbackSignature(SECRET, raw, signCallback(SECRET, raw, t - CALLBACK_TOLERANCE_SECONDS + 1), NOW),
    true,
    'inside the window',
  );
  assert.equal(
    verifyCallbackSignature(SECRET, raw, signCallback(SECRET, raw, t + CALLBACK_TOLERANCE_SECONDS + 1), NOW),
    false,
    'from the future',
  );
  assert.equal(verifyCallbackSignature('', raw, signCallback('', raw, t), NOW), false, 'an empty key verifies nothing');
  // During a rotation the sender signs with both keys; either one verifies.
  const both = `${signCallback('old-secret', raw, t)},v1=${signCallback(SECRET, raw, t).split('v1=')[1]}`;
  assert.equal(verifyCallbackSignature(SECRET, raw, both, NOW), true);

  assert.equal(adapter.verifyCallback(signed(PAID)), true);
  assert.equal(adapter.verifyCallback(request(PAID)), false, 'Daraja’s own (unsigned) callback is refused');
  assert.equal(adapter.verifyCallback(signed(PAID, Math.floor(NOW / 1000) - 3600)), false, 'an hour-old capture replayed');
  assert.equal(
    adapter.verifyCallback(signed(PAID, undefined, 'sim-payment-callback-secret')),
    false,
    'signed with the simulator’s default key',
  );
});

test('an STK result: paid with amount, receipt, payer and time read by name; the reference comes from our URL', () => {
  const [e] = parseStkCallback(signed(PAID));
  assert.deepEqual(e, {
    type: 'payment_result',
    providerRef: 'ws_CO_27072017154747416',
    reference: 'PAY-1-2',
    outcome: 'paid',
    reason: null,
    providerCode: '0',
    message: 'The service request is processed successfully.',
    amountMinor: 100,
    receipt: 'LGR7OWQX0R',
    payer: '+254721566839',
    occurredAt: new Date('2017-07-27T12:48:00.000Z'),
  });
  const [c] = parseStkCallback(signed(CANCELLED, undefined, SECRET, '/providers/payments/result'));
  assert.equal(c!.outcome, 'cancelled');
  assert.equal(c!.reason, 'payer_cancelled');
  assert.equal(c!.providerCode, '1032');
  assert.equal(c!.reference, null, 'no ?ref= in the URL');
  assert.equal(c!.amountMinor, null);
  assert.equal(c!.receipt, null);
  assert.equal(c!.occurredAt, null);
  assert.equal(adapter.callbacks[0]!.parse(signed(CANCELLED))[0]!.type, 'payment_result');
});

test('an unreadable callback is MalformedWebhook, never a guess', () => {
  for (const body of ['not json', '{"Body":{}}', JSON.stringify({ Body: { stkCallback: { ResultCode: 0 } } })])
    assert.throws(() => parseStkCallback(request(body)), MalformedWebhook, body);
  assert.throws(() => parseStkCallback({ url: '/', headers: {}, rawBody: Buffer.from([0xff, 0xfe]) }), MalformedWebhook);
  assert.throws(() => parseReversalResult(request('{"Result":{"ResultCode":0}}')), MalformedWebhook);
});

test('a reversal result: refunded with its own receipt and amount, or failed with Daraja’s code', () => {
  const ok = {
    Result: {
      ResultType: 0,
      ResultCode: 0,
      ResultDesc: 'The service request is processed successfully.',
      OriginatorConversationID: 'f1e2',
      ConversationID: 'AG_20261127_abc',
      TransactionID: 'NLJ41HAY6Q',
      ResultParameters: {
        ResultParameter: [
          { Key: 'Amount', Value: 40 },
          { Key: 'TransCompletedTime', Value: 20261127123015 },
        ],
      },
    },
  };
  const [e] = parseReversalResult(signed(ok, undefined, SECRET, '/providers/payments/refund-result?ref=PAY-1-3'));
  assert.deepEqual(e, {
    type: 'refund_result',
    providerRef: 'AG_20261127_abc',
    reference: 'PAY-1-3',
    outcome: 'refunded',
    providerCode: '0',
    message: 'The service request is processed successfully.',
    amountMinor: 4000,
    receipt: 'NLJ41HAY6Q',
    occurredAt: new Date(NOW),
  });
  const failed = {
    Result: { ...ok.Result, ResultCode: 'R000001', ResultDesc: 'The transaction has already been reversed.', ResultParameters: undefined },
  };
  const [f] = parseReversalResult(signed(failed));
  assert.equal(f!.outcome, 'failed');
  assert.equal(f!.providerCode, 'R000001');
  assert.equal(f!.receipt, null);
});

test('the adapter refuses what mobile money cannot charge before calling anyone (permanent)', async () => {
  const base = { reference: 'PAY-1-2', payer: '+254708374149', note: 'Order', currency: 'KES' };
  assert.deepEqual(adapter.currencies, ['KES', 'TZS']);
  const cents = await adapter.requestToPay({ ...base, amountMinor: 150_050 });
  assert.deepEqual(cents.ok ? null : [cents.permanent, cents.code], [true, 'invalid_amount']);
  const usd = await adapter.requestToPay({ ...base, amountMinor: 100, currency: 'USD' });
  assert.deepEqual(usd.ok ? null : [usd.permanent, usd.code], [true, 'unsupported_currency']);
  const phone = await adapter.requestToPay({ ...base, amountMinor: 100, payer: 'nobody' });
  assert.deepEqual(phone.ok ? null : [phone.permanent, phone.code], [true, 'invalid_payer']);
  const refund = await adapter.refund({ reference: 'PAY-1-3', originalProviderRef: '', amountMinor: 100, currency: 'KES', reason: 'x' });
  assert.deepEqual(refund.ok ? null : [refund.permanent, refund.code], [true, 'receipt_required']);
  const zero = await adapter.refund({
    reference: 'PAY-1-3',
    originalProviderRef: 'LGR7OWQX0R',
    amountMinor: 0,
    currency: 'KES',
    reason: 'x',
  });
  assert.deepEqual(zero.ok ? null : [zero.permanent, zero.code], [true, 'invalid_amount']);
  // A provider that cannot be reached is a retryable failure, not a refusal.
  const down = await adapter.requestToPay({ ...base, amountMinor: 100 });
  assert.deepEqual(down.ok ? null : down.permanent, false);
});
