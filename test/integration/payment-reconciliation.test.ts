import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { Client, Connection } from '@temporalio/client';
import { admin, api, eventually, newTenant, sim, type Tenant } from '../support/stack.js';
import { paymentsOf, paymentsOrm } from '../support/payments.js';
import { cli } from '../support/admin-cli.js';
import { loadConfig } from '../../config.js';
import { createLogger } from '../../logger.js';
import { startPaymentAfterCommit } from '../../services/payments/index.js';
import { AccountId, ResourceType } from '../../temporal/search-attributes.js';
import { paymentWorkflowId } from '../../temporal/ids.js';
import { ensureSchedules } from '../../worker/schedules.js';
import type { ReconciliationProgress } from '../../workflows/payments/reconciliation.js';

// Payment reconciliation on the real stack (issue 26 point 5): payments paid through the simulated
// M-Pesa, its statement made to disagree (a line left out, another amount, a failed push shown paid,
// money nobody asked for), and read as Safaricom exports it (no request id: matched by receipt),
// reconciliation run on demand through the operator API: one mismatch,
// one notice and one payment.mismatch event per disagreement of an account's money, nothing twice on
// a second run, nothing for the accounts whose money agrees; the hourly schedule the worker made.
//
// @test-alone: a run reconciles every account's payments of its period against the simulator's one
// statement, so another file's payments in flight at the same time would be judged too.
const orm = await paymentsOrm(4);
const connection = await Connection.connect({ address: process.env.TEMPORAL_ADDRESS ?? '127.0.0.1:7233' });
const temporal = new Client({ connection });
const started: Array<{ accountId: number; id: string }> = [];
after(async () => {
  // Paid payments' workflows linger an hour for late callbacks: not this run's business.
  await Promise.all(
    started.map((p) =>
      temporal.workflow
        .getHandle(paymentWorkflowId(p.accountId, p.id))
        .terminate('test done')
        .catch(() => undefined),
    ),
  );
  await orm.close();
  await connection.close();
});
const pay = paymentsOf(orm);
const deps = { temporal, config: { taskQueue: loadConfig().taskQueue }, log: createLogger('test', 'warn') };
let phoneSeq = 0;
const newPayer = () => `+2547${String(50_000_000 + process.pid * 17 + ++phoneSeq * 7919).slice(-8)}`;
const testStart = Date.now();

/** A payment pushed to the simulated M-Pesa and settled there (paid, unless `fault` says otherwise); answers it with its CheckoutRequestID. */
async function pushed(t: Tenant, amountMinor: number, fault?: string) {
  const payer = newPayer();
  if (fault) assert.equal((await sim('POST', '/_sim/faults', { provider: 'payment', kind: fault, to: payer.slice(1) })).status, 201);
  const p = await pay.request(t.accountId, {
    amountMinor,
    currency: 'KES',
    payer,
    subjectType: 'order',
    subjectId: `order-${phoneSeq}`,
    expiresAt: new Date(Date.now() + 10 * 60_000),
  });
  assert.equal(await startPaymentAfterCommit(deps, p, t.accountId), true);
  started.push({ accountId: t.accountId, id: p.id });
  const settled = fault ? 'failed' : 'paid';
  await eventually(
    () => api('GET', `/api/v3/payments/${p.id}`, t.token),
    (r) => r.body?.data?.state === settled,
    60_000,
    250,
    `payment ${p.reference} ${settled}`,
  );
  const at = await sim('GET', `/_sim/payments?phone=${encodeURIComponent(payer)}`);
  return { ...p, checkout: at.body.payments[0].checkoutRequestId as string, receipt: at.body.payments[0].receipt as string | null };
}

// From this file's start (the statement's times are whole seconds), to a little past now.
const period = () => ({
  from: new Date(Math.floor(testStart / 1000) * 1000).toISOString(),
  to: new Date(Date.now() + 60_000).toISOString(),
});
const reconcile = (body: Record<string, unknown>) => admin('POST', '/payments/reconciliations', body);
const noticesOf = async (t: Tenant) =>
  (await api('GET', '/api/v3/notices?kind=payment.mismatch&per_page=100', t.token)).body.data.notices as any[];
const eventsOf = async (t: Tenant) =>
  ((await api('GET', '/api/v3/automations/events?type=payment.mismatch&limit=100', t.token)).body.data.events as any[]) ?? [];

