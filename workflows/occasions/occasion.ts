import { ActivityFailure, defineQuery, log, proxyActivities, setHandler, workflowInfo } from '@temporalio/workflow';
import type { OccasionActivities, OccasionRunOutcome } from '../../activities/occasions/occasion.js';

export interface OccasionWorkflowInput {
  accountId: number;
  key: string;
}

export type OccasionRunState = { status: 'running' } | OccasionRunOutcome | { status: 'gave_up'; at: string; reason: string };

export const occasionStateQuery = defineQuery<OccasionRunState>('state');

/**
 * How long a day's greeting may be late: past this the run gives up rather than greet a day late.
 * The schedule's catch-up window is the same (services/occasions/schedules.ts).
 */
export const OCCASION_LATENESS = '6 hours';

// The database or Temporal down at the send time: tried again with backoff for up to the lateness
// bound, then given up (a greeting is not sent the next day).
const acts = proxyActivities<OccasionActivities>({
  startToCloseTimeout: '2 minutes',
  scheduleToCloseTimeout: OCCASION_LATENESS,
  retry: { initialInterval: '10 seconds', backoffCoefficient: 2, maximumInterval: '15 minutes' },
});

/** The time the schedule meant this run for (a late start keeps its day); the start time when not started by a schedule. */
function nominalTime(): Date {
  const info = workflowInfo();
  type Key = Parameters<typeof info.typedSearchAttributes.get>[0];
  const scheduled = info.typedSearchAttributes.get({ name: 'TemporalScheduledStartTime', type: 'DATETIME' } as Key);
  return scheduled instanceof Date ? scheduled : info.startTime;
}

/**
 * One run of an occasion's schedule (docs/occasions.md): on the occasion's day at its send time in
 * the workspace's time zone, it asks for the day's greeting campaign, which the campaigns family
 * makes once per occasion and day and runs with its own workflow (blacklist, wallet, one message per
 * recipient). The run reads the card as it is now: a card switched off or moved to another day sends
 * nothing.
 */
export async function occasionWorkflow(input: OccasionWorkflowInput): Promise<OccasionRunState> {
  let state: OccasionRunState = { status: 'running' };
  setHandler(occasionStateQuery, () => state);
  const at = nominalTime().toISOString();
  try {
    state = await acts.runOccasion({ accountId: input.accountId, key: input.key, at });
  } catch (err) {
    if (!(err instanceof ActivityFailure)) throw err;
    log.warn('occasion run gave up', { accountId: input.accountId, key: input.key, at });
    state = { status: 'gave_up', at, reason: err.cause?.message ?? err.message };
  }
  return state;
}
