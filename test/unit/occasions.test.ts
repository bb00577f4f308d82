import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  BIRTHDAY,
  HOLIDAYS,
  catalogueOf,
  contactMonthDay,
  easterSunday,
  effectiveCard,
  holidayDate,
  holidayDaysFrom,
  isoDate,
  localDate,
  monthDaysOn,
  nextHolidayDay,
  nthWeekday,
  parseOccasionDate,
  ruleInWords,
  type WorkspaceDefaults,
} from '../../domain/occasions/index.js';
import { occasionSpec } from '../../services/occasions/schedules.js';

// Occasion greetings' pure rules (domain/occasions): the calendar, the catalogue's holidays, the
// 29 February rule, dates that do not exist, and how a card reads its three layers.

const day = (s: string) => {
  const [year, month, d] = s.split('-').map(Number);
  return { year, month, day: d };
};
const noDefaults: WorkspaceDefaults = {
  country: null,
  time_zone: null,
  message: null,
  send_time: null,
  sender_id: null,
  contact_group_ids: null,
};
const holiday = (country: string, key: string) => catalogueOf(country).find((o) => o.key === key)!;

test('Easter and the days counted from it, for years with known dates', () => {
  assert.deepEqual(
    [2024, 2025, 2026, 2027, 2038].map((y) => isoDate(easterSunday(y))),
    ['2024-03-31', '2025-04-20', '2026-04-05', '2027-03-28', '2038-04-25'],
  );
  assert.equal(isoDate(holidayDate(holiday('TZ', 'good-friday').rule!, 2026)), '2026-04-03');
  assert.equal(isoDate(holidayDate(holiday('KE', 'easter-monday').rule!, 2026)), '2026-04-06');
});

test('the n-th and the last weekday of a month', () => {
  assert.equal(isoDate(nthWeekday(2026, 11, 4, 4)), '2026-11-26', 'Thanksgiving 2026');
  assert.equal(isoDate(nthWeekday(2026, 5, 1, -1)), '2026-05-25', 'Memorial Day 2026');
  assert.equal(isoDate(nthWeekday(2026, 1, 1, 3)), '2026-01-19', 'MLK Day 2026');
  assert.equal(isoDate(nthWeekday(2027, 8, 1, -1)), '2027-08-30', 'Summer bank holiday 2027');
  assert.equal(isoDate(holidayDate(holiday('US', 'labor-day').rule!, 2026)), '2026-09-07');
  assert.equal(ruleInWords(holiday('US', 'thanksgiving-day').rule!), 'the fourth Thursday of November');
  assert.equal(ruleInWords(holiday('GB', 'good-friday').rule!), '2 days before Easter Sunday');
});

test('the catalogue: the birthday first, then the country’s holidays in calendar order; none for a country it does not hold', () => {
  assert.deepEqual(
    catalogueOf('TZ').map((o) => o.key),
    [
      'birthday',
      'new-years-day',
      'zanzibar-revolution-day',
      'good-friday',
      'easter-monday',
      'karume-day',
      'union-day',
      'labour-day',
      'saba-saba',
      'nane-nane',
      'nyerere-day',
      'independence-day',
      'christmas-day',
      'boxing-day',
    ],
  );
  assert.deepEqual(
    catalogueOf(null).map((o) => o.key),
    ['birthday'],
  );
  assert.deepEqual(
    catalogueOf('FR').map((o) => o.key),
    ['birthday'],
  );
  for (const [country, holidays] of Object.entries(HOLIDAYS)) {
    const keys = holidays.map((h) => h.key);
    assert.equal(new Set(keys).size, keys.length, `${country}: keys are unique`);
    for (const k of keys) assert.match(k, /^[a-z][a-z0-9-]{0,63}$/);
  }
});

test('29 February: a birthday on it is greeted on 28 February in a year without one, and on its day in a leap year', () => {
  assert.deepEqual(monthDaysOn(day('2027-02-28')), ['02-28', '02-29']);
  assert.deepEqual(monthDaysOn(day('2028-02-28')), ['02-28']);
  assert.deepEqual(monthDaysOn(day('2028-02-29')), ['02-29']);
  assert.deepEqual(monthDaysOn(day('2027-03-01')), ['03-01']);
  assert.deepEqual(monthDaysOn(day('2100-02-28')), ['02-28', '02-29'], '2100 is not a leap year');
  assert.deepEqual(monthDaysOn(day('2000-02-28')), ['02-28'], '2000 is');
  // A holiday set on 02-29 every year behaves the same.
  const leapDay = { date: '02-29' };
  assert.deepEqual(holidayDaysFrom(leapDay, null, day('2027-01-01'), 3).map(isoDate), ['2027-02-28', '2028-02-29', '2029-02-28']);
});

test('a contact’s stored date: a birth date, MM-DD or --MM-DD; anything else is no date', () => {
  assert.equal(contactMonthDay('1990-03-01'), '03-01');
  assert.equal(contactMonthDay(' 1992-02-29 '), '02-29');
  assert.equal(contactMonthDay('1990-03-01T00:00:00Z'), '03-01');
  assert.equal(contactMonthDay('03-01'), '03-01');
  assert.equal(contactMonthDay('--12-25'), '12-25');
  for (const v of ['1990-02-30', '1991-02-29', '13-01', '02-30', '1/3/1990', 'tomorrow', 19900301, null, '']) {
    assert.equal(contactMonthDay(v), null, String(v));
  }
});