test(
  'a disagreeing statement: one mismatch, notice and event per disagreement, for its account only; a second run adds none',
  { timeout: 300_000 },
  async () => {
    const a = await newTenant();
    const b = await newTenant();
    const c = await newTenant();
    const [agrees, omitted, otherAmount, failedButPaid, bAgrees, cOmitted] = await Promise.all([
      pushed(a, 150_000),
      pushed(a, 200_000),
      pushed(a, 150_000),
      pushed(a, 120_000, 'insufficient_funds'),
      pushed(b, 300_000),
      pushed(c, 50_000),
    ]);
    assert.equal((await sim('POST', `/_sim/payments/${omitted.checkout}/statement`, { omit: true })).status, 200);
    assert.equal((await sim('POST', `/_sim/payments/${otherAmount.checkout}/statement`, { amount: 1400 })).status, 200);
    assert.equal((await sim('POST', `/_sim/payments/${failedButPaid.checkout}/statement`, { completed: true })).status, 200);
    assert.equal((await sim('POST', `/_sim/payments/${cOmitted.checkout}/statement`, { omit: true })).status, 200);
    const stray = await sim('POST', '/_sim/payments/statement/lines', { amount: 777, phone: '+254799000111', accountReference: 'walk-in' });
    assert.equal(stray.status, 201, stray.text);

    // One account's run judges only that account's money.
    const mine = await reconcile({ ...period(), account: a.accountId });
    assert.equal(mine.status, 200, mine.text);
    const run = mine.body.data;
    assert.equal(run.state, 'completed');
    assert.equal(run.account_id, a.accountId);
    assert.equal(run.provider, 'mpesa-daraja');
    assert.match(run.run_id, new RegExp(`^payment-reconciliation/${a.accountId}/[0-9a-f-]{36}$`));
    assert.deepEqual(run.counts, {
      ours: 3,
      theirs: 3,
      matched: 1,
      missing_at_provider: 1,
      missing_in_ours: 1,
      amount_differs: 1,
      recorded: 3,
      slices_failed: 0,
      failures: [],
    });

    const notices = await noticesOf(a);
    const byRef = (ref: string) => notices.filter((n) => n.data.reference === ref);
    assert.equal(notices.length, 3);
    assert.deepEqual(
      byRef(omitted.reference).map((n) => [n.data.mismatch, n.data.our_amount_minor, n.data.provider_amount_minor]),
      [['missing_at_provider', 200_000, null]],
    );
    assert.match(
      byRef(omitted.reference)[0].message,
      /KES\s2,000\.00 is settled in our ledger, but the payment provider's report does not show it/,
    );
    assert.deepEqual(
      byRef(otherAmount.reference).map((n) => [n.data.mismatch, n.data.our_amount_minor, n.data.provider_amount_minor, n.data.receipt]),
      [['amount_differs', 150_000, 140_000, otherAmount.receipt]],
    );
    const [unpaid] = byRef(failedButPaid.reference);
    assert.deepEqual(
      [unpaid.data.mismatch, unpaid.data.payment_state, unpaid.data.provider_amount_minor, unpaid.data.payment_id],
      ['missing_in_ours', 'failed', 120_000, failedButPaid.id],
    );
    assert.match(
      unpaid.message,
      /reports the payment PAY-\S+ settled, KES\s1,200\.00 \(receipt [A-Z0-9]{10}\), but our ledger has not recorded it \(the payment is failed\)/,
    );
    assert.deepEqual(byRef(agrees.reference), [], 'the payment that agrees tells nothing');

    const events = await eventsOf(a);
    assert.deepEqual(
      events.map((e) => [e.type, e.live, e.source, e.data.reference]).sort((x, y) => String(x[3]).localeCompare(String(y[3]))),
      [omitted, otherAmount, failedButPaid]
        .map((p) => ['payment.mismatch', false, 'payments', p.reference])
        .sort((x, y) => String(x[3]).localeCompare(String(y[3]))),
      'one payment.mismatch per disagreement, declared live=false',
    );
    assert.deepEqual(await noticesOf(c), [], 'another account’s money is not judged by this account’s run');

    // Every account's run: c's disagreement and the money nobody asked for are new; a's are not recorded again.
    const all = await reconcile(period());
    assert.equal(all.status, 200, all.text);
    assert.equal(all.body.data.account_id, null);
    assert.deepEqual(
      [all.body.data.counts.missing_at_provider, all.body.data.counts.missing_in_ours, all.body.data.counts.amount_differs],
      [2, 2, 1],
    );
    assert.equal(all.body.data.counts.recorded, 2, 'only what was not recorded before');
    const cNotices = await noticesOf(c);
    assert.deepEqual(
      cNotices.map((n) => [n.data.mismatch, n.data.reference]),
      [['missing_at_provider', cOmitted.reference]],
    );
    const again = await reconcile(period());
    assert.equal(again.body.data.counts.recorded, 0, 'a period reconciled again records nothing');
    assert.equal((await noticesOf(a)).length, 3);
    assert.equal((await eventsOf(a)).length, 3);
    assert.equal((await noticesOf(c)).length, 1);
    assert.deepEqual(await noticesOf(b), [], 'an account whose money agrees is told nothing');
    assert.deepEqual(await eventsOf(b), []);
    assert.ok(bAgrees.receipt);
    const bRun = await cli('payments:reconcile', '--account', String(b.accountId), '--from', period().from, '--to', period().to);
    assert.equal(bRun.code, 0, bRun.stderr);
    assert.deepEqual(
      [bRun.json.data.state, bRun.json.data.counts.matched, bRun.json.data.counts.recorded],
      ['completed', 1, 0],
      'the CLI runs it too; b’s one payment agrees',
    );

    // The operator's list: an account's, and the money that names no payment of ours.
    const listed = await admin('GET', `/payments/mismatches?account=${a.accountId}`);
    assert.equal(listed.status, 200, listed.text);
    assert.deepEqual(listed.body.data.mismatches.map((m: any) => m.kind).sort(), [
      'amount_differs',
      'missing_at_provider',
      'missing_in_ours',
    ]);
    assert.equal(listed.body.data.pagination.total, 3);
    const found = listed.body.data.mismatches.find((m: any) => m.kind === 'missing_at_provider');
    assert.deepEqual(
      [found.provider_ref, found.payment_id, found.found_by],
      [omitted.checkout, omitted.id, run.run_id],
      'the provider’s id and the run that found it, for the operator',
    );
    const nobody = await admin('GET', '/payments/mismatches?kind=missing_in_ours&per_page=100');
    const walkIn = nobody.body.data.mismatches.filter((m: any) => m.receipt === stray.body.receipt);
    assert.deepEqual(
      walkIn.map((m: any) => [m.account_id, m.payment_id, m.provider_ref, m.provider_amount_minor, m.payer]),
      [[null, null, null, 77_700, '+254799000111']],
    );
    const viaCli = await cli('payments:mismatches', '--account', String(c.accountId));
    assert.equal(viaCli.code, 0, viaCli.stderr);
    assert.deepEqual(
      viaCli.json.data.mismatches.map((m: any) => m.reference),
      [cOmitted.reference],
    );

    // The run is a workflow an operator finds by its search attributes, with its counts in a query.
    const handle = temporal.workflow.getHandle(run.run_id);
    const desc = await handle.describe();
    assert.equal(desc.type, 'paymentReconciliationWorkflow');
    assert.equal(desc.typedSearchAttributes.get(AccountId), String(a.accountId));
    assert.equal(desc.typedSearchAttributes.get(ResourceType), 'payment_reconciliation');
    const progress = await handle.query<ReconciliationProgress>('progress');
    assert.deepEqual([progress.phase, progress.recorded, progress.matched], ['done', 3, 1]);
  },
);

