// Records the refund workflow's histories for the replay test:
//   npx tsx scripts/record-refunds.ts [scenario …]   (none named: all of them)
// A stack of its own; each refund is the operator's (POST …/payments/{payment}/refunds, which starts
// its workflow after the commit) of a payment paid at the simulated M-Pesa through its own workflow,
// so the reversal names a real receipt: refunded by the signed result, the result replayed (a
// duplicate), the reversal failing (reversal_fails), no receipt (a payment paid through the services
// alone: receipt_required), the provider down once (503, sent again) and the answer lost (a timeout:
// never sent again, settled by the result). The workflow takes late results for an hour after
// settling, so each run is terminated once its state is recorded (the history up to there is what
// replays). test/replay/histories/refundWorkflow/<scenario>.json. Re-record after a change to
// workflows/payments/refund.ts.
import { openOrm } from '../entities/orm.js';
import { recordMove, requestPayment } from '../services/payments/index.js';
import { refundStateQuery, type RefundWorkflowState } from '../workflows/payments/refund.js';
import { refundWorkflowId } from '../workflows/payments/refund.starter.js';
import { withRecorder } from './recorder.js';

const TYPE = 'refundWorkflow';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const only = process.argv.slice(2);

await withRecorder('svc-record-refunds', {}, 'Refunds recorder', async ({ stack, client, account, admin, sim, save }) => {
  const orm = await openOrm(stack.databaseUrl, 2);
  const P = `/accounts/${account.id}/payments`;
  try {
    let seq = 0;
    /** A payment of KES 1,500 paid at the simulator (its workflow pushed it, the signed result settled it). */
    const paidAtProvider = async () => {
      const payer = `+2547${String(40_000_000 + ++seq * 7919).slice(-8)}`;
      const p = (await admin('POST', P, { amount_minor: 150_000, currency: 'KES', payer, subject_type: 'order', subject_id: `o-${seq}` }))
        .data;
      for (let i = 0; i < 120; i++) {
        if ((await admin('GET', `${P}/${p.id}`)).data.state === 'paid') return { id: p.id as string, payer };
        await sleep(250);
      }
      throw new Error(`payment ${p.reference} was not paid`);
    };
    /** A payment paid through the services alone: no receipt. */
    const paidWithoutReceipt = async () => {
      const p = await requestPayment(orm.em.fork(), { accountId: account.id, amountMinor: 150_000, currency: 'KES', source: 'recorder' });
      for (const to of ['pending', 'paid'] as const)
        await recordMove(orm.em.fork(), { accountId: account.id, payment: p.id, to, source: 'recorder' });
      return { id: p.id, payer: null };
    };
    const until = async (id: string, ok: (s: RefundWorkflowState) => boolean) => {
      const h = client.workflow.getHandle(refundWorkflowId(account.id, id));
      for (let i = 0; i < 240; i++) {
        if (ok(await h.query(refundStateQuery))) return h;
        await sleep(250);
      }
      throw new Error(`refund ${id} never got there`);
    };
    const record = async (
      scenario: string,
      o: { parent?: () => Promise<{ id: string; payer: string | null }>; fault?: string; replay?: boolean },
      done: (s: RefundWorkflowState) => boolean,
    ) => {
      if (only.length && !only.includes(scenario)) return;
      const parent = await (o.parent ?? paidAtProvider)();
      if (o.fault && parent.payer) await sim('POST', '/_sim/faults', { provider: 'payment', kind: o.fault, to: parent.payer.slice(1) });
      const refund = (await admin('POST', `${P}/${parent.id}/refunds`, { amount_minor: 40_000, reason: `recorded: ${scenario}` })).data;
      let h = await until(refund.id, (s) => s.phase === 'settled' || s.phase === 'done');
      if (o.replay) {
        // The simulator's signed result posted again, byte for byte.
        const reversal = (await sim('GET', '/_sim/payments/reversals')).reversals.find(
          (v: { occasion: string }) => v.occasion === refund.reference,
        );
        const cb = (await sim('GET', `/_sim/callbacks?provider=payment&kind=payment.reversal&messageId=${reversal.conversationId}`))
          .callbacks[0];
        await fetch(cb.url, { method: 'POST', headers: cb.headers, body: cb.rawBody });
      }
      h = await until(refund.id, done);
      await sleep(500);
      await h.terminate('recorded').catch(() => undefined);
      await save(TYPE, scenario, h);
    };
    await Promise.all([
      record('refunded', {}, (s) => s.phase === 'settled'),
      record('duplicate-result', { replay: true }, (s) => s.duplicates > 0),
      record('reversal-failed', { fault: 'reversal_fails' }, (s) => s.phase === 'settled'),
      record('no-receipt', { parent: paidWithoutReceipt }, (s) => s.phase === 'settled'),
      record('unavailable-sent-again', { fault: 'payment_unavailable' }, (s) => s.phase === 'settled'),
      record('answer-lost', { fault: 'payment_timeout' }, (s) => s.phase === 'settled'),
    ]);
  } finally {
    await orm.close();
  }
});
