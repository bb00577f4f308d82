import type { EntityManager } from '@mikro-orm/postgresql';
import type { Client } from '@temporalio/client';
import type { Config } from '../../config.js';
import {
  CARD_FIELDS,
  CATALOGUE_SEND_TIME,
  COUNTRY_TIME_ZONES,
  OCCASION_KEY_PATTERN,
  RESERVED_KEYS,
  catalogueOf,
  effectiveCard,
  isTimeZone,
  isoDate,
  localDate,
  monthDaysOn,
  nextHolidayDay,
  parseOccasionDate,
  type CalendarDate,
  type CatalogueOccasion,
  type EffectiveCard,
  type OccasionOverrides,
  type WorkspaceDefaults,
} from '../../domain/occasions/index.js';
import { DomainError, notFound, validationFailed, type FieldErrors } from '../platform/errors.js';
import type { RequestContext } from '../platform/context.js';
import { iso } from '../platform/time.js';
import { groupsAmong } from '../contacts/index.js';
import { resolveSmsRoute } from '../messaging/index.js';
import { createKeyedCampaign, latestKeyedCampaign, type CampaignAudience } from '../campaigns/index.js';
import { occasionScheduleId } from '../../temporal/ids.js';
import {
  defaultsOfAccount,
  deleteOverride,
  lockOverride,
  overrideOfKey,
  overridesOf,
  saveDefaults,
  saveOverride,
  type StoredDefaults,
  type StoredOverride,
} from './store.js';
import { deleteOccasionSchedule, syncOccasionSchedule } from './schedules.js';
import type { DefaultsBody, OccasionBody } from './schemas.js';

// Occasion greetings (docs/occasions.md): cards read in three layers (the account's overrides, the
// workspace defaults, the catalogue), switched on into a Temporal Schedule per occasion, and sent as
// a campaign of the campaigns family, once per occasion and day.

export interface OccasionDeps {
  temporal: Client;
  config: Config;
}

/** The workspace a card is read in: its defaults, its clock and its catalogue. */
interface Workspace {
  stored: StoredDefaults;
  timeZone: string;
  catalogue: CatalogueOccasion[];
}

const workspaceOf = (stored: StoredDefaults): Workspace => ({
  stored,
  timeZone: stored.time_zone ?? (stored.country ? COUNTRY_TIME_ZONES[stored.country] : undefined) ?? 'UTC',
  catalogue: catalogueOf(stored.country),
});

const loadWorkspace = async (em: EntityManager, accountId: number, lock = false) =>
  workspaceOf(await defaultsOfAccount(em, accountId, lock));

/** A card: the catalogue's occasion (null for a custom one) read through the override. Null when the key names no occasion here. */
function cardOf(ws: Workspace, key: string, stored: StoredOverride | null): { card: EffectiveCard; base: CatalogueOccasion | null } | null {
  const base = ws.catalogue.find((o) => o.key === key) ?? null;
  if (!base && !stored?.kind) return null;
  return { card: effectiveCard(key, base, stored ?? {}, ws.stored), base };
}

const KEY = new RegExp(OCCASION_KEY_PATTERN);
/** A key that cannot be an occasion's names none: 404 before any statement (a NUL or a 10 kB path never reaches SQL). */
const existingKey = (key: string) => {
  if (!KEY.test(key)) throw notFound('Occasion');
  return key;
};

/** The business key of an occasion's campaign of one day: once per account, ever. */
export const occasionBusinessKey = (key: string, day: CalendarDate) => `occasion:${key}:${isoDate(day)}`;

