import { ScheduleAlreadyRunning, ScheduleOverlapPolicy, type Client, type ScheduleOptions } from '@temporalio/client';
import type { Config } from '../config.js';
import { scheduleAction } from '../temporal/starters.js';
import type { CatalogueDriftInput } from '../workflows/catalogues/catalogue-drift.js';
import {
  CATALOGUE_DRIFT_EVERY,
  CATALOGUE_DRIFT_SCHEDULE_ID,
  scheduledCatalogueDriftStarter,
} from '../workflows/catalogues/catalogue-drift.starter.js';
import type { PaymentReconciliationInput } from '../workflows/payments/reconciliation.js';
import { PAYMENT_RECONCILIATION_SCHEDULE_ID, scheduledPaymentReconciliationStarter } from '../workflows/payments/reconciliation.starter.js';

type ScheduleConfig = Pick<
  Config,
  | 'taskQueue'
  | 'catalogueDriftPaused'
  | 'paymentReconciliationPaused'
  | 'paymentReconciliationEveryMinutes'
  | 'paymentReconciliationWindowMinutes'
  | 'paymentReconciliationLagMinutes'
>;

/**
 * The service's own Temporal Schedules (not a customer's): a worker start makes sure each exists and
 * carries this code's spec and action. An existing one is updated in place and keeps its state, so
 * an operator's pause survives restarts; workers starting together meet on the same schedule id.
 */
export async function ensureSchedules(client: Client, config: ScheduleConfig): Promise<void> {
  const drift: [CatalogueDriftInput] = [{}];
  await ensureSchedule(client, CATALOGUE_DRIFT_SCHEDULE_ID, {
    spec: { intervals: [{ every: CATALOGUE_DRIFT_EVERY }] },
    action: scheduleAction(config, scheduledCatalogueDriftStarter, { runId: 'scheduled' }, drift),
    paused: config.catalogueDriftPaused ? 'created paused (CATALOGUE_DRIFT_PAUSED=true)' : null,
  });
  // Each run reconciles the window ending lagMinutes before it: with a window longer than the
  // interval the periods overlap, and a mismatch found twice is recorded once.
  const reconciliation: [PaymentReconciliationInput] = [
    { windowMinutes: config.paymentReconciliationWindowMinutes, lagMinutes: config.paymentReconciliationLagMinutes },
  ];
  await ensureSchedule(client, PAYMENT_RECONCILIATION_SCHEDULE_ID, {
    spec: { intervals: [{ every: `${config.paymentReconciliationEveryMinutes} minutes` }] },
    action: scheduleAction(config, scheduledPaymentReconciliationStarter, { runId: 'scheduled' }, reconciliation),
    paused: config.paymentReconciliationPaused ? 'created paused (PAYMENT_RECONCILIATION_PAUSED=true)' : null,
  });
}

async function ensureSchedule(
  client: Client,
  scheduleId: string,
  o: Pick<ScheduleOptions, 'spec' | 'action'> & { paused: string | null },
): Promise<void> {
  const options = {
    spec: o.spec,
    action: o.action,
    // A pass still running at the next tick is enough; one missed while the cluster was down is not replayed.
    policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: '5 minutes' as const },
  };
  try {
    await client.schedule.create({ scheduleId, ...options, ...(o.paused ? { state: { paused: true, note: o.paused } } : {}) });
  } catch (err) {
    if (!(err instanceof ScheduleAlreadyRunning)) throw err;
    await client.schedule.getHandle(scheduleId).update((prev) => ({ ...options, state: prev.state }));
  }
}
