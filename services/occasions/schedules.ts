import { ScheduleAlreadyRunning, ScheduleNotFoundError, ScheduleOverlapPolicy, type CalendarSpec, type Client } from '@temporalio/client';
import { MONTHS } from '@temporalio/client';
import { holidayDaysFrom, localDate, parseSendTime, type CatalogueOccasion, type EffectiveCard } from '../../domain/occasions/index.js';
import { scheduleAction, type TaskQueues } from '../../temporal/starters.js';
import { occasionScheduleId } from '../../temporal/ids.js';
import { scheduledOccasionStarter } from '../../workflows/occasions/occasion.starter.js';
import type { OccasionWorkflowInput } from '../../workflows/occasions/occasion.js';

// One Temporal Schedule per occasion switched on (`occasion/<account>/<key>`), made or changed in the
// transaction that writes the card, so a card that could not be scheduled is not saved. A switched
// off card's schedule is deleted. The schedule only says when: each run reads the card as it is then.

export interface ScheduleDeps {
  temporal: Client;
  config: TaskQueues<'taskQueue'>;
}

/** A holiday's schedule lists this many of its days to come; each run of it lists them again from its day. */
export const HOLIDAY_YEARS_AHEAD = 5;
/** A run missed while Temporal was down is still taken this long after its time (the run's own lateness bound is the same). */
const CATCHUP_WINDOW = '6 hours' as const;

/**
 * When an occasion's greeting goes out, in the workspace's zone: a contact-date occasion every day
 * at its send time (each day's run greets that day's dates), a holiday on each of its days from
 * `now` on. Null when a holiday has no day left (a one-year date that is past).
 */
export function occasionSpec(
  card: Pick<EffectiveCard, 'kind' | 'send_time' | 'date'>,
  base: CatalogueOccasion | null,
  timeZone: string,
  now: Date,
): { calendars: CalendarSpec[]; timezone: string } | null {
  const { hour, minute } = parseSendTime(card.send_time);
  if (card.kind === 'contact_date') return { calendars: [{ hour, minute, comment: 'every day' }], timezone: timeZone };
  // The next HOLIDAY_YEARS_AHEAD days, this year's included when it is still to come.
  const days = holidayDaysFrom(card, base, localDate(now, timeZone), HOLIDAY_YEARS_AHEAD + 1).slice(0, HOLIDAY_YEARS_AHEAD);
  if (days.length === 0) return null;
  return {
    calendars: days.map((d) => ({ year: d.year, month: MONTHS[d.month - 1], dayOfMonth: d.day, hour, minute })),
    timezone: timeZone,
  };
}

/**
 * Makes the occasion's schedule what the card says: created or updated (unpaused) when the card is
 * on and has a day to come, deleted otherwise. Answers the schedule id, or null when there is none.
 */
export async function syncOccasionSchedule(
  deps: ScheduleDeps,
  accountId: number,
  card: Pick<EffectiveCard, 'key' | 'kind' | 'enabled' | 'send_time' | 'date'>,
  base: CatalogueOccasion | null,
  timeZone: string,
  now = new Date(),
): Promise<string | null> {
  const scheduleId = occasionScheduleId(accountId, card.key);
  const spec = card.enabled ? occasionSpec(card, base, timeZone, now) : null;
  if (spec === null) {
    await deleteOccasionSchedule(deps.temporal, accountId, card.key);
    return null;
  }
  const args: [OccasionWorkflowInput] = [{ accountId, key: card.key }];
  const options = {
    spec,
    action: scheduleAction(deps.config, scheduledOccasionStarter, { accountId, key: card.key }, args),
    // A run still going when the next is due is left to finish (a contact date's runs are a day apart).
    policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: CATCHUP_WINDOW },
  };
  try {
    await deps.temporal.schedule.create({ scheduleId, ...options, state: { paused: false } });
  } catch (err) {
    if (!(err instanceof ScheduleAlreadyRunning)) throw err;
    await deps.temporal.schedule.getHandle(scheduleId).update((prev) => ({
      ...prev,
      ...options,
      policies: { ...prev.policies, ...options.policies },
      state: { ...prev.state, paused: false },
    }));
  }
  return scheduleId;
}

/** Removes the occasion's schedule; one that is not there is fine. */
export async function deleteOccasionSchedule(temporal: Client, accountId: number, key: string): Promise<void> {
  try {
    await temporal.schedule.getHandle(occasionScheduleId(accountId, key)).delete();
  } catch (err) {
    if (!(err instanceof ScheduleNotFoundError)) throw err;
  }
}
