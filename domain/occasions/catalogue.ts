import { easterSunday, addDays, nthWeekday, yearlyDay, type CalendarDate } from './dates.js';

// The built-in catalogue of occasions: the public holidays of a few countries and the contact's
// birthday. A card of the catalogue exists for every account without anything stored; what an
// account stores is only what it changed (docs/occasions.md).
//
// The holiday table is ours until a maintained holiday library is installed (docs/decisions.md,
// "Public holidays"): the countries below, their national public holidays whose date a rule gives
// (a fixed day, a day counted from Easter, the n-th weekday of a month). Holidays on a lunar
// calendar (Eid al-Fitr, Eid al-Adha, Maulid: public holidays in TZ and KE) are announced each year
// and are not in it; an account greets them with a custom occasion on its own date.

export type HolidayRule =
  | { kind: 'fixed'; month: number; day: number }
  | { kind: 'easter'; offset: number }
  | { kind: 'nth_weekday'; month: number; weekday: number; n: number };

export interface HolidayDefinition {
  /** The occasion key: stable, lower case, what the path names (`/occasions/christmas-day`). */
  key: string;
  name: string;
  rule: HolidayRule;
}

const fixed = (key: string, name: string, month: number, day: number): HolidayDefinition => ({
  key,
  name,
  rule: { kind: 'fixed', month, day },
});
const fromEaster = (key: string, name: string, offset: number): HolidayDefinition => ({ key, name, rule: { kind: 'easter', offset } });
const nth = (key: string, name: string, month: number, weekday: number, n: number): HolidayDefinition => ({
  key,
  name,
  rule: { kind: 'nth_weekday', month, weekday, n },
});

const MON = 1;
const THU = 4;

const NEW_YEAR = fixed('new-years-day', 'New Year’s Day', 1, 1);
const GOOD_FRIDAY = fromEaster('good-friday', 'Good Friday', -2);
const EASTER_MONDAY = fromEaster('easter-monday', 'Easter Monday', 1);
const LABOUR_DAY = fixed('labour-day', 'Labour Day', 5, 1);
const CHRISTMAS = fixed('christmas-day', 'Christmas Day', 12, 25);
const BOXING_DAY = fixed('boxing-day', 'Boxing Day', 12, 26);

/** National public holidays by country (ISO 3166-1 alpha-2), in calendar order. */
export const HOLIDAYS: Readonly<Record<string, readonly HolidayDefinition[]>> = {
  TZ: [
    NEW_YEAR,
    fixed('zanzibar-revolution-day', 'Zanzibar Revolution Day', 1, 12),
    GOOD_FRIDAY,
    EASTER_MONDAY,
    fixed('karume-day', 'Karume Day', 4, 7),
    fixed('union-day', 'Union Day', 4, 26),
    LABOUR_DAY,
    fixed('saba-saba', 'Saba Saba', 7, 7),
    fixed('nane-nane', 'Nane Nane (Farmers’ Day)', 8, 8),
    fixed('nyerere-day', 'Nyerere Day', 10, 14),
    fixed('independence-day', 'Independence Day', 12, 9),
    CHRISTMAS,
    BOXING_DAY,
  ],
  KE: [
    NEW_YEAR,
    GOOD_FRIDAY,
    EASTER_MONDAY,
    LABOUR_DAY,
    fixed('madaraka-day', 'Madaraka Day', 6, 1),
    fixed('mazingira-day', 'Mazingira Day', 10, 10),
    fixed('mashujaa-day', 'Mashujaa Day', 10, 20),
    fixed('jamhuri-day', 'Jamhuri Day', 12, 12),
    CHRISTMAS,
    BOXING_DAY,
  ],
  US: [
    NEW_YEAR,
    nth('martin-luther-king-jr-day', 'Martin Luther King Jr. Day', 1, MON, 3),
    nth('washingtons-birthday', 'Washington’s Birthday', 2, MON, 3),
    nth('memorial-day', 'Memorial Day', 5, MON, -1),
    fixed('juneteenth', 'Juneteenth', 6, 19),
    fixed('independence-day', 'Independence Day', 7, 4),
    nth('labor-day', 'Labor Day', 9, MON, 1),
    nth('columbus-day', 'Columbus Day', 10, MON, 2),
    fixed('veterans-day', 'Veterans Day', 11, 11),
    nth('thanksgiving-day', 'Thanksgiving Day', 11, THU, 4),
    CHRISTMAS,
  ],
  GB: [
    NEW_YEAR,
    GOOD_FRIDAY,
    EASTER_MONDAY,
    nth('early-may-bank-holiday', 'Early May bank holiday', 5, MON, 1),
    nth('spring-bank-holiday', 'Spring bank holiday', 5, MON, -1),
    nth('summer-bank-holiday', 'Summer bank holiday', 8, MON, -1),
    CHRISTMAS,
    BOXING_DAY,
  ],
};

/** The countries whose holidays the catalogue holds. */
export const HOLIDAY_COUNTRIES = Object.keys(HOLIDAYS);

/** The time zone of a country's capital: a workspace's clock until it names its own. */
export const COUNTRY_TIME_ZONES: Readonly<Record<string, string>> = {
  TZ: 'Africa/Dar_es_Salaam',
  KE: 'Africa/Nairobi',
  US: 'America/New_York',
  GB: 'Europe/London',
};

/** The day a holiday rule gives in `year`. */
export function holidayDate(rule: HolidayRule, year: number): CalendarDate {
  switch (rule.kind) {
    case 'fixed':
      return yearlyDay(year, rule.month, rule.day);
    case 'easter':
      return addDays(easterSunday(year), rule.offset);
    case 'nth_weekday':
      return nthWeekday(year, rule.month, rule.weekday, rule.n);
  }
}

/** The kinds of occasion: a holiday (a date of the calendar) or a date each contact carries. */
export const OCCASION_KINDS = ['holiday', 'contact_date'] as const;
export type OccasionKind = (typeof OCCASION_KINDS)[number];

/** The catalogue's own values of a card, before a workspace default or an override. */
export interface CatalogueOccasion {
  key: string;
  kind: OccasionKind;
  name: string;
  /** A holiday's rule; null for a contact date. */
  rule: HolidayRule | null;
  /** The contact field holding the date; null for a holiday. */
  dateField: string | null;
  message: string;
}

/** The built-in greeting of a holiday: its name, the contact's name, nothing the business must fill in. */
export const holidayMessage = (name: string) => `Happy ${name}, {{name}}! Warm wishes from all of us.`;
export const BIRTHDAY: CatalogueOccasion = {
  key: 'birthday',
  kind: 'contact_date',
  name: 'Birthday',
  rule: null,
  dateField: 'birthday',
  message: 'Happy birthday, {{name}}! Wishing you a wonderful year ahead.',
};

/** The catalogue of a country: the birthday, then its holidays (none for a country it does not hold). */
export function catalogueOf(country: string | null): CatalogueOccasion[] {
  const holidays = (country ? (HOLIDAYS[country] ?? []) : []).map((h): CatalogueOccasion => ({
    key: h.key,
    kind: 'holiday',
    name: h.name,
    rule: h.rule,
    dateField: null,
    message: holidayMessage(h.name),
  }));
  return [BIRTHDAY, ...holidays];
}

/** Keys no occasion takes: words of the family's own paths (GET /occasions/defaults). */
export const RESERVED_KEYS = new Set(['defaults']);

/** An occasion key: lower-case letters, digits and dashes, starting with a letter; at most 64. */
export const OCCASION_KEY_PATTERN = '^[a-z][a-z0-9-]{0,63}$';
