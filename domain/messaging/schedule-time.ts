import { LENIENT_DATE_TIME } from '../platform/date-time.js';

/**
 * `schedule_time`: ISO 8601 with an explicit offset or Z (a time without a zone would mean different
 * instants to different readers), or blank for "now". One pattern for the schema clients see and the
 * check the send makes, built from the date-time rule every field shares (domain/platform/date-time.ts),
 * so every string it admits is an instant PostgreSQL accepts.
 */
export const SCHEDULE_TIME_PATTERN = `^\\s*(${LENIENT_DATE_TIME})?\\s*$`;

export const scheduleTimeSchema = {
  type: 'string',
  maxLength: 100,
  pattern: SCHEDULE_TIME_PATTERN,
  'x-error': 'The schedule time must be an ISO 8601 date and time with an offset, e.g. 2026-12-01T09:00:00+03:00.',
} as const;