async function cardView(
  rc: RequestContext,
  ws: Workspace,
  found: { card: EffectiveCard; base: CatalogueOccasion | null },
  stored: StoredOverride | null,
  now = new Date(),
) {
  const { card, base } = found;
  const nextDate = card.kind === 'holiday' ? nextHolidayDay(card, base, localDate(now, ws.timeZone)) : null;
  const scheduled = card.enabled && (card.kind === 'contact_date' || nextDate !== null);
  const overrides: Record<string, unknown> = {};
  for (const f of CARD_FIELDS) if (stored && stored[f] !== null) overrides[f] = stored[f];
  return {
    id: card.key,
    key: card.key,
    kind: card.kind,
    custom: card.custom,
    name: card.name,
    enabled: card.enabled,
    message: card.message,
    send_time: card.send_time,
    time_zone: ws.timeZone,
    sender_id: card.sender_id,
    date: card.date,
    rule: card.rule,
    date_field: card.date_field,
    contact_group_ids: card.contact_group_ids,
    next_date: nextDate,
    schedule_id: scheduled ? occasionScheduleId(rc.account.id, card.key) : null,
    overrides,
    inherited: card.inherited,
    inherited_from: Object.fromEntries(card.inherited.map((f) => [f, card.sources[f] as 'workspace' | 'catalogue'])),
    last_campaign: await latestKeyedCampaign(rc, `occasion:${card.key}:`),
    updated_at: stored ? iso(stored.updated_at) : null,
  };
}
export type OccasionView = Awaited<ReturnType<typeof cardView>>;

/** GET /occasions: the catalogue's cards of the workspace's country, then the account's own, with what each inherits. */
export async function listOccasions(rc: RequestContext, q: { kind?: string; enabled?: boolean }) {
  const ws = await loadWorkspace(rc.em, rc.account.id);
  const stored = new Map((await overridesOf(rc.em, rc.account.id)).map((o) => [o.key, o]));
  const keys = [
    ...ws.catalogue.map((o) => o.key),
    ...[...stored.values()].filter((o) => o.kind && !ws.catalogue.some((c) => c.key === o.key)).map((o) => o.key),
  ];
  const occasions: OccasionView[] = [];
  for (const key of keys) {
    const found = cardOf(ws, key, stored.get(key) ?? null);
    if (!found) continue;
    if (q.kind !== undefined && found.card.kind !== q.kind) continue;
    if (q.enabled !== undefined && found.card.enabled !== q.enabled) continue;
    occasions.push(await cardView(rc, ws, found, stored.get(key) ?? null));
  }
  return { occasions, country: ws.stored.country, time_zone: ws.timeZone };
}

/** GET /occasions/{key}. */
export async function getOccasion(rc: RequestContext, key: string) {
  existingKey(key);
  const ws = await loadWorkspace(rc.em, rc.account.id);
  const stored = await overrideOfKey(rc.em, rc.account.id, key);
  const found = cardOf(ws, key, stored);
  if (!found) throw notFound('Occasion');
  return cardView(rc, ws, found, stored);
}

const blank = (v: string | null | undefined) => typeof v === 'string' && v.trim() === '';

/** The account's groups among `ids`, or the field's 422. */
async function checkGroups(rc: RequestContext, ids: number[] | null | undefined, errors: FieldErrors) {
  if (!ids || ids.length === 0) {
    if (ids && ids.length === 0) errors.contact_group_ids = ['Name at least one contact group, or null for every group.'];
    return;
  }
  const unique = [...new Set(ids)];
  const found = await groupsAmong(
    rc.em,
    rc.account.id,
    unique.filter((id) => id <= 2_147_483_647),
    [],
  );
  const missing = unique.filter((id) => !found.some((g) => g.id === id));
  if (missing.length) errors.contact_group_ids = [`Not contact groups of this account: ${missing.join(', ')}.`];
}

/** A sender id must be a usable SMS route of the account now (as on /sms/send), or the field's 422. */
async function checkSender(rc: RequestContext, senderId: string | null | undefined, errors: FieldErrors) {
  if (senderId === null || senderId === undefined) return;
  if (senderId.trim() === '') {
    errors.sender_id = ['The sender id must not be blank; null uses the account’s default route.'];
    return;
  }
  try {
    await resolveSmsRoute(rc, senderId);
  } catch (err) {
    if (!(err instanceof DomainError) || err.kind !== 'invalid') throw err;
    Object.assign(errors, err.detail.errors);
  }
}

