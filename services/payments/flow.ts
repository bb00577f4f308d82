import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import type { Logger } from '../../logger.js';
import { startWorkflow, type StarterDeps } from '../../temporal/starters.js';
import { paymentStarter } from '../../workflows/payments/payment.starter.js';
import type { PaymentSummary } from './payments.js';

// A payment's workflow (workflows/payments/payment.ts): started once the payment's request has
// committed, so the workflow never looks for a row that is not there yet.

export type PaymentFlowDeps = StarterDeps<'taskQueue'> & { log?: Logger };

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
    return true;
  } catch (err) {
    if (err instanceof WorkflowExecutionAlreadyStartedError) return false;
    throw err;
  }
}
