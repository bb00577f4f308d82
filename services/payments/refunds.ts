import type { MikroORM } from '@mikro-orm/postgresql';
import { WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { Logger } from '../../logger.js';
import type { RefundResultEvent } from '../../providers/index.js';
import { signalWorkflow, startWorkflow } from '../../temporal/starters.js';
import { refundStarter, refundWorkflowId } from '../../workflows/payments/refund.starter.js';
import type { PaymentFlowDeps } from './flow.js';
import type { PaymentSummary } from './payments.js';
import { markWorkflowStarted, paymentForCallback } from './store.js';

// A refund at the provider (workflows/payments/refund.ts): its workflow is started once the refund's
// request has committed, and the provider's reversal results are handed to it as signals, as a
// payment's results are to the payment's workflow (./ingress.ts).

/**
 * Starts the refund's workflow after its request committed, or from the reconciler when that start
 * was lost. Only a refund in draft starts one (a refund in any other state was moved by someone else
 * and is not sent). A second start for the same refund is refused by the id policy and is not an
 * error. With `orm`, the start is recorded on the refund (workflow_started_at), as a payment's is.
 * Resolves with whether one was started.
 */
export async function startRefundAfterCommit(
  deps: PaymentFlowDeps,
  refund: Pick<
    PaymentSummary,
    'id' | 'reference' | 'state' | 'amount_minor' | 'currency' | 'provider' | 'is_refund' | 'refund_of' | 'reason'
  >,
  accountId: number,
): Promise<boolean> {
  if (!refund.is_refund || !refund.refund_of || refund.state !== 'draft') return false;
  let started = true;
  try {
    await startWorkflow(deps, refundStarter, { accountId, refundId: refund.id }, [
      {
        accountId,
        refundId: refund.id,
        reference: refund.reference,
        refundOf: refund.refund_of,
        amountMinor: refund.amount_minor,
        currency: refund.currency,
        reason: refund.reason,
        provider: refund.provider,
        state: refund.state,
      },
    ]);
  } catch (err) {
    if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
    started = false;
  }
  if (deps.orm) {
    // As a payment's: the workflow runs either way; a mark that does not land only lets the reconciler find it running.
    await markWorkflowStarted(deps.orm.em.fork(), refund.id).catch((err: unknown) =>
      deps.log?.warn({ err, refund: refund.id }, 'refund workflow start not recorded; the reconciler will find it running'),
    );
  }
  return started;
}

export interface RefundIngressDeps {
  orm: MikroORM;
  temporal: Client;
  log: Logger;
}

/**
 * A verified reversal result, to its refund's workflow: found by the reversal's id at the provider,
 * else by the refund's reference from our result URL (a reversal whose acknowledgement was lost is
 * known by that alone). A result for no refund we know, or for one whose workflow has closed, is
 * accepted and logged, as a payment's is.
 */
export async function forwardRefundResult(deps: RefundIngressDeps, providerKey: string, e: RefundResultEvent): Promise<void> {
  const about = { provider: providerKey, providerRef: e.providerRef, reference: e.reference, type: e.type };
  const refund = await paymentForCallback(deps.orm.em.fork(), providerKey, e.providerRef, e.reference);
  if (!refund || !refund.is_refund) {
    deps.log.warn(about, 'refund result for no known refund ignored');
    return;
  }
  try {
    await signalWorkflow(deps.temporal, refundStarter, refundWorkflowId(refund.account_id, refund.id), 'refundResult', {
      eventId: `${e.providerRef}:${e.outcome}`,
      providerRef: e.providerRef,
      outcome: e.outcome,
      providerCode: e.providerCode,
      message: e.message,
      receipt: e.receipt,
      amountMinor: e.amountMinor,
    });
  } catch (err) {
    if (!(err instanceof WorkflowNotFoundError)) throw err;
    deps.log.warn({ ...about, refundId: refund.id, state: refund.state }, 'refund result ignored: the refund has no running workflow');
  }
}
