import { defineEntity, p } from '@mikro-orm/core';
import { timestamps } from './columns.js';

// A contact group: the audience unit of campaigns. Addressed by numeric id or UUID everywhere.
export const ContactGroup = defineEntity({
  name: 'ContactGroup',
  tableName: 'contact_groups',
  properties: {
    id: p.integer().primary().autoincrement(),
    uid: p.uuid().unique(),
    accountId: p.integer(),
    name: p.string().length(160),
    ...timestamps(),
  },
  indexes: [{ properties: ['accountId', 'id'] }],
});

// Deleting a group deletes its contacts and imports with it (the database does it, so an import
// batch racing the delete cannot leave orphans behind).
export const Contact = defineEntity({
  name: 'Contact',
  tableName: 'contacts',
  properties: {
    id: p.bigint('string').primary().autoincrement(),
    uid: p.string().length(40).unique(),
    accountId: p.integer(),
    group: p.manyToOne(ContactGroup).deleteRule('cascade'),
    name: p.string().length(160),
    countryCode: p.string().length(8).default(''),
    phoneNumber: p.string().length(64),
    fullPhoneNumber: p.string().length(72),
    isSubscribed: p.boolean().default(true),
    customFieldValues: p.json<Record<string, unknown>>(),
    ...timestamps(),
  },
  indexes: [
    // The list routes (one group of one account, newest updated first): `order by updated_at desc,
    // id desc` is this index read backwards, so no descending columns are needed.
    { properties: ['accountId', 'group', 'updatedAt', 'id'] },
    // Campaign dispatch reads a group's audience in keyset pages: where group_id = ? and id > ? order by id.
    { properties: ['group', 'id'] },
    // Imports match existing contacts of the group by number.
    { properties: ['group', 'fullPhoneNumber'] },
    // An audience of the whole account (occasion greetings) is read in keyset pages by id, and a
    // number held by contacts of several groups is greeted once, by its first contact.
    { properties: ['accountId', 'id'] },
    { properties: ['accountId', 'fullPhoneNumber'] },
  ],
});

// A bulk import: progress and the first problems, updated in the same transaction as each batch of
// contacts, so `processed_rows` is also the cursor a restarted worker resumes from.
export const ContactImport = defineEntity({
  name: 'ContactImport',
  tableName: 'contact_imports',
  properties: {
    id: p.bigint('string').primary().autoincrement(),
    accountId: p.integer(),
    group: p.manyToOne(ContactGroup).deleteRule('cascade'),
    format: p.enum(['json', 'csv']),
    status: p.enum(['queued', 'running', 'completed', 'failed']).default('queued'),
    totalRows: p.integer(),
    processedRows: p.integer().default(0),
    createdCount: p.integer().default(0),
    updatedCount: p.integer().default(0),
    failedCount: p.integer().default(0),
    problems: p.json<Array<{ row: number; line?: number; field: string; message: string }>>(),
    problemsTruncated: p.boolean().default(false),
    errorMessage: p.text().nullable(),
    ...timestamps(),
    startedAt: p.datetime().nullable(),
    finishedAt: p.datetime().nullable(),
  },
  indexes: [{ properties: ['accountId', 'id'] }],
});

// Rows waiting to be imported; each batch deletes the rows it wrote, in the same transaction.
// `note` carries a problem found while reading the file (e.g. a CSV row longer than its header).
export const ContactImportRow = defineEntity({
  name: 'ContactImportRow',
  tableName: 'contact_import_rows',
  properties: {
    import: p.manyToOne(ContactImport).deleteRule('cascade').primary(),
    rowNo: p.integer().primary(),
    line: p.integer().nullable(),
    data: p.json<Record<string, unknown>>(),
    note: p.text().nullable(),
  },
});