/**
 * The overrides to store, checked whole: every problem is named (422 keyed by field) and nothing is
 * written. A date that names no day of the calendar is refused, never moved.
 */
async function checkOverrides(rc: RequestContext, base: CatalogueOccasion | null, o: Required<OccasionOverrides>) {
  const errors: FieldErrors = {};
  const kind = base?.kind ?? o.kind;
  if (base && o.kind !== null && o.kind !== base.kind)
    errors.kind = [`${base.name} is a ${base.kind.replace('_', ' ')} of the catalogue; its kind cannot change.`];
  if (!base) {
    if (!o.kind) errors.kind = ['A custom occasion needs its kind: holiday (a date) or contact_date (a contact field).'];
    if (!o.name) errors.name = ['A custom occasion needs a name.'];
    if (o.kind === 'holiday' && !o.date) errors.date = ['A custom holiday needs its date: MM-DD or YYYY-MM-DD.'];
    if (o.kind === 'contact_date' && !o.date_field)
      errors.date_field = ['A custom contact-date occasion needs the contact field holding the date.'];
  }
  if (blank(o.name)) errors.name = ['The name must not be blank.'];
  if (blank(o.message)) errors.message = ['The message must not be blank.'];
  if (blank(o.date_field)) errors.date_field = ['The date field must not be blank.'];
  if (o.date !== null) {
    if (kind === 'contact_date') errors.date = ['A contact-date occasion has no date of its own: date_field names the contact field.'];
    else {
      const parsed = parseOccasionDate(o.date);
      if (!parsed.ok) errors.date = [parsed.problem];
    }
  }
  if (o.date_field !== null && kind === 'holiday')
    errors.date_field = ['A holiday has no contact field: its date is the same for everyone.'];
  await checkGroups(rc, o.contact_group_ids, errors);
  await checkSender(rc, o.sender_id, errors);
  if (Object.keys(errors).length) throw validationFailed(errors);
}

const NO_OVERRIDES: Required<OccasionOverrides> = {
  kind: null,
  name: null,
  enabled: null,
  message: null,
  send_time: null,
  sender_id: null,
  date: null,
  date_field: null,
  contact_group_ids: null,
};

/**
 * PUT (`replace`: the body is the card's whole set of overrides) or PATCH (the fields sent; null
 * inherits again) of one card. The row, and the schedule the card now calls for, change in one
 * transaction: a schedule that cannot be made leaves the card as it was. A PUT on a key the
 * catalogue does not hold makes a custom occasion; a PATCH there is 404.
 */
export async function saveOccasion(rc: RequestContext, deps: OccasionDeps, key: string, body: OccasionBody, replace: boolean) {
  if (!replace) existingKey(key);
  else if (!KEY.test(key) || RESERVED_KEYS.has(key))
    throw validationFailed({
      key: ['An occasion key is lower-case letters, digits and dashes, starting with a letter (at most 64), and not "defaults".'],
    });
  return rc.em.transactional(async (em) => {
    const ws = await loadWorkspace(em, rc.account.id);
    const current = await lockOverride(em, rc.account.id, key);
    const base = ws.catalogue.find((o) => o.key === key) ?? null;
    if (!replace && !base && !current?.kind) throw notFound('Occasion');
    const start: Required<OccasionOverrides> = replace ? NO_OVERRIDES : { ...NO_OVERRIDES, ...(current ?? {}) };
    const next: Required<OccasionOverrides> = { ...start };
    for (const f of ['kind', ...CARD_FIELDS] as const) if (body[f] !== undefined) (next as Record<string, unknown>)[f] = body[f];
    // A catalogue card's kind is the catalogue's: not stored.
    if (base && next.kind === base.kind) next.kind = null;
    await checkOverrides(rc, base, next);
    const stored = Object.values(next).every((v) => v === null)
      ? (await deleteOverride(em, rc.account.id, key), null)
      : await saveOverride(em, rc.account.id, key, next);
    const found = cardOf(ws, key, stored)!;
    await syncOccasionSchedule(deps, rc.account.id, found.card, found.base, ws.timeZone);
    return cardView({ ...rc, em }, ws, found, stored);
  });
}

