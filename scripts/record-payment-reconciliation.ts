// Records the payment reconciliation workflow's histories for the replay test:
//   npx tsx scripts/record-payment-reconciliation.ts
// A stack of its own; payments requested through services/payments and paid by the simulated M-Pesa,
// its statement made to disagree (a line left out), then runs started as the operator's run-now
// starts them: over a named period in hour slices with a mismatch recorded; over the schedule's
// window (the period the workflow computes from its start); and with the statement unavailable, so
// every slice fails after its retries and is counted. test/replay/histories/paymentReconciliationWorkflow/<scenario>.json.
// Re-record after a change to workflows/payments/reconciliation.ts.
import { randomUUID } from 'node:crypto';
import pino from 'pino';
import { openOrm } from '../entities/orm.js';
import { loadConfig } from '../config.js';
import { requestPayment, startPaymentAfterCommit } from '../services/payments/index.js';
import { startWorkflow } from '../temporal/starters.js';
import { paymentReconciliationRunStarter } from '../workflows/payments/reconciliation.starter.js';
import type { PaymentReconciliationInput } from '../workflows/payments/reconciliation.js';
import { withRecorder } from './recorder.js';

const TYPE = 'paymentReconciliationWorkflow';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

await withRecorder('svc-record-reconciliation', {}, 'Reconciliation recorder', async ({ stack, client, account, sim, api, save }) => {
  const orm = await openOrm(stack.databaseUrl, 2);
  try {
    const config = { taskQueue: loadConfig().taskQueue };
    const deps = { temporal: client, config, log: pino({ level: 'silent' }) };
    const start = Date.now();
    const checkouts: string[] = [];
    for (const [i, amount] of [150_000, 80_000].entries()) {
      const payer = `+2547${String(60_000_000 + i * 7919).slice(-8)}`;
      const p = await requestPayment(orm.em.fork(), {
        accountId: account.id,
        amountMinor: amount,
        currency: 'KES',
        payer,
        subjectId: `order-${i}`,
        subjectType: 'order',
        expiresAt: new Date(Date.now() + 10 * 60_000),
        source: 'recorder',
      });
      await startPaymentAfterCommit(deps, p, account.id);
      for (let n = 0; n < 200 && (await api('GET', `/api/v3/payments/${p.id}`)).data?.state !== 'paid'; n++) await sleep(250);
      checkouts.push((await sim('GET', `/_sim/payments?phone=${encodeURIComponent(payer)}`)).payments[0].checkoutRequestId);
    }
    await sim('POST', `/_sim/payments/${checkouts[1]}/statement`, { omit: true });

    const record = async (scenario: string, input: PaymentReconciliationInput) => {
      const handle = await startWorkflow(
        { temporal: client, config },
        paymentReconciliationRunStarter,
        { runId: `record-${randomUUID()}` },
        [input],
      );
      await save(TYPE, scenario, handle);
    };
    const named = {
      from: new Date(Math.floor(start / 60_000) * 60_000 - 90 * 60_000).toISOString(),
      to: new Date(Date.now() + 60_000).toISOString(),
    };
    await Promise.all([
      record('named-period-mismatch', named),
      record('schedule-window', { windowMinutes: 120, lagMinutes: 0, sliceMinutes: 60 }),
    ]);
    // Every read of the statement answers 503 until cleared: each slice fails after its five attempts.
    await sim('POST', '/_sim/faults', { provider: 'payment', kind: 'statement_unavailable', count: -1 });
    await record('report-unavailable', { ...named, sliceMinutes: 120 });
    await sim('DELETE', '/_sim/faults?provider=payment');
  } finally {
    await orm.close();
  }
});
