import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { createSimulator, type RunningSimulator, type Simulator } from '../../simulator/app.js';
import { optionsFromEnv } from '../../simulator/options.js';
import { loadConfig } from '../../config.js';
import { createProviderRegistry } from '../../providers/index.js';
import { secretsEnv, TEST_SECRETS } from '../../scripts/secrets.js';
import { createMpesaDaraja } from '../../providers/mpesa-daraja/index.js';
import type { PaymentEvent, PaymentProvider, WebhookRequest } from '../../providers/types.js';
import { startReceiver, type Received } from '../support/receiver.js';

// The simulator's Daraja (M-Pesa Express, STK query, reversals), in process, on the wire, driven by
// our adapter: the acknowledgement, the signed result callback a local receiver gets (verified and
// parsed by the adapter, so the two sides are proven against each other), the query, refunds, every
// fault and the controls.
const SECRET = 'test-payment-callback-secret';
const KEY = 'sim-mpesa-consumer-key';
const SECRET_KEY = 'sim-mpesa-consumer-secret';
const RESULT_MS = 40;
const LATE_MS = 600;
/** Longer than any run: a push held this long stays pending until the test completes it. */
const HELD_MS = 10 * 60_000;
let sim: Simulator;
let running: RunningSimulator;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
let pay: PaymentProvider;
let phoneSeq = 0;

before(async () => {
  receiver = await startReceiver();
  sim = createSimulator({
    logger: pino({ level: 'silent' }),
    receiptDelayMs: 10,
    callbackRetries: 0,
    paymentCallbackSecret: SECRET,
    paymentResultDelayMs: RESULT_MS,
    paymentLateCallbackMs: LATE_MS,
    timeoutFaultMs: 2500,
  });
  running = await sim.listen(0);
  pay = adapter();
});
after(async () => {
  await running?.close();
  await receiver?.close();
});

function adapter(o: { now?: () => number; timeoutMs?: number; securityCredential?: string } = {}): PaymentProvider {
  return createMpesaDaraja({
    baseUrl: `${running.url}/daraja`,
    consumerKey: KEY,
    consumerSecret: SECRET_KEY,
    shortCode: '174379',
    passkey: 'sim-mpesa-passkey',
    initiator: 'testapi',
    securityCredential: o.securityCredential ?? 'sim-mpesa-security-credential',
    callbackSecret: SECRET,
    currencies: ['KES'],
    // The receiver stands for our public origin.
    publicBaseUrl: receiver.url.replace(/\/hook$/, ''),
    timeoutMs: o.timeoutMs ?? 5000,
    now: o.now,
  });
}

/** A fresh payer per test, so faults never cross between tests. */
const payer = () => `+2547${String(10_000_000 + ++phoneSeq * 7919).slice(-8)}`;
let refSeq = 0;
const reference = () => `PAY-${Date.now() % 100_000}-${++refSeq}`;