/**
 * DELETE /occasions/{key}: forgets what the account stored for the occasion. A catalogue card is
 * back to its defaults (switched off, so its schedule is removed); a custom occasion is gone.
 */
export async function resetOccasion(rc: RequestContext, deps: OccasionDeps, key: string) {
  existingKey(key);
  return rc.em.transactional(async (em) => {
    const ws = await loadWorkspace(em, rc.account.id);
    const current = await lockOverride(em, rc.account.id, key);
    if (!cardOf(ws, key, current)) throw notFound('Occasion');
    await deleteOverride(em, rc.account.id, key);
    await deleteOccasionSchedule(deps.temporal, rc.account.id, key);
    return { key, reset: true as const, custom: !ws.catalogue.some((o) => o.key === key) };
  });
}

/** The day's audience of a card: a contact date's matches of the day, or every contact that opted in. */
function audienceOf(card: EffectiveCard, day: CalendarDate): CampaignAudience {
  return card.kind === 'contact_date'
    ? { kind: 'contact_date', field: card.date_field!, month_days: monthDaysOn(day), contact_group_ids: card.contact_group_ids }
    : { kind: 'subscribed', contact_group_ids: card.contact_group_ids };
}

/** The greeting of `day` as a campaign of the campaigns family, once per occasion and day. */
function greet(rc: RequestContext, deps: OccasionDeps, card: EffectiveCard, day: CalendarDate) {
  return createKeyedCampaign(rc, deps, {
    businessKey: occasionBusinessKey(card.key, day),
    name: `${card.name} greetings ${isoDate(day)}`,
    message: card.message,
    senderId: card.sender_id,
    audience: audienceOf(card, day),
  });
}

/**
 * POST /occasions/{key}/send: the greeting now, on or off. A contact date greets today's dates; a
 * holiday greets its next day (today's, or the coming one sent early), which is the day its schedule
 * would greet, so the schedule sends nothing more that day. One that already went out is 409
 * `already_sent` (a campaign still a draft is started again instead: its start may have been lost).
 */
export async function sendOccasionNow(rc: RequestContext, deps: OccasionDeps, key: string, now = new Date()) {
  existingKey(key);
  const ws = await loadWorkspace(rc.em, rc.account.id);
  const found = cardOf(ws, key, await overrideOfKey(rc.em, rc.account.id, key));
  if (!found) throw notFound('Occasion');
  const { card, base } = found;
  const today = localDate(now, ws.timeZone);
  const next = card.kind === 'holiday' ? nextHolidayDay(card, base, today) : isoDate(today);
  if (next === null) throw new DomainError('conflict', `${card.name} has no day to come (its date is past).`, { reason: 'no_date' });
  const [y, m, d] = next.split('-').map(Number);
  const { campaign, created } = await greet(rc, deps, card, { year: y, month: m, day: d });
  if (!created && campaign.status !== 'draft')
    throw new DomainError('conflict', `The ${card.name} greeting of ${next} was sent already: campaign ${campaign.uid}.`, {
      reason: 'already_sent',
    });
  return campaign;
}

/** What one run of an occasion's schedule did. */
export type OccasionRunResult =
  | { status: 'sent' | 'already_sent'; at: string; day: string; campaign_uid: string }
  | { status: 'skipped'; at: string; day: string | null; reason: 'account_gone' | 'no_such_occasion' | 'switched_off' | 'not_the_day' };

