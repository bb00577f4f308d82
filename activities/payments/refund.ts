import { UnknownProvider, type PaymentProvider } from '../../providers/index.js';
import { receiptToReverse, setProviderRef } from '../../services/payments/index.js';
import type { PaymentDeps } from './payment.js';

// The refund workflow's activities (workflows/payments/refund.ts); its moves are the payment
// workflow's movePayment (recordMove). The reversal is the one call that must not be repeated
// blindly: Daraja keeps no idempotency key, so a second request is a second reversal. This activity
// therefore never throws on the provider's account; it answers what the provider said, and whether
// the reversal may have been made, and the workflow (which runs it once per try) decides.

export interface ReverseInput {
  accountId: number;
  refundId: string;
  /** The refund's own reference: the provider is given it, and our result URL names it. */
  reference: string;
  amountMinor: number;
  currency: string;
  reason: string;
  /** The provider key the refund stores (its parent's); null: the configured one. */
  provider: string | null;
  /** The refunded payment's receipt at the provider; null when its result carried none. */
  receipt: string | null;
}

/**
 * acknowledged: the provider took the reversal, its result comes later; refused: it will not
 * (permanent: a missing receipt, a bad amount); unavailable: it answered that it took nothing (a
 * 5xx or 429 envelope), so sending again is safe; unknown: no answer (timeout, a broken
 * connection), so the reversal may have been made.
 */
export type ReversalOutcome =
  | { kind: 'acknowledged'; providerRef: string; message: string }
  | { kind: 'refused'; code: string; message: string }
  | { kind: 'unavailable'; code: string; message: string }
  | { kind: 'unknown'; code: string; message: string };

export function createRefundActivities(deps: PaymentDeps) {
  return {
    /** The receipt the refund reverses: its parent payment's, as that payment's paid result stored it. */
    async refundReceipt(input: { accountId: number; refundId: string }): Promise<string | null> {
      return receiptToReverse(deps.orm.em.fork(), input.accountId, input.refundId);
    },

    /** Asks the provider to reverse the refund's amount of the payment; see ReversalOutcome. */
    async reverseRefund(input: ReverseInput): Promise<ReversalOutcome> {
      let provider: PaymentProvider;
      try {
        provider = deps.payments(input.provider);
      } catch (err) {
        // A provider we have no adapter for: nothing was sent, and nothing ever can be.
        if (err instanceof UnknownProvider) return { kind: 'refused', code: 'unknown_provider', message: err.message };
        throw err;
      }
      const r = await provider.refund({
        reference: input.reference,
        // The adapter answers receipt_required for an empty one, as a permanent refusal.
        originalProviderRef: input.receipt ?? '',
        amountMinor: input.amountMinor,
        currency: input.currency,
        reason: input.reason,
      });
      if (r.ok) {
        // Stored at once, before the workflow hears of it: the result callback may come first and is found by it.
        await setProviderRef(deps.orm.em.fork(), input.accountId, input.refundId, provider.key, r.value.providerRef);
        return { kind: 'acknowledged', providerRef: r.value.providerRef, message: r.value.message };
      }
      if (r.permanent) return { kind: 'refused', code: r.code, message: r.message };
      // An error envelope is the provider saying it did not take the request; a 2xx it could not read
      // (invalid_response) and no answer at all are not.
      if (r.httpStatus !== undefined && (r.httpStatus < 200 || r.httpStatus >= 300))
        return { kind: 'unavailable', code: r.code, message: r.message };
      deps.log.warn({ refund: input.refundId, code: r.code, message: r.message }, 'reversal unanswered: it may have been made');
      return { kind: 'unknown', code: r.code, message: r.message };
    },
  };
}

export type RefundActivities = ReturnType<typeof createRefundActivities>;
