import type { MikroORM } from '@mikro-orm/postgresql';
import { ApplicationFailure } from '@temporalio/activity';
import type { Logger } from '../../logger.js';
import type { PaymentProvider } from '../../providers/index.js';
import { RECONCILIATION_MARGIN_MS, reconcileSlice } from '../../services/payments/index.js';

// Payment reconciliation's one activity (workflows/payments/reconciliation.ts): read the provider's
// report of a slice (widened by the margin each way), compare it with our ledger and record what
// disagrees. Safe to repeat: a mismatch already recorded is skipped by its key, with its notice and
// event, so a retried or repeated slice tells nothing twice.

export interface ReconciliationDeps {
  orm: MikroORM;
  log: Logger;
  /** The payment provider stored as `stored` (absent: the configured one); the registry's payments(). */
  payments(stored?: string | null): PaymentProvider;
}

export interface SliceRequest {
  /** Absent: the configured provider. */
  provider?: string;
  accountId?: number;
  /** ISO 8601. */
  from: string;
  to: string;
  /** The run's workflow id. */
  foundBy: string;
}

export interface SliceOutcome {
  provider: string;
  ours: number;
  theirs: number;
  matched: number;
  missingAtProvider: number;
  missingInOurs: number;
  amountDiffers: number;
  recorded: number;
}

export function createReconciliationActivities(deps: ReconciliationDeps) {
  return {
    async reconcilePaymentSlice(input: SliceRequest): Promise<SliceOutcome> {
      const provider = deps.payments(input.provider ?? null);
      const period = { from: new Date(input.from), to: new Date(input.to) };
      const report = await provider.report({
        from: new Date(period.from.getTime() - RECONCILIATION_MARGIN_MS),
        to: new Date(period.to.getTime() + RECONCILIATION_MARGIN_MS),
      });
      if (!report.ok) {
        const message = `payment report: ${report.message} (provider code ${report.code})`;
        if (report.permanent) throw ApplicationFailure.nonRetryable(message, 'ProviderRefused');
        throw ApplicationFailure.create({
          message,
          type: 'ProviderTransient',
          nextRetryDelay: report.retryAfterSeconds ? `${report.retryAfterSeconds} seconds` : undefined,
        });
      }
      const counts = await reconcileSlice(deps.orm.em.fork(), {
        provider: provider.key,
        configured: provider.key === deps.payments().key,
        period,
        lines: report.value,
        foundBy: input.foundBy,
        ...(input.accountId !== undefined ? { accountId: input.accountId } : {}),
      });
      if (counts.recorded > 0)
        deps.log.warn({ provider: provider.key, from: input.from, to: input.to, ...counts }, 'payment mismatches recorded');
      return { provider: provider.key, ...counts };
    },
  };
}

export type ReconciliationActivities = ReturnType<typeof createReconciliationActivities>;
