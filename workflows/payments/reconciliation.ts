import { ActivityFailure, defineQuery, log, proxyActivities, setHandler, workflowInfo } from '@temporalio/workflow';
import type { ReconciliationActivities, SliceOutcome } from '../../activities/payments/reconciliation.js';

// Payment reconciliation (issue 26 point 5; docs/payments.md "Reconciliation"): our ledger against
// the payment provider's report of what it settled, over a period, one slice at a time (an hour by
// default: one report read and one comparison each, so no activity holds a day of lines and a
// retry repeats one hour). Started by the `payment-reconciliation` Temporal Schedule
// (workflows/payments/reconciliation.starter.ts) over the period ending lagMinutes before the run,
// or by an operator over the period they name. Every mismatch is recorded once (the activity's
// insert skips a key already there), so overlapping periods and repeated runs add nothing twice.

export interface PaymentReconciliationInput {
  /** The provider key to reconcile; absent: the configured payment provider. */
  provider?: string;
  /** The period, ISO 8601 (an operator's run); absent: the windowMinutes ending lagMinutes before the run started. */
  from?: string;
  to?: string;
  windowMinutes?: number;
  lagMinutes?: number;
  /** Minutes per slice (default 60). */
  sliceMinutes?: number;
  /** Only this account's payments (an operator's run for one account); absent: every account's. */
  accountId?: number;
}

export interface ReconciliationCounts {
  /** Our settlements entered in the period, and the provider's lines completed in it. */
  ours: number;
  theirs: number;
  matched: number;
  missingAtProvider: number;
  missingInOurs: number;
  amountDiffers: number;
  /** Mismatches recorded by this run (the rest were recorded before: a period reconciled again). */
  recorded: number;
}

export interface ReconciliationProgress extends ReconciliationCounts {
  provider: string | null;
  from: string;
  to: string;
  accountId: number | null;
  phase: 'reconciling' | 'done';
  slices: number;
  slicesDone: number;
  /** Slices whose report could not be read or compared after their retries (the next run covers them again). */
  slicesFailed: number;
  /** The first few failures' words. */
  failures: string[];
}

export const reconciliationProgressQuery = defineQuery<ReconciliationProgress>('progress');

export const RECONCILIATION_DEFAULTS = { windowMinutes: 120, lagMinutes: 15, sliceMinutes: 60 } as const;
const MINUTE = 60_000;
const MAX_FAILURES_KEPT = 5;

// One slice: a report read from the provider and a few statements. A provider that is down is tried
// again for a few minutes; one that refuses (no report, an unreadable one) fails the slice at once.
const acts = proxyActivities<ReconciliationActivities>({
  startToCloseTimeout: '5 minutes',
  retry: { initialInterval: '5 seconds', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 5 },
});

/** The period a run covers: the one it was given, else the window ending `lag` before now, on whole minutes. */
export function reconciliationPeriod(input: PaymentReconciliationInput, now: number): { from: number; to: number } {
  if (input.from !== undefined && input.to !== undefined) return { from: Date.parse(input.from), to: Date.parse(input.to) };
  const lag = (input.lagMinutes ?? RECONCILIATION_DEFAULTS.lagMinutes) * MINUTE;
  const to = input.to !== undefined ? Date.parse(input.to) : Math.floor((now - lag) / MINUTE) * MINUTE;
  const from =
    input.from !== undefined ? Date.parse(input.from) : to - (input.windowMinutes ?? RECONCILIATION_DEFAULTS.windowMinutes) * MINUTE;
  return { from, to };
}

export async function paymentReconciliationWorkflow(input: PaymentReconciliationInput = {}): Promise<ReconciliationProgress> {
  const { from, to } = reconciliationPeriod(input, Date.now());
  const sliceMs = Math.max(1, input.sliceMinutes ?? RECONCILIATION_DEFAULTS.sliceMinutes) * MINUTE;
  const progress: ReconciliationProgress = {
    provider: input.provider ?? null,
    from: new Date(from).toISOString(),
    to: new Date(to).toISOString(),
    accountId: input.accountId ?? null,
    phase: 'reconciling',
    slices: Math.max(0, Math.ceil((to - from) / sliceMs)),
    slicesDone: 0,
    slicesFailed: 0,
    failures: [],
    ours: 0,
    theirs: 0,
    matched: 0,
    missingAtProvider: 0,
    missingInOurs: 0,
    amountDiffers: 0,
    recorded: 0,
  };
  setHandler(reconciliationProgressQuery, () => progress);

  for (let at = from; at < to; at += sliceMs) {
    const sliceTo = Math.min(to, at + sliceMs);
    let out: SliceOutcome;
    try {
      out = await acts.reconcilePaymentSlice({
        ...(input.provider !== undefined ? { provider: input.provider } : {}),
        ...(input.accountId !== undefined ? { accountId: input.accountId } : {}),
        from: new Date(at).toISOString(),
        to: new Date(sliceTo).toISOString(),
        foundBy: workflowInfo().workflowId,
      });
    } catch (err) {
      if (!(err instanceof ActivityFailure)) throw err;
      const reason = err.cause?.message ?? err.message;
      progress.slicesFailed++;
      if (progress.failures.length < MAX_FAILURES_KEPT) progress.failures.push(`${new Date(at).toISOString()}: ${reason}`);
      log.warn('payment reconciliation slice failed', { from: new Date(at).toISOString(), reason });
      continue;
    } finally {
      progress.slicesDone++;
    }
    progress.provider = out.provider;
    progress.ours += out.ours;
    progress.theirs += out.theirs;
    progress.matched += out.matched;
    progress.missingAtProvider += out.missingAtProvider;
    progress.missingInOurs += out.missingInOurs;
    progress.amountDiffers += out.amountDiffers;
    progress.recorded += out.recorded;
  }
  progress.phase = 'done';
  return progress;
}
