import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import { WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError } from '@temporalio/client';
import type { Logger } from '../../logger.js';
import { signalWorkflow, startWorkflow, type StarterDeps } from '../../temporal/starters.js';
import { paymentStarter, paymentWorkflowId } from '../../workflows/payments/payment.starter.js';
import { recordMove } from './moves.js';
import { startRefundAfterCommit } from './refunds.js';
import { paymentSummary, type PaymentSummary } from './payments.js';
import { markWorkflowStarted, paymentsOwingWorkflow } from './store.js';

// A payment's workflow (workflows/payments/payment.ts): started once the payment's request has
// committed, so the workflow never looks for a row that is not there yet; started by the reconciler
// when that start was lost; told when the operator cancels the payment.

/** orm: when given, the start is recorded on the payment (workflow_started_at), so the reconciler leaves it alone. */
export type PaymentFlowDeps = StarterDeps<'taskQueue'> & { log?: Logger; orm?: MikroORM };

/**
 * Starts the payment's workflow after its request committed. A payment not in draft or pending, and
 * a refund (it has a workflow of its own: startRefundAfterCommit, ./refunds.ts), start nothing. A
 * second start for the same payment is refused by the id policy and is not an error: the first is
 * its workflow. Resolves with whether a workflow was started.
 */
export async function startPaymentAfterCommit(
  deps: PaymentFlowDeps,
  payment: Pick<
    PaymentSummary,
    'id' | 'reference' | 'state' | 'amount_minor' | 'currency' | 'payer' | 'provider' | 'expires_at' | 'is_refund'
  >,
  accountId: number,
): Promise<boolean> {
  if (payment.is_refund || (payment.state !== 'draft' && payment.state !== 'pending')) return false;
  let started = true;
  try {
    await startWorkflow(deps, paymentStarter, { accountId, paymentId: payment.id }, [
      {
        accountId,
        paymentId: payment.id,
        reference: payment.reference,
        state: payment.state,
        amountMinor: payment.amount_minor,
        currency: payment.currency,
        payer: payment.payer,
        provider: payment.provider,
        expiresAt: payment.expires_at,
      },
    ]);
  } catch (err) {
    if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
    started = false;
  }
  if (deps.orm) {
    // The workflow runs either way; a mark that does not land only lets the reconciler find it running.
    await markWorkflowStarted(deps.orm.em.fork(), payment.id).catch((err: unknown) =>
      deps.log?.warn({ err, payment: payment.id }, 'payment workflow start not recorded; the reconciler will find it running'),
    );
  }
  return started;
}

/**
 * One reconciler pass: the payments and refunds requested at least `olderThanSeconds` ago whose
 * workflow was never started (the start after the commit failed, or the process stopped before it)
 * get it now. A refund owed one is in draft, so surely never sent: starting it late sends it once.
 * A payment already past its expires_at is expired instead (source expiry), so its payer is not
 * prompted for a payment that can no longer be paid. Answers how many were repaired.
 */
export async function startOwedPayments(em: EntityManager, deps: PaymentFlowDeps & { orm: MikroORM }, olderThanSeconds = 30, limit = 200) {
  const rows = await paymentsOwingWorkflow(em, olderThanSeconds, limit);
  for (const row of rows) {
    const p = paymentSummary(row);
    if (p.is_refund) {
      await startRefundAfterCommit(deps, p, row.account_id);
      continue;
    }
    if (p.expires_at && Date.parse(p.expires_at) <= Date.now()) {
      await recordMove(deps.orm.em.fork(), {
        accountId: row.account_id,
        payment: p.id,
        to: 'expired',
        source: 'expiry',
        message: `Not paid by ${p.expires_at}; its workflow had not started.`,
      });
      await markWorkflowStarted(deps.orm.em.fork(), p.id);
      continue;
    }
    await startPaymentAfterCommit(deps, p, row.account_id);
  }
  return rows.length;
}

/**
 * Tells the payment's workflow that the operator cancelled the payment, after the move committed,
 * so it stops pushing and polling at once. Best effort: a payment with no running workflow needs no
 * telling, and a workflow not reached learns it from the refusal of its next move.
 */
export async function tellPaymentCancelled(
  deps: { temporal: StarterDeps<'taskQueue'>['temporal']; log?: Logger },
  accountId: number,
  payment: Pick<PaymentSummary, 'id' | 'is_refund'>,
  source: string,
): Promise<void> {
  if (payment.is_refund) return;
  try {
    await signalWorkflow(deps.temporal, paymentStarter, paymentWorkflowId(accountId, payment.id), 'paymentCancelled', { source });
  } catch (err) {
    if (!(err instanceof WorkflowNotFoundError))
      deps.log?.warn({ err, payment: payment.id }, 'payment workflow not told of the cancel; its next move will be refused');
  }
}
