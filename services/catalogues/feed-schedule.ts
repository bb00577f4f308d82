import { Cron } from 'croner';

// A feed's schedule: a word or a five-field cron expression (UTC), read by croner, with the rules a
// feed adds on top. A service module, not a domain one: domain code imports no packages, and the
// feed-pull workflow (which imports the domain's feed rules) has no use for a cron parser.

/** The schedule words, as the cron expression (UTC) each stands for. */
export const FEED_SCHEDULE_WORDS: Record<string, string> = {
  hourly: '0 * * * *',
  daily: '0 0 * * *',
  weekly: '0 0 * * 1',
};

const NAMES = /JAN|FEB|MAR|APR|MAY|JUN|JUL|AUG|SEP|OCT|NOV|DEC|SUN|MON|TUE|WED|THU|FRI|SAT/gi;

/**
 * A feed schedule as a cron expression (UTC): `hourly`, `daily` (00:00), `weekly` (Monday 00:00), or
 * five cron fields whose minute is one number, so it fires at most once an hour (Meta's scheduled
 * feeds run at most hourly; faster changes go through the batch endpoint). croner judges the
 * fields (values in range, names, ranges in order, steps) and whether the expression ever fires.
 * Its extensions (seconds and year fields, `L`, `W`, `#`, `?`, `@daily`) are refused: the
 * expression goes to a Temporal Schedule as written, and the plain five-field form is the one both
 * read alike.
 */
export function feedScheduleCron(schedule: string): { cron: string } | { problem: string } {
  const s = schedule.trim().replace(/\s+/g, ' ');
  const word = FEED_SCHEDULE_WORDS[s.toLowerCase()];
  if (word) return { cron: word };
  const parts = s.split(' ');
  if (parts.length !== 5) return { problem: 'The schedule must be hourly, daily, weekly or a cron expression of five fields.' };
  if (!/^\d{1,2}$/.test(parts[0]) || Number(parts[0]) > 59)
    return { problem: 'The cron minute must be one number from 0 to 59: a feed is pulled at most once an hour.' };
  const extension = parts.find((p) => !/^[\d*,/-]+$/.test(p.replace(NAMES, '0')));
  if (extension !== undefined)
    return { problem: `The cron field "${extension}" is not plain cron: use numbers, names, *, ranges (a-b), lists (a,b) and steps (/n).` };
  let fires: Date | null;
  try {
    fires = new Cron(s, { paused: true, timezone: 'UTC' }).nextRun();
  } catch (err) {
    return { problem: `The schedule is not a valid cron expression: ${String((err as Error).message).replace(/^CronPattern: /, '')}.` };
  }
  if (!fires) return { problem: 'The schedule never fires (a day the month never has).' };
  return { cron: s };
}