test('an occasion date that does not exist is refused with the reason, never moved to a neighbour', () => {
  assert.deepEqual(parseOccasionDate('12-25'), { ok: true, date: { month: 12, day: 25 } });
  assert.deepEqual(parseOccasionDate('02-29'), { ok: true, date: { month: 2, day: 29 } });
  assert.deepEqual(parseOccasionDate('2028-02-29'), { ok: true, date: { year: 2028, month: 2, day: 29 } });
  for (const bad of ['02-30', '04-31', '13-01', '00-10', '2027-02-29', '2026-06-31', '2026-00-01']) {
    const r = parseOccasionDate(bad);
    assert.equal(r.ok, false, bad);
    assert.match((r as { problem: string }).problem, /is not a day of the calendar/, bad);
  }
  const shape = parseOccasionDate('25/12');
  assert.equal(shape.ok, false);
  assert.match((shape as { problem: string }).problem, /MM-DD/);
});

test('a card reads its override, then the workspace default, then the catalogue, and lists what it inherited', () => {
  const base = holiday('TZ', 'union-day');
  const bare = effectiveCard('union-day', base, {}, noDefaults);
  assert.deepEqual(
    [bare.name, bare.enabled, bare.send_time, bare.sender_id, bare.date, bare.date_field, bare.contact_group_ids],
    ['Union Day', false, '09:00', null, '04-26', null, null],
  );
  assert.match(bare.message, /Union Day/);
  assert.deepEqual(bare.inherited, ['name', 'enabled', 'message', 'send_time', 'sender_id', 'date', 'date_field', 'contact_group_ids']);
  assert.equal(bare.sources.message, 'catalogue');

  const ws = { ...noDefaults, message: 'Heri ya {{occasion}}, {{name}}!', send_time: '07:30' };
  const card = effectiveCard('union-day', base, { enabled: true, send_time: '10:15' }, ws);
  assert.equal(card.enabled, true);
  assert.equal(card.send_time, '10:15');
  assert.equal(card.message, 'Heri ya Union Day, {{name}}!', 'the workspace text names the occasion');
  assert.equal(card.sources.send_time, 'override');
  assert.equal(card.sources.message, 'workspace');
  assert.equal(card.sources.date, 'catalogue');
  assert.deepEqual(card.inherited, ['name', 'message', 'sender_id', 'date', 'date_field', 'contact_group_ids']);
  assert.equal(card.custom, false);

  const birthday = effectiveCard('birthday', BIRTHDAY, { date_field: 'dob' }, noDefaults);
  assert.equal(birthday.kind, 'contact_date');
  assert.equal(birthday.date_field, 'dob');
  assert.equal(birthday.date, null);

  const custom = effectiveCard('founders-day', null, { kind: 'holiday', name: 'Founders’ Day', date: '2027-06-15' }, noDefaults);
  assert.deepEqual([custom.custom, custom.kind, custom.name, custom.date], [true, 'holiday', 'Founders’ Day', '2027-06-15']);
});

test('a holiday’s next day: today’s counts; a one-year date that is past has none', () => {
  const base = holiday('TZ', 'christmas-day');
  const card = effectiveCard('christmas-day', base, {}, noDefaults);
  assert.equal(nextHolidayDay(card, base, day('2026-12-25')), '2026-12-25');
  assert.equal(nextHolidayDay(card, base, day('2026-12-26')), '2027-12-25');
  const moved = effectiveCard('christmas-day', base, { date: '2026-12-24' }, noDefaults);
  assert.equal(nextHolidayDay(moved, base, day('2026-12-01')), '2026-12-24');
  assert.equal(nextHolidayDay(moved, base, day('2026-12-25')), null);
});

test('the local day of an instant follows the workspace’s time zone', () => {
  const t = new Date('2026-12-24T22:30:00Z');
  assert.equal(isoDate(localDate(t, 'Africa/Dar_es_Salaam')), '2026-12-25');
  assert.equal(isoDate(localDate(t, 'America/New_York')), '2026-12-24');
  assert.equal(isoDate(localDate(t, 'UTC')), '2026-12-24');
});

test('schedule specs: a contact date every day at its send time; a holiday on its days ahead; none when no day is left', () => {
  const now = new Date('2026-06-01T00:00:00Z');
  const birthday = effectiveCard('birthday', BIRTHDAY, { enabled: true, send_time: '08:45' }, noDefaults);
  assert.deepEqual(occasionSpec(birthday, BIRTHDAY, 'Africa/Nairobi', now), {
    calendars: [{ hour: 8, minute: 45, comment: 'every day' }],
    timezone: 'Africa/Nairobi',
  });
  const base = holiday('US', 'thanksgiving-day');
  const spec = occasionSpec(effectiveCard('thanksgiving-day', base, { enabled: true }, noDefaults), base, 'America/New_York', now)!;
  assert.equal(spec.timezone, 'America/New_York');
  assert.deepEqual(spec.calendars.slice(0, 2), [
    { year: 2026, month: 'NOVEMBER', dayOfMonth: 26, hour: 9, minute: 0 },
    { year: 2027, month: 'NOVEMBER', dayOfMonth: 25, hour: 9, minute: 0 },
  ]);
  assert.equal(spec.calendars.length, 5);
  const past = effectiveCard('x', null, { kind: 'holiday', name: 'X', date: '2026-05-01', enabled: true }, noDefaults);
  assert.equal(occasionSpec(past, null, 'UTC', now), null);
});
