import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { createSimulator, type RunningSimulator, type Simulator } from '../../simulator/app.js';
import { createMpesaDaraja } from '../../providers/mpesa-daraja/index.js';
import { parseStatement, UnreadableStatement } from '../../providers/mpesa-daraja/statement.js';
import type { PaymentProvider, SettlementLine } from '../../providers/types.js';
import { compareSettlements, type OurSettlement } from '../../domain/payments/index.js';
import { startReceiver } from '../support/receiver.js';

// The provider's report (issue 26 point 5): the M-Pesa organisation statement as the org portal
// exports it, parsed by the adapter (by column name, Nairobi times, withdrawals with a minus sign,
// lines about the organisation before the header), and the simulator's statement of its own pushes
// and reversals, read through the adapter's report(), with the controls that make it disagree.
const SECRET = 'test-payment-callback-secret';
const RESULT_MS = 30;
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
    paymentLateCallbackMs: 100,
    timeoutFaultMs: 2500,
  });
  running = await sim.listen(0);
  pay = createMpesaDaraja({
    baseUrl: `${running.url}/daraja`,
    consumerKey: 'sim-mpesa-consumer-key',
    consumerSecret: 'sim-mpesa-consumer-secret',
    shortCode: '174379',
    passkey: 'sim-mpesa-passkey',
    initiator: 'testapi',
    securityCredential: 'sim-mpesa-security-credential',
    callbackSecret: SECRET,
    currencies: ['KES'],
    publicBaseUrl: receiver.url.replace(/\/hook$/, ''),
    timeoutMs: 5000,
  });
});
after(async () => {
  await running?.close();
  await receiver?.close();
});