async function control(method: string, path: string, body?: unknown) {
  const res = await fetch(`${running.url}/_sim${path}`, {
    method,
    headers: { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as any };
}
const fault = async (kind: string, to: string, extra: Record<string, unknown> = {}) =>
  assert.equal((await control('POST', '/faults', { provider: 'payment', kind, to, ...extra })).status, 201);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const asRequest = (r: Received): WebhookRequest => ({ url: r.url, headers: r.headers, rawBody: Buffer.from(r.body, 'utf8') });
/** The callbacks the receiver got on one of our result paths for one reference. */
const callbacksFor = (ref: string, path = '/providers/payments/result') =>
  receiver.got.filter((r) => r.url.startsWith(`${path}?`) && new URLSearchParams(r.url.split('?')[1]).get('ref') === ref);
/** Waits for `count` callbacks of the reference, checks each is signed, and parses them with the adapter. */
async function results(ref: string, count = 1, path = '/providers/payments/result'): Promise<PaymentEvent[]> {
  const got = await receiver.waitFor(() => {
    const found = callbacksFor(ref, path);
    return found.length >= count ? found : null;
  }, `${count} callback(s) for ${ref}`);
  const endpoint = pay.callbacks.find((c) => c.path === path)!;
  return got.map((r) => {
    assert.equal(pay.verifyCallback(asRequest(r)), true, 'signed with the callback secret');
    return endpoint.parse(asRequest(r))[0]!;
  });
}
async function requestToPay(amountMinor = 150_000, who = payer(), ref = reference()) {
  const ack = await pay.requestToPay({ reference: ref, amountMinor, currency: 'KES', payer: who, note: 'Order A-1' });
  assert.ok(ack.ok, JSON.stringify(ack));
  return { ref, who, providerRef: ack.value.providerRef, message: ack.value.message };
}

test('request to pay: acknowledged at once, then a signed result with the payer, amount and receipt; the query agrees', async () => {
  await control('POST', '/payments/config', { resultDelayMs: HELD_MS });
  let held: Awaited<ReturnType<typeof requestToPay>>;
  try {
    held = await requestToPay(150_000);
  } finally {
    await control('POST', '/payments/config', { resultDelayMs: RESULT_MS });
  }
  assert.match(held.providerRef, /^ws_CO_\d+$/);
  assert.equal(held.message, 'Success. Request accepted for processing');
  const stored = (await control('GET', `/payments/${held.providerRef}`)).body;
  assert.equal(stored.amount, 1500, 'whole shillings');
  assert.equal(stored.phone, held.who.slice(1));
  assert.equal(stored.state, 'pending');
  assert.match(stored.callbackUrl, /\/providers\/payments\/result\?ref=PAY-/);
  const pending = await pay.status(held.providerRef);
  assert.deepEqual(pending.ok && pending.value, {
    state: 'pending',
    reason: null,
    providerCode: '500.001.1001',
    message: 'The transaction is being processed',
  });
  assert.equal(callbacksFor(held.ref).length, 0, 'no callback while the payer has not answered');

  assert.equal((await control('POST', `/payments/${held.providerRef}/complete`)).status, 202);
  const [e] = await results(held.ref);
  assert.equal(e!.type, 'payment_result');
  if (e!.type !== 'payment_result') return;
  assert.equal(e.providerRef, held.providerRef);
  assert.equal(e.reference, held.ref);
  assert.equal(e.outcome, 'paid');
  assert.equal(e.amountMinor, 150_000);
  assert.equal(e.payer, held.who);
  assert.match(e.receipt ?? '', /^[A-Z0-9]{10}$/);
  assert.ok(e.occurredAt && Math.abs(e.occurredAt.getTime() - Date.now()) < 60_000, 'TransactionDate read as Nairobi time');
  const body = callbacksFor(held.ref)[0]!.json;
  assert.deepEqual(Object.keys(body.Body.stkCallback).sort(), [
    'CallbackMetadata',
    'CheckoutRequestID',
    'MerchantRequestID',
    'ResultCode',
    'ResultDesc',
  ]);
  assert.equal(typeof body.Body.stkCallback.ResultCode, 'number');
  const paid = await pay.status(held.providerRef);
  assert.deepEqual(paid.ok && paid.value.state, 'paid');
  assert.equal(paid.ok && paid.value.providerCode, '0');
  assert.equal((await control('POST', `/payments/${held.providerRef}/complete`)).status, 409, 'only a pending push completes');

  // The simulator's callback list records it too.
  const list = (await control('GET', `/callbacks?provider=payment&kind=payment.result&messageId=${held.providerRef}`)).body;
  assert.equal(list.count, 1);
  assert.equal(list.callbacks[0].delivered, true);
});

test('the result faults: insufficient funds, the payer cancels, no answer, expiry, any ResultCode', async () => {
  const cases: Array<[string, Record<string, unknown>, string, string | null, string]> = [
    ['insufficient_funds', {}, 'failed', 'insufficient_funds', '1'],
    ['payer_cancels', {}, 'cancelled', 'payer_cancelled', '1032'],
    ['no_answer', {}, 'expired', 'no_answer', '1037'],
    ['expiry', {}, 'expired', 'expired', '1019'],
    ['payment_result', { code: 2001 }, 'failed', 'wrong_pin', '2001'],
  ];
  for (const [kind, extra, outcome, reason, code] of cases) {
    const who = payer();
    await fault(kind, who, extra);
    const p = await requestToPay(10_000, who);
    const [e] = await results(p.ref);
    assert.equal(e!.type === 'payment_result' && e.outcome, outcome, kind);
    assert.equal(e!.type === 'payment_result' && e.reason, reason, kind);
    assert.equal(e!.providerCode, code, kind);
    assert.equal(e!.receipt, null, kind);
    assert.equal(callbacksFor(p.ref)[0]!.json.Body.stkCallback.CallbackMetadata, undefined, `${kind}: no metadata on a failure`);
    const s = await pay.status(p.providerRef);
    assert.deepEqual(s.ok && [s.value.state, s.value.reason, s.value.providerCode], [outcome, reason, code], `${kind}: the query agrees`);
  }
});

test('a payment_result fault with an amount: the callback reports that amount paid, not the push’s', async () => {
  const who = payer();
  await fault('payment_result', who, { code: 0, amount: 1400 });
  const p = await requestToPay(150_000, who);
  const [e] = await results(p.ref);
  assert.equal(e!.type === 'payment_result' && e.outcome, 'paid');
  assert.equal(e!.amountMinor, 140_000, 'the callback’s Amount, not the 1,500 pushed');
  assert.equal((await control('GET', `/payments/${p.providerRef}`)).body.amount, 1500, 'the push itself was for 1,500');
  assert.equal(
    (await control('POST', '/faults', { provider: 'payment', kind: 'insufficient_funds', to: who, amount: 1 })).status,
    400,
    'amount only with payment_result',
  );
  assert.equal((await control('POST', '/faults', { provider: 'payment', kind: 'payment_result', code: 0, amount: 0 })).status, 400);
});

test('delivery faults: a duplicate callback, a late one (after the query already knows), none at all', async () => {
  const dupPayer = payer();
  await fault('duplicate_callback', dupPayer);
  const dup = await requestToPay(10_000, dupPayer);
  const twice = await results(dup.ref, 2);
  assert.equal(twice[0]!.providerRef, twice[1]!.providerRef);
  assert.equal(twice[0]!.receipt, twice[1]!.receipt, 'the same result twice');

  const latePayer = payer();
  await fault('late_callback', latePayer);
  await fault('insufficient_funds', latePayer);
  const late = await requestToPay(10_000, latePayer);
  await sleep(RESULT_MS * 4);
  const known = await pay.status(late.providerRef);
  assert.deepEqual(known.ok && known.value.state, 'failed', 'settled on time');
  assert.equal(callbacksFor(late.ref).length, 0, 'but not yet told');
  const [lateEvent] = await results(late.ref);
  assert.equal(lateEvent!.type === 'payment_result' && lateEvent.outcome, 'failed');

  const lostPayer = payer();
  await fault('no_callback', lostPayer);
  const lost = await requestToPay(10_000, lostPayer);
  // The first test holds a push for HELD_MS, so sim.idle() would wait for it: settle by the clock instead.
  await sleep(RESULT_MS * 6);
  assert.equal(callbacksFor(lost.ref).length, 0, 'the callback is lost');
  const found = await pay.status(lost.providerRef);
  assert.deepEqual(found.ok && found.value.state, 'paid', 'the query recovers it');
});

test('a replayed callback: byte for byte it still verifies inside the window (a duplicate for the workflow), and fails once the window has passed', async () => {
  const p = await requestToPay(10_000);
  const [first] = await results(p.ref);
  const replay = await control('POST', `/payments/${p.providerRef}/callback`);
  assert.equal(replay.body.delivered, true);
  const both = callbacksFor(p.ref);
  await receiver.waitFor(() => (callbacksFor(p.ref).length >= 2 ? true : null));
  assert.equal(callbacksFor(p.ref)[1]!.body, both[0]!.body, 'the same bytes');
  const [again] = await results(p.ref, 2).then((e) => e.slice(1));
  assert.deepEqual(again, first);
  const later = adapter({ now: () => Date.now() + 10 * 60_000 });
  assert.equal(later.verifyCallback(asRequest(callbacksFor(p.ref)[1]!)), false, 'a capture replayed ten minutes later is refused');
  assert.equal(
    pay.verifyCallback({ ...asRequest(callbacksFor(p.ref)[0]!), headers: { 'content-type': 'application/json' } }),
    false,
    'the same body without its signature is refused',
  );
});

test('push faults: unavailable is a retryable failure and pushes nothing; a timeout is retryable but the payer was asked', async () => {
  const who = payer();
  await fault('payment_unavailable', who);
  const down = await pay.requestToPay({ reference: reference(), amountMinor: 10_000, currency: 'KES', payer: who, note: 'x' });
  assert.deepEqual(down.ok ? null : [down.permanent, down.code, down.httpStatus], [false, '503.001.01', 503]);
  assert.equal((await control('GET', `/payments?phone=${who}`)).body.count, 0);

  const slow = payer();
  await fault('payment_timeout', slow);
  const impatient = adapter({ timeoutMs: 1000 });
  const t = await impatient.requestToPay({ reference: reference(), amountMinor: 10_000, currency: 'KES', payer: slow, note: 'x' });
  assert.deepEqual(t.ok ? null : [t.permanent, t.code], [false, 'timeout']);
  assert.equal((await control('GET', `/payments?phone=${slow}`)).body.count, 1, 'the push was made: the outcome is unknown to the caller');
});

test('Daraja keeps no idempotency key: the same reference pushed twice is two pushes, the repeat counted', async () => {
  const who = payer();
  const ref = reference();
  const a = await requestToPay(10_000, who, ref);
  const b = await requestToPay(10_000, who, ref);
  assert.notEqual(a.providerRef, b.providerRef);
  const stored = (await control('GET', `/payments/${a.providerRef}`)).body;
  assert.equal(stored.duplicates, 1);
  assert.equal(stored.idempotencyKey, ref);
});

test('OAuth: tokens are issued for the consumer key and secret; an expired token is renewed once by the adapter', async () => {
  const basic = (k: string, s: string) => `Basic ${Buffer.from(`${k}:${s}`).toString('base64')}`;
  const token = await fetch(`${running.url}/daraja/oauth/v1/generate?grant_type=client_credentials`, {
    headers: { authorization: basic(KEY, SECRET_KEY) },
  });
  const t = (await token.json()) as any;
  assert.equal(token.status, 200);
  assert.equal(typeof t.access_token, 'string');
  assert.equal(t.expires_in, '3599', 'a string, as Daraja sends it');
  const wrong = await fetch(`${running.url}/daraja/oauth/v1/generate?grant_type=client_credentials`, {
    headers: { authorization: basic(KEY, 'nope') },
  });
  assert.equal(wrong.status, 400);
  assert.equal(((await wrong.json()) as any).errorCode, '400.008.01');
  const noToken = await fetch(`${running.url}/daraja/mpesa/stkpush/v1/processrequest`, { method: 'POST', body: '{}' });
  assert.equal(noToken.status, 404);
  assert.equal(((await noToken.json()) as any).errorCode, '404.001.03');

  const p = await requestToPay(10_000);
  assert.ok((await control('POST', '/payments/tokens/expire')).body.expired >= 1);
  const s = await pay.status(p.providerRef);
  assert.ok(s.ok, JSON.stringify(s));
  const badKey = createMpesaDaraja({ ...settingsOf(), consumerSecret: 'nope' });
  const refused = await badKey.status(p.providerRef);
  assert.deepEqual(refused.ok ? null : [refused.permanent, refused.code], [true, '400.008.01']);
});

function settingsOf() {
  return {
    baseUrl: `${running.url}/daraja`,
    consumerKey: KEY,
    consumerSecret: SECRET_KEY,
    shortCode: '174379',
    passkey: 'sim-mpesa-passkey',
    initiator: 'testapi',
    securityCredential: 'sim-mpesa-security-credential',
    callbackSecret: SECRET,
    currencies: ['KES'],
    publicBaseUrl: receiver.url.replace(/\/hook$/, ''),
    timeoutMs: 5000,
  };
}

test('the push is validated like Daraja: shortcode, Password, amount, phone, AccountReference; errors in its envelope', async () => {
  const tokenRes = await fetch(`${running.url}/daraja/oauth/v1/generate?grant_type=client_credentials`, {
    headers: { authorization: `Basic ${Buffer.from(`${KEY}:${SECRET_KEY}`).toString('base64')}` },
  });
  const token = ((await tokenRes.json()) as any).access_token as string;
  const ts = '20261127123015';
  const good = {
    BusinessShortCode: '174379',
    Password: Buffer.from(`174379sim-mpesa-passkey${ts}`).toString('base64'),
    Timestamp: ts,
    TransactionType: 'CustomerPayBillOnline',
    Amount: 1,
    PartyA: '254708374149',
    PartyB: '174379',
    PhoneNumber: '254708374149',
    CallBackURL: `${receiver.url}?ref=raw`,
    AccountReference: 'PAY-1-2',
    TransactionDesc: 'Order',
  };
  const push = async (body: unknown) => {
    const res = await fetch(`${running.url}/daraja/mpesa/stkpush/v1/processrequest`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as any };
  };
  const ok = await push(good);
  assert.equal(ok.status, 200);
  assert.deepEqual(Object.keys(ok.body).sort(), [
    'CheckoutRequestID',
    'CustomerMessage',
    'MerchantRequestID',
    'ResponseCode',
    'ResponseDescription',
  ]);
  assert.equal(ok.body.ResponseCode, '0');
  const bad: Array<[Record<string, unknown>, string]> = [
    [{ Password: 'eA==' }, 'Password'],
    [{ BusinessShortCode: '600000' }, 'BusinessShortCode'],
    [{ Amount: 0 }, 'Amount'],
    [{ Amount: 1.5 }, 'Amount'],
    [{ PhoneNumber: '+254708374149' }, 'PhoneNumber'],
    [{ AccountReference: 'PAY-123456789' }, 'AccountReference'],
    [{ TransactionDesc: '' }, 'TransactionDesc'],
    [{ CallBackURL: 'ftp://x' }, 'CallBackURL'],
    [{ TransactionType: 'Pay' }, 'TransactionType'],
  ];
  for (const [change, what] of bad) {
    const res = await push({ ...good, ...change });
    assert.equal(res.status, 400, what);
    assert.equal(res.body.errorCode, '400.002.02', what);
    assert.equal(res.body.errorMessage, `Bad Request - Invalid ${what}`);
    assert.match(res.body.requestId, /^\d+-\d+-1$/);
  }
  const unknown = await pay.status('ws_CO_0000');
  assert.deepEqual(unknown.ok ? null : [unknown.permanent, unknown.code], [true, '400.002.02']);
});

test('refunds are reversals: partial ones up to what was paid, each with its own signed result; over-refund, unknown receipt and a failing reversal are failed results', async () => {
  const who = payer();
  const p = await requestToPay(100_000, who);
  const [paid] = await results(p.ref);
  const receipt = paid!.receipt!;
  const refund = async (amountMinor: number, originalProviderRef = receipt) => {
    const ref = reference();
    const ack = await pay.refund({ reference: ref, originalProviderRef, amountMinor, currency: 'KES', reason: 'Damaged on delivery' });
    assert.ok(ack.ok, JSON.stringify(ack));
    assert.match(ack.value.providerRef, /^AG_\d{8}_[0-9a-f]+$/);
    const [e] = await results(ref, 1, '/providers/payments/refund-result');
    assert.equal(e!.type, 'refund_result');
    assert.equal(e!.providerRef, ack.value.providerRef);
    assert.equal(e!.reference, ref);
    return e!;
  };
  const first = await refund(40_000);
  assert.deepEqual([first.type === 'refund_result' && first.outcome, first.amountMinor, first.providerCode], ['refunded', 40_000, '0']);
  assert.match(first.receipt ?? '', /^[A-Z0-9]{10}$/);
  assert.notEqual(first.receipt, receipt, 'the reversal has its own transaction id');
  const over = await refund(70_000);
  assert.deepEqual([over.type === 'refund_result' && over.outcome, over.providerCode], ['failed', 'R000001']);
  const rest = await refund(60_000);
  assert.equal(rest.type === 'refund_result' && rest.outcome, 'refunded');
  const none = await refund(100, 'ZZZZZZZZZZ');
  assert.deepEqual([none.type === 'refund_result' && none.outcome, none.providerCode], ['failed', 'R000002']);

  const p2 = await requestToPay(10_000, who);
  const [paid2] = await results(p2.ref);
  await fault('reversal_fails', who);
  const failing = await refund(10_000, paid2!.receipt!);
  assert.deepEqual([failing.type === 'refund_result' && failing.outcome, failing.providerCode], ['failed', '2001']);
  const wrongOperator = adapter({ securityCredential: 'stolen' });
  const ref = reference();
  assert.ok(
    (
      await wrongOperator.refund({
        reference: ref,
        originalProviderRef: paid2!.receipt!,
        amountMinor: 10_000,
        currency: 'KES',
        reason: 'x',
      })
    ).ok,
  );
  const [denied] = await results(ref, 1, '/providers/payments/refund-result');
  assert.deepEqual([denied!.type === 'refund_result' && denied!.outcome, denied!.providerCode], ['failed', '2001']);

  const reversals = (await control('GET', '/payments/reversals')).body.reversals as any[];
  const mine = reversals.filter((v) => v.transactionId === receipt);
  assert.deepEqual(
    mine.map((v) => [v.amount, v.resultCode]),
    [
      [400, 0],
      [700, 'R000001'],
      [600, 0],
    ],
  );
  assert.equal((await control('GET', `/payments/${p.providerRef}`)).body.reversed, 1000, 'all of it, never more');
});

test('reversal answers: unavailable reverses nothing; a timeout is retryable but the reversal was made and its result posted', async () => {
  const who = payer();
  const p = await requestToPay(50_000, who);
  const [paid] = await results(p.ref);
  const receipt = paid!.receipt!;
  await fault('payment_unavailable', who);
  const down = await pay.refund({
    reference: reference(),
    originalProviderRef: receipt,
    amountMinor: 10_000,
    currency: 'KES',
    reason: 'x',
  });
  assert.deepEqual(down.ok ? null : [down.permanent, down.code, down.httpStatus], [false, '503.001.01', 503]);
  const reversed = async () =>
    ((await control('GET', '/payments/reversals')).body.reversals as any[]).filter((v) => v.transactionId === receipt);
  assert.equal((await reversed()).length, 0, 'nothing was reversed');

  await fault('payment_timeout', who);
  const ref = reference();
  const impatient = adapter({ timeoutMs: 1000 });
  const t = await impatient.refund({ reference: ref, originalProviderRef: receipt, amountMinor: 10_000, currency: 'KES', reason: 'x' });
  assert.deepEqual(t.ok ? null : [t.permanent, t.code], [false, 'timeout']);
  const [e] = await results(ref, 1, '/providers/payments/refund-result');
  assert.deepEqual([e!.type === 'refund_result' && e!.outcome, e!.reference], ['refunded', ref], 'its result names our reference');
  assert.deepEqual(
    (await reversed()).map((v) => v.amount),
    [100],
    'the reversal was made once',
  );
});

test('controls: faults need the payment provider and a code where it matters; config is validated; reset forgets payments', async () => {
  assert.equal(
    (await control('POST', '/faults', { provider: 'payment', kind: 'timeout' })).status,
    400,
    'an SMS fault is not a payment fault',
  );
  assert.equal((await control('POST', '/faults', { provider: 'sms', kind: 'payer_cancels' })).status, 400);
  assert.equal((await control('POST', '/faults', { provider: 'payment', kind: 'payment_result' })).status, 400, 'needs code');
  assert.equal((await control('POST', '/payments/config', { resultDelayMs: -1 })).status, 400);
  assert.equal((await control('GET', '/payments/config')).body.resultDelayMs, RESULT_MS, 'unchanged by a refused change');
  assert.equal((await control('GET', '/payments/nope')).status, 404);
  assert.equal((await control('POST', '/payments/nope/callback')).status, 404);
  assert.equal((await control('POST', '/reset')).status, 200);
  assert.equal((await control('GET', '/payments')).body.count, 0);
  assert.equal((await control('GET', '/payments/reversals')).body.count, 0);
  assert.equal((await control('GET', '/payments/config')).body.resultDelayMs, RESULT_MS, 'timing survives a reset');
});

test('the launchers’ wiring: a simulator started from the SIM_* variables and the registry built from PAYMENT_* agree', async () => {
  // What scripts/dev.ts and the test stack hand the simulator and the service: the same secrets under both names.
  const env = secretsEnv(TEST_SECRETS);
  const saved = { ...process.env };
  const other = createSimulator({
    ...optionsFromEnv(env),
    logger: pino({ level: 'silent' }),
    paymentResultDelayMs: 10,
    callbackRetries: 0,
  });
  const otherRunning = await other.listen(0);
  try {
    Object.assign(process.env, env, {
      PAYMENT_PROVIDER_URL: `${otherRunning.url}/daraja`,
      PUBLIC_BASE_URL: receiver.url.replace(/\/hook$/, ''),
      PAYMENT_CURRENCIES: 'KES',
    });
    const payments = createProviderRegistry(loadConfig(), { timeoutMs: 5000 }).payments();
    const ref = reference();
    const ack = await payments.requestToPay({ reference: ref, amountMinor: 5000, currency: 'KES', payer: payer(), note: 'Wiring' });
    assert.ok(ack.ok, JSON.stringify(ack));
    const [got] = await receiver.waitFor(() => {
      const found = callbacksFor(ref);
      return found.length > 0 ? found : null;
    }, `the callback for ${ref}`);
    assert.equal(payments.verifyCallback(asRequest(got!)), true, 'signed with PAYMENT_CALLBACK_SECRET');
    assert.equal(pay.verifyCallback(asRequest(got!)), false, 'another key does not verify it');
    const s = await payments.status(ack.value.providerRef);
    assert.deepEqual(s.ok && s.value.state, 'paid');
  } finally {
    process.env = saved;
    await otherRunning.close();
  }
});