/**
 * One run of an occasion's schedule for the day of `at` (the time it was meant for) in the
 * workspace's zone. The card is read now: switched off, gone or moved to another day, it sends
 * nothing. A holiday's run lists its schedule's days again from there, so they never run out.
 */
export async function runScheduledOccasion(rc: RequestContext, deps: OccasionDeps, key: string, at: Date): Promise<OccasionRunResult> {
  const ws = await loadWorkspace(rc.em, rc.account.id);
  const found = cardOf(ws, key, await overrideOfKey(rc.em, rc.account.id, key));
  const atIso = at.toISOString();
  if (!found) return { status: 'skipped', at: atIso, day: null, reason: 'no_such_occasion' };
  const { card, base } = found;
  const day = localDate(at, ws.timeZone);
  if (!card.enabled) return { status: 'skipped', at: atIso, day: isoDate(day), reason: 'switched_off' };
  if (card.kind === 'holiday' && nextHolidayDay(card, base, day) !== isoDate(day))
    return { status: 'skipped', at: atIso, day: isoDate(day), reason: 'not_the_day' };
  const { campaign, created } = await greet(rc, deps, card, day);
  if (card.kind === 'holiday') await syncOccasionSchedule(deps, rc.account.id, card, base, ws.timeZone);
  return { status: created ? 'sent' : 'already_sent', at: atIso, day: isoDate(day), campaign_uid: campaign.uid };
}

function defaultsView(ws: Workspace) {
  const s = ws.stored;
  return {
    country: s.country,
    time_zone: ws.timeZone,
    message: s.message,
    send_time: s.send_time ?? CATALOGUE_SEND_TIME,
    sender_id: s.sender_id,
    contact_group_ids: s.contact_group_ids,
    inherited: [...(s.time_zone === null ? ['time_zone' as const] : []), ...(s.send_time === null ? ['send_time' as const] : [])],
    updated_at: s.updated_at === null ? null : iso(s.updated_at),
  };
}

/** GET /occasions/defaults. */
export async function getOccasionDefaults(rc: RequestContext) {
  return defaultsView(await loadWorkspace(rc.em, rc.account.id));
}

/**
 * PATCH /occasions/defaults: the fields sent (null inherits). Every schedule of the account follows
 * in the same transaction (a time zone or a send time moves them; a country changes which holidays
 * there are, and a holiday of the old country loses its schedule).
 */
export async function updateOccasionDefaults(rc: RequestContext, deps: OccasionDeps, body: DefaultsBody) {
  return rc.em.transactional(async (em) => {
    const current = await defaultsOfAccount(em, rc.account.id, true);
    const next: WorkspaceDefaults = {
      country: current.country,
      time_zone: current.time_zone,
      message: current.message,
      send_time: current.send_time,
      sender_id: current.sender_id,
      contact_group_ids: current.contact_group_ids,
    };
    for (const f of Object.keys(next) as (keyof WorkspaceDefaults)[])
      if (body[f] !== undefined) (next as unknown as Record<string, unknown>)[f] = body[f];
    const errors: FieldErrors = {};
    if (next.time_zone !== null && !isTimeZone(next.time_zone))
      errors.time_zone = ['Not an IANA time zone (for example Africa/Dar_es_Salaam).'];
    if (blank(next.message)) errors.message = ['The message must not be blank.'];
    await checkGroups(rc, next.contact_group_ids, errors);
    await checkSender(rc, next.sender_id, errors);
    if (Object.keys(errors).length) throw validationFailed(errors);
    const ws = workspaceOf(await saveDefaults(em, rc.account.id, next));
    for (const stored of await overridesOf(em, rc.account.id)) {
      const found = cardOf(ws, stored.key, stored);
      if (found) await syncOccasionSchedule(deps, rc.account.id, found.card, found.base, ws.timeZone);
      else await deleteOccasionSchedule(deps.temporal, rc.account.id, stored.key);
    }
    return defaultsView(ws);
  });
}