test(
  'Safaricom’s statement, without the API Request ID column: each line names our payment or refund by its receipt',
  { timeout: 300_000 },
  async () => {
    const d = await newTenant();
    const [agrees, otherAmount, omitted, refunded] = await Promise.all([
      pushed(d, 150_000),
      pushed(d, 100_000),
      pushed(d, 80_000),
      pushed(d, 60_000),
    ]);
    const refund = await admin('POST', `/accounts/${d.accountId}/payments/${refunded.id}/refunds`, {
      amount_minor: 20_000,
      reason: 'damaged',
    });
    assert.equal(refund.status, 201, refund.text);
    await eventually(
      () => api('GET', `/api/v3/payments/${refund.body.data.id}`, d.token),
      (r) => r.body?.data?.state === 'paid',
      60_000,
      250,
      'the refund reversed at the provider',
    );
    assert.equal((await sim('POST', `/_sim/payments/${otherAmount.checkout}/statement`, { amount: 900 })).status, 200);
    assert.equal((await sim('POST', `/_sim/payments/${omitted.checkout}/statement`, { omit: true })).status, 200);
    assert.equal((await sim('POST', '/_sim/payments/config', { statementRequestIds: false })).status, 200);
    try {
      const run = await reconcile({ ...period(), account: d.accountId });
      assert.equal(run.status, 200, run.text);
      assert.deepEqual(run.body.data.counts, {
        ours: 5,
        theirs: 4,
        matched: 3,
        missing_at_provider: 1,
        missing_in_ours: 0,
        amount_differs: 1,
        recorded: 2,
        slices_failed: 0,
        failures: [],
      });
      const notices = await noticesOf(d);
      assert.deepEqual(
        notices
          .map((n) => [n.data.mismatch, n.data.reference, n.data.receipt, n.data.our_amount_minor, n.data.provider_amount_minor])
          .sort((x, y) => String(x[0]).localeCompare(String(y[0]))),
        [
          ['amount_differs', otherAmount.reference, otherAmount.receipt, 100_000, 90_000],
          ['missing_at_provider', omitted.reference, omitted.receipt, 80_000, null],
        ],
      );
      assert.ok(agrees.receipt);
      // The same disagreement found through the request id column is the same mismatch: not recorded again.
      assert.equal((await sim('POST', '/_sim/payments/config', { statementRequestIds: true })).status, 200);
      const withIds = await reconcile({ ...period(), account: d.accountId });
      assert.deepEqual([withIds.body.data.counts.matched, withIds.body.data.counts.recorded], [3, 0]);
    } finally {
      await sim('POST', '/_sim/payments/config', { statementRequestIds: true });
    }
  },
);

