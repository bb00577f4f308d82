/**
 * `schedule_time`: ISO 8601 with an explicit offset or Z (a time without a zone would mean different
 * instants to different readers), or blank for "now". One pattern for the schema clients see and the
 * check the send makes, with each field in its range so every string it admits is a real instant.
 */
const DATE = '\\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\\d|3[01])';
const TIME = '([01]\\d|2[0-3]):[0-5]\\d(:[0-5]\\d(\\.\\d{1,9})?)?';
const OFFSET = '([Zz]|[+-]([01]\\d|2[0-3]):?[0-5]\\d)';
export const SCHEDULE_TIME_PATTERN = `^\\s*(${DATE}[Tt]${TIME}${OFFSET})?\\s*$`;

export const scheduleTimeSchema = {
  type: 'string',
  maxLength: 100,
  pattern: SCHEDULE_TIME_PATTERN,
  'x-error': 'The schedule time must be an ISO 8601 date and time with an offset, e.g. 2026-12-01T09:00:00+03:00.',
} as const;
