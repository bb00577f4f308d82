// Records the payment workflow's histories for the replay test:
//   npx tsx scripts/record-payments.ts
// A stack of its own; payments requested through services/payments requestPayment and started by
// startPaymentAfterCommit (as the checkout and operator doors do), against the simulated M-Pesa:
// paid by its signed callback, paid with the callback posted twice, paid by the status poll when the
// callback is lost, and a draft with no payer expired by its timer. The workflow takes late
// callbacks for an hour after settling, so each run is terminated once its state is recorded (the
// history up to there is what replays). test/replay/histories/paymentWorkflow/<scenario>.json.
// Re-record after a change to workflows/payments/payment.ts.
import pino from 'pino';
import { openOrm } from '../entities/orm.js';
import { loadConfig } from '../config.js';
import { requestPayment, startPaymentAfterCommit } from '../services/payments/index.js';
import { paymentStateQuery, type PaymentWorkflowState } from '../workflows/payments/payment.js';
import { paymentWorkflowId } from '../workflows/payments/payment.starter.js';
import { withRecorder } from './recorder.js';

const TYPE = 'paymentWorkflow';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

await withRecorder('svc-record-payments', {}, 'Payments recorder', async ({ stack, client, account, sim, save }) => {
  const orm = await openOrm(stack.databaseUrl, 2);
  try {
    const deps = { temporal: client, config: { taskQueue: loadConfig().taskQueue }, log: pino({ level: 'silent' }) };
    let seq = 0;
    const record = async (
      scenario: string,
      o: { fault?: string; payer?: boolean; expiresInMs: number },
      done: (s: PaymentWorkflowState) => boolean,
    ) => {
      const payer = `+2547${String(30_000_000 + ++seq * 7919).slice(-8)}`;
      if (o.fault) await sim('POST', '/_sim/faults', { provider: 'payment', kind: o.fault, to: payer.slice(1) });
      const p = await requestPayment(orm.em.fork(), {
        accountId: account.id,
        amountMinor: 150_000,
        currency: 'KES',
        payer: o.payer === false ? null : payer,
        subjectId: `order-${scenario}`,
        subjectType: 'order',
        expiresAt: new Date(Date.now() + o.expiresInMs),
        source: 'recorder',
      });
      await startPaymentAfterCommit(deps, p, account.id);
      const h = client.workflow.getHandle(paymentWorkflowId(account.id, p.id));
      for (let i = 0; i < 300; i++) {
        if (done(await h.query(paymentStateQuery))) break;
        await sleep(250);
      }
      await sleep(500);
      await h.terminate('recorded');
      await save(TYPE, scenario, h);
    };
    await Promise.all([
      record('callback-paid', { expiresInMs: 10 * 60_000 }, (s) => s.phase === 'settled'),
      record('duplicate-callback', { fault: 'duplicate_callback', expiresInMs: 10 * 60_000 }, (s) => s.duplicates > 0),
      record('lost-callback-polled', { fault: 'no_callback', expiresInMs: 10 * 60_000 }, (s) => s.phase === 'settled'),
      record('draft-expired', { payer: false, expiresInMs: 3_000 }, (s) => s.phase === 'settled'),
    ]);
  } finally {
    await orm.close();
  }
});
