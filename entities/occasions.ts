import { defineEntity, p } from '@mikro-orm/core';
import { timestamps } from './columns.js';
import { OCCASION_KINDS } from '../domain/occasions/catalogue.js';

// Occasion greetings (docs/occasions.md). The catalogue of occasions is code (domain/occasions);
// what an account stores is only what it changed: one row per occasion it overrides (a null column
// inherits), and one row of workspace defaults. A custom occasion (a key the catalogue does not hold)
// is a row whose kind is set.

export const OccasionOverride = defineEntity({
  name: 'OccasionOverride',
  tableName: 'occasion_overrides',
  properties: {
    accountId: p.integer().primary(),
    key: p.string().length(64).primary(),
    /** Set on a custom occasion only; a catalogue occasion's kind is the catalogue's. */
    kind: p.enum(OCCASION_KINDS).nullable(),
    name: p.string().length(160).nullable(),
    enabled: p.boolean().nullable(),
    message: p.text().nullable(),
    /** HH:MM in the workspace's time zone. */
    sendTime: p.string().length(5).nullable(),
    senderId: p.string().length(64).nullable(),
    /** MM-DD (every year) or YYYY-MM-DD (that year): a holiday's own day. */
    date: p.string().length(10).nullable(),
    /** The contact field holding each contact's date (a contact-date occasion). */
    dateField: p.string().length(64).nullable(),
    /** The contact groups greeted; null: every group. */
    contactGroupIds: p.json<number[]>().nullable(),
    ...timestamps(),
  },
});

export const OccasionDefaults = defineEntity({
  name: 'OccasionDefaults',
  tableName: 'occasion_defaults',
  properties: {
    accountId: p.integer().primary().autoincrement(false),
    /** ISO 3166-1 alpha-2: whose public holidays the catalogue offers. */
    country: p.string().length(2).nullable(),
    /** IANA zone of the workspace's clock: the day and the send time of every greeting. */
    timeZone: p.string().length(64).nullable(),
    message: p.text().nullable(),
    sendTime: p.string().length(5).nullable(),
    senderId: p.string().length(64).nullable(),
    contactGroupIds: p.json<number[]>().nullable(),
    ...timestamps(),
  },
});
