// Records the payment workflow's histories for the replay test:
//   npx tsx scripts/record-payments.ts [scenario …]   (none named: all of them)
// A stack of its own; payments requested through services/payments requestPayment and started by
// startPaymentAfterCommit (as the checkout and operator doors do), against the simulated M-Pesa:
// paid by its signed callback, paid with the callback posted twice, paid by the status poll when the
// callback is lost, a draft with no payer expired by its timer, cancelled by the operator while it
// waits (the paymentCancelled signal), and a paid callback for another amount refused. The workflow
// takes late callbacks for an hour after settling, so each run is terminated once its state is
// recorded (the history up to there is what replays).
// test/replay/histories/paymentWorkflow/<scenario>.json. Re-record after a change to
// workflows/payments/payment.ts.
import pino from 'pino';
import { openOrm } from '../entities/orm.js';
import { loadConfig } from '../config.js';
import { requestPayment, startPaymentAfterCommit } from '../services/payments/index.js';
import { paymentStateQuery, type PaymentWorkflowState } from '../workflows/payments/payment.js';
import { paymentWorkflowId } from '../workflows/payments/payment.starter.js';
import { withRecorder } from './recorder.js';

const TYPE = 'paymentWorkflow';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const only = process.argv.slice(2);

await withRecorder('svc-record-payments', {}, 'Payments recorder', async ({ stack, client, account, admin, sim, save }) => {
  const orm = await openOrm(stack.databaseUrl, 2);
  try {
    const deps = { temporal: client, config: { taskQueue: loadConfig().taskQueue }, log: pino({ level: 'silent' }), orm };
    let seq = 0;
    const record = async (
      scenario: string,
      o: {
        fault?: string;
        faultExtra?: Record<string, unknown>;
        payer?: boolean;
        expiresInMs: number;
        /** Done once the workflow shows `when`, before waiting for `done`. */
        midway?: { when: (s: PaymentWorkflowState) => boolean; run: (paymentId: string) => Promise<void> };
      },
      done: (s: PaymentWorkflowState) => boolean,
    ) => {
      if (only.length && !only.includes(scenario)) return;
      const payer = `+2547${String(30_000_000 + ++seq * 7919).slice(-8)}`;
      if (o.fault) await sim('POST', '/_sim/faults', { provider: 'payment', kind: o.fault, to: payer.slice(1), ...o.faultExtra });
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
      if (o.midway) {
        for (let i = 0; i < 300; i++) {
          if (o.midway.when(await h.query(paymentStateQuery))) break;
          await sleep(250);
        }
        await o.midway.run(p.id);
      }
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
      record(
        'operator-cancelled',
        {
          // No callback: the workflow waits for its first poll, and the operator cancels before it.
          fault: 'no_callback',
          expiresInMs: 10 * 60_000,
          midway: {
            when: (s) => s.phase === 'waiting',
            run: (id) => admin('POST', `/accounts/${account.id}/payments/${id}/cancel`, { reason: 'recorded' }),
          },
        },
        (s) => s.phase === 'settled',
      ),
      record(
        'wrong-amount-refused',
        { fault: 'payment_result', faultExtra: { code: 0, amount: 1400 }, expiresInMs: 10 * 60_000 },
        (s) => s.refusals.length > 0,
      ),
    ]);
  } finally {
    await orm.close();
  }
});
