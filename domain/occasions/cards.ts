import { compareDates, isoDate, monthDay, occasionDateIn, parseOccasionDate, type CalendarDate, type OccasionDate } from './dates.js';
import { holidayDate, type CatalogueOccasion, type HolidayRule, type OccasionKind } from './catalogue.js';

// A card of an occasion is three layers read top down: what the account stored for this occasion
// (its overrides), the workspace's defaults, the catalogue. Only the first two are stored; a field
// the card does not override is listed in `inherited` with where its value came from.

/** What an account stores for one occasion: each field null (or absent) where it does not override. */
export interface OccasionOverrides {
  /** Set only on a custom occasion (one the catalogue does not hold). */
  kind?: OccasionKind | null;
  name?: string | null;
  enabled?: boolean | null;
  message?: string | null;
  send_time?: string | null;
  sender_id?: string | null;
  date?: string | null;
  date_field?: string | null;
  contact_group_ids?: number[] | null;
}

/** The workspace's defaults: every occasion of the account falls back to them before the catalogue. */
export interface WorkspaceDefaults {
  country: string | null;
  time_zone: string | null;
  message: string | null;
  send_time: string | null;
  sender_id: string | null;
  contact_group_ids: number[] | null;
}

/** The catalogue's send time: the morning, in the workspace's time zone. */
export const CATALOGUE_SEND_TIME = '09:00';

/** The card fields an override may set, in the order a card shows them. */
export const CARD_FIELDS = ['name', 'enabled', 'message', 'send_time', 'sender_id', 'date', 'date_field', 'contact_group_ids'] as const;
export type CardField = (typeof CARD_FIELDS)[number];
export type Source = 'override' | 'workspace' | 'catalogue';

export interface EffectiveCard {
  key: string;
  kind: OccasionKind;
  custom: boolean;
  name: string;
  enabled: boolean;
  message: string;
  send_time: string;
  sender_id: string | null;
  /** A holiday's date as set (MM-DD or YYYY-MM-DD), or its fixed catalogue day; null for a moving holiday and a contact date. */
  date: string | null;
  /** A moving holiday's rule, in words; null otherwise. */
  rule: string | null;
  date_field: string | null;
  contact_group_ids: number[] | null;
  sources: Record<CardField, Source>;
  inherited: CardField[];
}

const WEEKDAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];
const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];
const ORDINALS = ['', 'first', 'second', 'third', 'fourth', 'fifth'];

/** A moving holiday's rule in words (a fixed one is its date instead). */
export function ruleInWords(rule: HolidayRule): string | null {
  if (rule.kind === 'fixed') return null;
  if (rule.kind === 'easter') {
    const n = Math.abs(rule.offset);
    return rule.offset === 0 ? 'Easter Sunday' : `${n} day${n === 1 ? '' : 's'} ${rule.offset < 0 ? 'before' : 'after'} Easter Sunday`;
  }
  return `the ${rule.n === -1 ? 'last' : ORDINALS[rule.n]} ${WEEKDAYS[rule.weekday]} of ${MONTHS[rule.month - 1]}`;
}

/**
 * The card an account sees: each field from its override, else the workspace default (where the
 * workspace has one for that field), else the catalogue. `base` is the catalogue's occasion, or null
 * for a custom one (whose kind, name and date or date field are overrides of their own).
 */
export function effectiveCard(key: string, base: CatalogueOccasion | null, o: OccasionOverrides, ws: WorkspaceDefaults): EffectiveCard {
  const sources = {} as Record<CardField, Source>;
  const pick = <T>(field: CardField, own: T | null | undefined, workspace: T | null | undefined, catalogue: T): T => {
    if (own !== null && own !== undefined) {
      sources[field] = 'override';
      return own;
    }
    if (workspace !== null && workspace !== undefined) {
      sources[field] = 'workspace';
      return workspace;
    }
    sources[field] = 'catalogue';
    return catalogue;
  };
  const kind: OccasionKind = base?.kind ?? o.kind ?? 'holiday';
  const name = pick('name', o.name, null, base?.name ?? key);
  const enabled = pick('enabled', o.enabled, null, false);
  // A workspace message names the occasion with {{occasion}}, so one text serves every card.
  const message = pick('message', o.message, ws.message, base?.message ?? '').replace(/\{\{\s*occasion\s*\}\}/gi, name);
  const sendTime = pick('send_time', o.send_time, ws.send_time, CATALOGUE_SEND_TIME);
  const senderId = pick<string | null>('sender_id', o.sender_id, ws.sender_id, null);
  const groups = pick<number[] | null>('contact_group_ids', o.contact_group_ids, ws.contact_group_ids, null);
  const fixedDay = base?.rule?.kind === 'fixed' ? monthDay(base.rule) : null;
  const date = kind === 'holiday' ? pick<string | null>('date', o.date, null, fixedDay) : pick<string | null>('date', null, null, null);
  const dateField =
    kind === 'contact_date' ? pick('date_field', o.date_field, null, base?.dateField ?? null) : pick('date_field', null, null, null);
  const rule = kind === 'holiday' && sources.date !== 'override' && base?.rule ? ruleInWords(base.rule) : null;
  return {
    key,
    kind,
    custom: base === null,
    name,
    enabled,
    message,
    send_time: sendTime,
    sender_id: senderId,
    date,
    rule,
    date_field: dateField,
    contact_group_ids: groups,
    sources,
    inherited: CARD_FIELDS.filter((f) => sources[f] !== 'override'),
  };
}

/**
 * The day a holiday card falls on in `year`, or null when it has none that year (a one-year date
 * of another year): its own date when it overrides one, else the catalogue's rule.
 */
export function holidayDayIn(card: Pick<EffectiveCard, 'date'>, base: CatalogueOccasion | null, year: number): CalendarDate | null {
  if (card.date !== null) {
    const parsed = parseOccasionDate(card.date);
    return parsed.ok ? occasionDateIn(parsed.date, year) : null;
  }
  return base?.rule ? holidayDate(base.rule, year) : null;
}

/** A holiday card's days from `from` on (inclusive) over `years` calendar years, in order. */
export function holidayDaysFrom(
  card: Pick<EffectiveCard, 'date'>,
  base: CatalogueOccasion | null,
  from: CalendarDate,
  years: number,
): CalendarDate[] {
  const out: CalendarDate[] = [];
  for (let y = from.year; y < from.year + years; y++) {
    const d = holidayDayIn(card, base, y);
    if (d && compareDates(d, from) >= 0) out.push(d);
  }
  return out;
}

/** The next day a holiday card falls on, on or after `today` (within ten years), as YYYY-MM-DD. */
export const nextHolidayDay = (card: Pick<EffectiveCard, 'date'>, base: CatalogueOccasion | null, today: CalendarDate) => {
  const [next] = holidayDaysFrom(card, base, today, 10);
  return next ? isoDate(next) : null;
};

export type { OccasionDate };