test('the operator’s run refuses a period that ends before it starts, one too long, a bad time and an unknown account', async () => {
  const cases: Array<[Record<string, unknown>, number, RegExp]> = [
    [{ from: '2026-11-27T12:00:00Z', to: '2026-11-27T11:00:00Z' }, 422, /to/],
    [{ from: '2026-09-01T00:00:00Z', to: '2026-11-27T00:00:00Z' }, 422, /31 days/],
    [{ from: 'yesterday' }, 422, /from/],
    [{ account: 2_000_000_000 }, 404, /Account/],
    [{ period: 'last hour' }, 422, /period/],
  ];
  for (const [body, status, message] of cases) {
    const r = await reconcile(body);
    assert.equal(r.status, status, `${JSON.stringify(body)}: ${r.text}`);
    assert.match(r.text, message);
  }
  const list = await admin('GET', '/payments/mismatches?kind=lost');
  assert.equal(list.status, 422, list.text);
  assert.equal((await admin('GET', '/payments/mismatches?account=2000000000')).status, 404);
});

test('the worker made the hourly schedule, starting the reconciliation run; making it again keeps it and its pause', async () => {
  const handle = temporal.schedule.getHandle('payment-reconciliation');
  const made = await handle.describe();
  assert.equal(made.state.paused, true, 'test stacks create it paused (PAYMENT_RECONCILIATION_PAUSED)');
  assert.equal(made.action.type === 'startWorkflow' ? made.action.workflowType : null, 'paymentReconciliationWorkflow');
  assert.equal(made.action.type === 'startWorkflow' ? made.action.workflowId : null, 'payment-reconciliation/scheduled');
  assert.deepEqual(made.action.type === 'startWorkflow' ? made.action.args : null, [{ windowMinutes: 120, lagMinutes: 15 }]);
  assert.deepEqual(
    made.spec.intervals?.map((i) => i.every),
    [3600_000],
  );
  assert.equal(made.policies.overlap, 'SKIP');
  await ensureSchedules(temporal, { ...loadConfig(), paymentReconciliationPaused: false });
  const d = await handle.describe();
  assert.equal(d.state.paused, true, "a worker start keeps an operator's pause");
  assert.equal(d.action.type === 'startWorkflow' ? d.action.workflowType : null, 'paymentReconciliationWorkflow');
});