async function control(method: string, path: string, body?: unknown) {
  const res = await fetch(`${running.url}/_sim${path}`, {
    method,
    headers: { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as any };
}
const payer = () => `+2547${String(40_000_000 + ++phoneSeq * 7919).slice(-8)}`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A push that settles (paid unless a fault says otherwise); answers its CheckoutRequestID and the simulator's record once settled. */
async function settledPush(amountMinor: number, faultKind?: string) {
  const who = payer();
  if (faultKind) assert.equal((await control('POST', '/faults', { provider: 'payment', kind: faultKind, to: who })).status, 201);
  const ack = await pay.requestToPay({
    reference: `PAY-${Date.now() % 100_000}-${phoneSeq}`,
    amountMinor,
    currency: 'KES',
    payer: who,
    note: 'Order',
  });
  assert.ok(ack.ok, JSON.stringify(ack));
  for (let i = 0; i < 200; i++) {
    const p = (await control('GET', `/payments/${ack.value.providerRef}`)).body;
    if (p.state === 'settled') return { providerRef: ack.value.providerRef, who, sim: p };
    await sleep(20);
  }
  throw new Error('the push did not settle');
}

const around = () => ({ from: new Date(Date.now() - 60 * 60_000), to: new Date(Date.now() + 60_000) });
const byRef = (lines: SettlementLine[], ref: string) => lines.filter((l) => l.providerRef === ref);

const PORTAL_CSV = [
  '"Organization Name","Jane\'s Shop Ltd"',
  '"Short Code","600100"',
  '"Time Period","2026-11-27 00:00:00 - 2026-11-28 00:00:00"',
  '',
  '"Receipt No.","Completion Time","Initiation Time","Details","Transaction Status","Paid In","Withdrawn","Balance","Balance Confirmed","Reason Type","Other Party Info","Linked Transaction ID","A/C No."',
  '"SKR1AAAAAA","2026-11-27 13:30:00","2026-11-27 13:29:51","Pay Bill Online from 254708374149 - JANE DOE Acc. PAY-20261127","Completed","1,500.00","","1,500.00","true","Pay Bill Online","254708374149 - JANE DOE","","PAY-20261127"',
  '"SKR1BBBBBB","2026-11-27 13:40:00","2026-11-27 13:40:00","Reversal of SKR1AAAAAA","Completed","","-400.00","1,100.00","true","Reversal","254708374149 - JANE DOE","SKR1AAAAAA",""',
  '"SKR1CCCCCC","2026-11-27 13:41:00","2026-11-27 13:41:00","Business Pay Bill Charge","Completed","","-15.00","1,085.00","true","Pay Bill Charge","","",""',
  '"SKR1DDDDDD","2026-11-27 13:42:00","2026-11-27 13:42:00","Pay Bill Online from 254711111111 - JOHN","Failed","200.00","","1,085.00","true","Pay Bill Online","254711111111 - JOHN","",""',
  '"SKR1EEEEEE","2026-11-27 15:00:00","2026-11-27 15:00:00","Pay Bill from 254722222222 - ANN Acc. 77","Completed","300.00","","1,385.00","true","Pay Bill","254722222222 - ANN","","77"',
].join('\r\n');

test('the portal’s statement: payments and reversals of the period, read by column name, in Nairobi time; charges and failed lines left out', () => {
  // 10:00 to 12:00 UTC is 13:00 to 15:00 in Nairobi: the 15:00 line is past the end.
  const lines = parseStatement(PORTAL_CSV, new Date('2026-11-27T10:00:00Z'), new Date('2026-11-27T12:00:00Z'));
  assert.deepEqual(lines, [
    {
      providerRef: null,
      receipt: 'SKR1AAAAAA',
      kind: 'payment',
      amountMinor: 150_000,
      currency: null,
      completedAt: new Date('2026-11-27T10:30:00Z'),
      payer: '+254708374149',
      reverses: null,
    },
    {
      providerRef: null,
      receipt: 'SKR1BBBBBB',
      kind: 'reversal',
      amountMinor: 40_000,
      currency: null,
      completedAt: new Date('2026-11-27T10:40:00Z'),
      payer: '+254708374149',
      reverses: 'SKR1AAAAAA',
    },
  ]);
  assert.equal(
    parseStatement(`\uFEFF${PORTAL_CSV}`, new Date('2026-11-27T11:59:00Z'), new Date('2026-11-27T12:01:00Z')).length,
    1,
    'a BOM is no column',
  );
});

test('a statement that cannot be read whole is refused, not half read', () => {
  const from = new Date('2026-11-27T00:00:00Z');
  const to = new Date('2026-11-28T00:00:00Z');
  const header = PORTAL_CSV.split('\r\n')[4]!;
  const cases: Array<[string, RegExp]> = [
    ['"Organization Name","x"\r\n"no","header"', /no header row/],
    ['"Receipt No.","Completion Time","Paid In"\r\n', /no transaction status, withdrawn column/],
    [`${header}\r\n"SKR1","27/11/2026 13:30","","x","Completed","10.00","","","","","","",""`, /no readable Completion Time/],
    [`${header}\r\n"SKR1","2026-11-27 13:30:00","","x","Completed","ten","","","","","","",""`, /not a number/],
    [`${header}\r\n"","2026-11-27 13:30:00","","x","Completed","10.00","","","","","","",""`, /no Receipt No/],
    [`${header}\r\n"SKR1","2026-02-30 13:30:00","","x","Completed","10.00","","","","","","",""`, /no readable Completion Time/],
  ];
  for (const [csv, message] of cases)
    assert.throws(
      () => parseStatement(csv, from, to),
      (e: Error) => e instanceof UnreadableStatement && message.test(e.message),
      csv,
    );
});

test('the simulator’s statement through report(): paid pushes and reversals with the ids the API gave; failed pushes are no line', async () => {
  const a = await settledPush(150_000);
  const b = await settledPush(20_000);
  const failed = await settledPush(30_000, 'insufficient_funds');
  const reversal = await pay.refund({
    reference: `PAY-R-${phoneSeq}`,
    originalProviderRef: a.sim.receipt,
    amountMinor: 50_000,
    currency: 'KES',
    reason: 'one item missing',
  });
  assert.ok(reversal.ok, JSON.stringify(reversal));
  for (let i = 0; i < 200 && (await control('GET', '/payments/reversals')).body.reversals.at(-1).state !== 'settled'; i++) await sleep(20);

  const r = await pay.report(around());
  assert.ok(r.ok, JSON.stringify(r));
  const [pa] = byRef(r.value, a.providerRef);
  assert.deepEqual(
    { ...pa, completedAt: undefined },
    {
      providerRef: a.providerRef,
      receipt: a.sim.receipt,
      kind: 'payment',
      amountMinor: 150_000,
      currency: null,
      completedAt: undefined,
      payer: a.who,
      reverses: null,
    },
  );
  assert.ok(Math.abs(pa!.completedAt.getTime() - a.sim.settledAt) < 1000, 'the completion time, to the second');
  assert.equal(byRef(r.value, b.providerRef)[0]!.amountMinor, 20_000);
  assert.deepEqual(byRef(r.value, failed.providerRef), [], 'a push that did not pay moved no money');
  const [rv] = byRef(r.value, reversal.value.providerRef);
  assert.deepEqual([rv!.kind, rv!.amountMinor, rv!.reverses, rv!.payer], ['reversal', 50_000, a.sim.receipt, a.who]);

  const before = await pay.report({ from: new Date(Date.now() - 2 * 3600_000), to: new Date(Date.now() - 3600_000) });
  assert.deepEqual(before.ok && byRef(before.value, a.providerRef), [], 'a period before the push has none of it');
});

test('controls make the statement disagree: a line left out, another amount, a failed push shown paid, money nobody asked for', async () => {
  const omitted = await settledPush(10_000);
  const changed = await settledPush(10_000);
  const failed = await settledPush(10_000, 'payer_cancels');
  assert.equal((await control('POST', `/payments/${omitted.providerRef}/statement`, { omit: true })).status, 200);
  assert.equal((await control('POST', `/payments/${changed.providerRef}/statement`, { amount: 90 })).status, 200);
  const shown = await control('POST', `/payments/${failed.providerRef}/statement`, { completed: true });
  assert.deepEqual(shown.body.statement.completed, true);
  const extra = await control('POST', '/payments/statement/lines', { amount: 250, phone: '+254733000111', accountReference: 'INV-9' });
  assert.equal(extra.status, 201, JSON.stringify(extra.body));

  const r = await pay.report(around());
  assert.ok(r.ok, JSON.stringify(r));
  assert.deepEqual(byRef(r.value, omitted.providerRef), []);
  assert.equal(byRef(r.value, changed.providerRef)[0]!.amountMinor, 9_000);
  const [paidAnyway] = byRef(r.value, failed.providerRef);
  assert.match(paidAnyway!.receipt, /^[A-Z0-9]{10}$/, 'a receipt of its own');
  const again = await pay.report(around());
  assert.equal(again.ok && byRef(again.value, failed.providerRef)[0]!.receipt, paidAnyway!.receipt, 'the same receipt on every read');
  const nobody = r.value.filter((l) => l.receipt === extra.body.receipt);
  assert.deepEqual(
    nobody.map((l) => [l.providerRef, l.kind, l.amountMinor, l.payer]),
    [[null, 'payment', 25_000, '+254733000111']],
  );
  const listed = (await control('GET', '/payments/statement')).body;
  assert.ok(listed.lines.some((l: { receipt: string }) => l.receipt === extra.body.receipt));
});

test('Safaricom’s columns only (no API Request ID): every line names its receipt alone, and reconciles with our payments by it', async () => {
  const a = await settledPush(150_000);
  const b = await settledPush(20_000);
  const reversal = await pay.refund({
    reference: `PAY-R-${phoneSeq}`,
    originalProviderRef: a.sim.receipt,
    amountMinor: 50_000,
    currency: 'KES',
    reason: 'one item missing',
  });
  assert.ok(reversal.ok, JSON.stringify(reversal));
  let settledReversal: { state: string; receipt: string } | undefined;
  for (let i = 0; i < 200; i++) {
    settledReversal = (await control('GET', '/payments/reversals')).body.reversals.at(-1);
    if (settledReversal?.state === 'settled') break;
    await sleep(20);
  }
  assert.equal((await control('POST', '/payments/config', { statementRequestIds: 'no' })).status, 400);
  assert.equal((await control('POST', '/payments/config', { statementRequestIds: false })).body.statementRequestIds, false);
  try {
    const r = await pay.report(around());
    assert.ok(r.ok, JSON.stringify(r));
    assert.deepEqual(
      r.value.filter((l) => l.providerRef !== null),
      [],
      'no line names a request id',
    );
    const byReceipt = (receipt: string) => r.value.filter((l) => l.receipt === receipt);
    assert.deepEqual(
      byReceipt(a.sim.receipt).map((l) => [l.kind, l.amountMinor]),
      [['payment', 150_000]],
    );
    assert.deepEqual(
      byReceipt(settledReversal!.receipt).map((l) => [l.kind, l.amountMinor, l.reverses]),
      [['reversal', 50_000, a.sim.receipt]],
    );

    // Our side as the ledger gives it: the payments keep the receipts of their paid results, the refund its reversal's.
    const ours = (providerRef: string, receipt: string, kind: OurSettlement['kind'], amountMinor: number): OurSettlement => ({
      accountId: 1,
      paymentId: `pay-${providerRef}`,
      reference: `PAY-${providerRef}`,
      providerRef,
      receipt,
      kind,
      amountMinor,
      currency: 'KES',
      occurredAt: new Date(),
    });
    const c = compareSettlements(
      [
        ours(a.providerRef, a.sim.receipt, 'payment', 150_000),
        ours(b.providerRef, b.sim.receipt, 'payment', 20_000),
        ours(reversal.value.providerRef, settledReversal!.receipt, 'reversal', 50_000),
      ],
      r.value.filter((l) => [a.sim.receipt, b.sim.receipt, settledReversal!.receipt].includes(l.receipt)),
      [],
      around(),
    );
    assert.deepEqual([c.matched, c.mismatches], [3, []]);
  } finally {
    await control('POST', '/payments/config', { statementRequestIds: true });
  }
  const withIds = await pay.report(around());
  assert.equal(withIds.ok && byRef(withIds.value, a.providerRef).length, 1, 'the column is back');
});

test('the statement’s faults and refusals: unavailable is retryable; bad controls are 400 or 404', async () => {
  assert.equal((await control('POST', '/faults', { provider: 'payment', kind: 'statement_unavailable' })).status, 201);
  const down = await pay.report(around());
  assert.deepEqual(!down.ok && [down.permanent, down.code], [false, '503.001.01']);
  assert.ok((await pay.report(around())).ok, 'one use of the fault');

  const p = await settledPush(10_000);
  for (const body of [{ amount: 0 }, { amount: 1.5 }, { omit: 'yes' }, { completed: 1 }, []])
    assert.equal((await control('POST', `/payments/${p.providerRef}/statement`, body)).status, 400, JSON.stringify(body));
  assert.equal((await control('POST', '/payments/ws_CO_nope/statement', { omit: true })).status, 404);
  for (const body of [
    { amount: 10 },
    { amount: 10, phone: 'abc' },
    { amount: -1, phone: '254700000000' },
    { amount: 10, phone: '254700000000', completedAt: 'soon' },
  ])
    assert.equal((await control('POST', '/payments/statement/lines', body)).status, 400, JSON.stringify(body));

  // The download itself refuses a query Daraja would: another shortcode, an unreadable or empty period, no token.
  const token = (
    (await (
      await fetch(`${running.url}/daraja/oauth/v1/generate?grant_type=client_credentials`, {
        headers: { authorization: `Basic ${Buffer.from('sim-mpesa-consumer-key:sim-mpesa-consumer-secret').toString('base64')}` },
      })
    ).json()) as { access_token: string }
  ).access_token;
  const get = async (q: string, auth = `Bearer ${token}`) => {
    const res = await fetch(`${running.url}/daraja/org/v1/statement?${q}`, { headers: { authorization: auth } });
    return { status: res.status, body: (await res.json()) as { errorCode: string; errorMessage: string } };
  };
  const ok = 'StartDate=2026-11-27%2010:00:00&EndDate=2026-11-27%2011:00:00';
  assert.deepEqual((await get(`ShortCode=600000&${ok}`)).body.errorMessage, 'Bad Request - Invalid ShortCode');
  assert.equal((await get('ShortCode=174379&StartDate=yesterday&EndDate=2026-11-27%2011:00:00')).body.errorCode, '400.002.02');
  assert.equal((await get('ShortCode=174379&StartDate=2026-11-27%2011:00:00&EndDate=2026-11-27%2010:00:00')).status, 400);
  assert.equal((await get(`ShortCode=174379&${ok}`, 'Bearer forged')).body.errorCode, '404.001.03');
});
