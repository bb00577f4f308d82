import { ScheduleAlreadyRunning, ScheduleOverlapPolicy, type Client } from '@temporalio/client';
import type { Config } from '../config.js';
import { scheduleAction } from '../temporal/starters.js';
import type { CatalogueDriftInput } from '../workflows/catalogues/catalogue-drift.js';
import {
  CATALOGUE_DRIFT_EVERY,
  CATALOGUE_DRIFT_SCHEDULE_ID,
  scheduledCatalogueDriftStarter,
} from '../workflows/catalogues/catalogue-drift.starter.js';

/**
 * The service's own Temporal Schedules (not a customer's): a worker start makes sure each exists and
 * carries this code's spec and action. An existing one is updated in place and keeps its state, so
 * an operator's pause survives restarts; workers starting together meet on the same schedule id.
 */
export async function ensureSchedules(client: Client, config: Pick<Config, 'taskQueue' | 'catalogueDriftPaused'>): Promise<void> {
  const args: [CatalogueDriftInput] = [{}];
  const options = {
    spec: { intervals: [{ every: CATALOGUE_DRIFT_EVERY }] },
    action: scheduleAction(config, scheduledCatalogueDriftStarter, { runId: 'scheduled' }, args),
    // A pass still running at the next hour is enough; one missed while the cluster was down is not replayed.
    policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: '5 minutes' as const },
  };
  try {
    await client.schedule.create({
      scheduleId: CATALOGUE_DRIFT_SCHEDULE_ID,
      ...options,
      ...(config.catalogueDriftPaused ? { state: { paused: true, note: 'created paused (CATALOGUE_DRIFT_PAUSED=true)' } } : {}),
    });
  } catch (err) {
    if (!(err instanceof ScheduleAlreadyRunning)) throw err;
    await client.schedule.getHandle(CATALOGUE_DRIFT_SCHEDULE_ID).update((prev) => ({ ...options, state: prev.state }));
  }
}
