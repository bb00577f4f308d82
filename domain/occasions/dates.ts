// Calendar arithmetic of occasion greetings, on plain calendar dates (no time of day, no zone) so
// that a holiday or a birthday is the same day wherever the code runs. An instant becomes a date
// only through `localDate`, in the account's time zone.

/** A calendar date: year, month 1-12, day 1-31. */
export interface CalendarDate {
  year: number;
  month: number;
  day: number;
}

export const isLeapYear = (year: number) => (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
export const daysInMonth = (year: number, month: number) => (month === 2 && isLeapYear(year) ? 29 : DAYS_IN_MONTH[month - 1]);

/** Whether the day exists in that year (2027-02-29 and 04-31 do not). */
export const dateExists = (d: CalendarDate) =>
  Number.isInteger(d.year) &&
  Number.isInteger(d.month) &&
  Number.isInteger(d.day) &&
  d.year >= 1 &&
  d.year <= 9999 &&
  d.month >= 1 &&
  d.month <= 12 &&
  d.day >= 1 &&
  d.day <= daysInMonth(d.year, d.month);

const two = (n: number) => String(n).padStart(2, '0');
/** `YYYY-MM-DD`. */
export const isoDate = (d: CalendarDate) => `${String(d.year).padStart(4, '0')}-${two(d.month)}-${two(d.day)}`;
/** `MM-DD`: how a recurring day (a birthday, a fixed holiday) is compared. */
export const monthDay = (d: Pick<CalendarDate, 'month' | 'day'>) => `${two(d.month)}-${two(d.day)}`;

/** Days since 1970-01-01 (proleptic Gregorian), for date arithmetic without a zone. */
const dayNumber = (d: CalendarDate) => Math.floor(Date.UTC(d.year, d.month - 1, d.day) / 86_400_000);
const fromDayNumber = (n: number): CalendarDate => {
  const t = new Date(n * 86_400_000);
  return { year: t.getUTCFullYear(), month: t.getUTCMonth() + 1, day: t.getUTCDate() };
};
export const addDays = (d: CalendarDate, days: number) => fromDayNumber(dayNumber(d) + days);
export const daysBetween = (from: CalendarDate, to: CalendarDate) => dayNumber(to) - dayNumber(from);
export const compareDates = (a: CalendarDate, b: CalendarDate) => dayNumber(a) - dayNumber(b);
/** 0 Sunday … 6 Saturday. */
export const weekday = (d: CalendarDate) => new Date(Date.UTC(d.year, d.month - 1, d.day)).getUTCDay();

/** Easter Sunday (Gregorian, the anonymous algorithm of Meeus/Jones/Butcher). */
export function easterSunday(year: number): CalendarDate {
  const a = year % 19;
  const b = Math.floor(year / 100);
  const c = year % 100;
  const d = Math.floor(b / 4);
  const e = b % 4;
  const f = Math.floor((b + 8) / 25);
  const g = Math.floor((b - f + 1) / 3);
  const h = (19 * a + b - d - g + 15) % 30;
  const i = Math.floor(c / 4);
  const k = c % 4;
  const l = (32 + 2 * e + 2 * i - h - k) % 7;
  const m = Math.floor((a + 11 * h + 22 * l) / 451);
  const month = Math.floor((h + l - 7 * m + 114) / 31);
  const day = ((h + l - 7 * m + 114) % 31) + 1;
  return { year, month, day };
}

/** The n-th `dow` (0 Sunday … 6 Saturday) of a month; n = -1 is the last one. */
export function nthWeekday(year: number, month: number, dow: number, n: number): CalendarDate {
  if (n > 0) {
    const first = { year, month, day: 1 };
    const offset = (dow - weekday(first) + 7) % 7;
    return addDays(first, offset + 7 * (n - 1));
  }
  const last = { year, month, day: daysInMonth(year, month) };
  return addDays(last, -((weekday(last) - dow + 7) % 7));
}

/**
 * The day a yearly month-day falls on in `year`: itself, except 29 February in a year without one,
 * which is kept on 28 February (the last day of the person's birth month, as most calendars and
 * greeting tools do; docs/occasions.md).
 */
export const yearlyDay = (year: number, month: number, day: number): CalendarDate =>
  month === 2 && day === 29 && !isLeapYear(year) ? { year, month: 2, day: 28 } : { year, month, day };

/**
 * The month-days whose yearly day is `d`: a contact born on 29 February is greeted on 28 February
 * in a year without a 29th, so that day also matches `02-29`.
 */
export const monthDaysOn = (d: CalendarDate): string[] =>
  d.month === 2 && d.day === 28 && !isLeapYear(d.year) ? ['02-28', '02-29'] : [monthDay(d)];

/**
 * The month and day of a stored contact date, or null when it holds none: `YYYY-MM-DD` (a birth
 * date, with a time after it or not), `MM-DD` or `--MM-DD` (ISO 8601 without a year). A value that
 * names no real day (02-30, 13-01) is no date.
 */
export function contactMonthDay(value: unknown): string | null {
  if (typeof value !== 'string') return null;
  const v = value.trim();
  const full = /^([0-9]{4})-([0-9]{2})-([0-9]{2})(?:$|[T ])/.exec(v);
  const short = /^(?:--)?([0-9]{2})-([0-9]{2})$/.exec(v);
  if (full) {
    const d = { year: Number(full[1]), month: Number(full[2]), day: Number(full[3]) };
    return dateExists(d) ? monthDay(d) : null;
  }
  if (short) {
    const d = { year: 2000, month: Number(short[1]), day: Number(short[2]) };
    return dateExists(d) ? monthDay(d) : null;
  }
  return null;
}

/** An occasion date a card may set: every year on a month-day, or once on a full date. */
export type OccasionDate = { month: number; day: number; year?: undefined } | { year: number; month: number; day: number };

/**
 * Reads a card's date: `MM-DD` (every year; 02-29 is kept on 28 February in other years) or
 * `YYYY-MM-DD` (that year only). A day that does not exist (02-30, 2027-02-29, 04-31) is refused
 * with the reason, never moved to a neighbour.
 */
export function parseOccasionDate(value: string): { ok: true; date: OccasionDate } | { ok: false; problem: string } {
  const full = /^([0-9]{4})-([0-9]{2})-([0-9]{2})$/.exec(value);
  const short = /^([0-9]{2})-([0-9]{2})$/.exec(value);
  if (!full && !short)
    return { ok: false, problem: 'The date must be MM-DD (every year) or YYYY-MM-DD (one year), for example 12-25 or 2027-04-09.' };
  if (full) {
    const d = { year: Number(full[1]), month: Number(full[2]), day: Number(full[3]) };
    if (!dateExists(d)) return { ok: false, problem: `${value} is not a day of the calendar.` };
    return { ok: true, date: d };
  }
  const d = { month: Number(short![1]), day: Number(short![2]) };
  // A leap year holds every month-day there is.
  if (!dateExists({ year: 2000, ...d })) return { ok: false, problem: `${value} is not a day of the calendar.` };
  return { ok: true, date: d };
}

/** The day an occasion date falls on in `year`, or null (a one-year date of another year). */
export const occasionDateIn = (date: OccasionDate, year: number): CalendarDate | null =>
  date.year === undefined ? yearlyDay(year, date.month, date.day) : date.year === year ? { ...date } : null;

/** Whether `zone` is an IANA time zone this runtime knows. */
export function isTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

const formats = new Map<string, Intl.DateTimeFormat>();
/** The calendar date and time of day of an instant in a time zone. */
export function localDateTime(instant: Date, zone: string): CalendarDate & { hour: number; minute: number } {
  let f = formats.get(zone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
    });
    formats.set(zone, f);
  }
  const parts = Object.fromEntries(f.formatToParts(instant).map((p) => [p.type, p.value]));
  return {
    year: Number(parts.year),
    month: Number(parts.month),
    day: Number(parts.day),
    hour: Number(parts.hour),
    minute: Number(parts.minute),
  };
}

/** The calendar date of an instant in a time zone. */
export function localDate(instant: Date, zone: string): CalendarDate {
  const { year, month, day } = localDateTime(instant, zone);
  return { year, month, day };
}

/** `HH:MM`, 00:00 to 23:59. */
export const SEND_TIME_PATTERN = '^(?:[01][0-9]|2[0-3]):[0-5][0-9]$';
export const parseSendTime = (value: string) => {
  const [h, m] = value.split(':').map(Number);
  return { hour: h, minute: m };
};
