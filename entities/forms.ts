import { defineEntity, p } from '@mikro-orm/core';
import { timestamps } from './columns.js';
import { FORM_SESSION_MODES, FORM_SESSION_STATUSES, type FormDefinition } from '../domain/forms/index.js';

// Forms sent into chats (docs/forms.md). A form is a draft that is edited freely and numbered
// versions that are frozen once published; a send makes one session per recipient, the state of one
// form session workflow (form-session/<account>/<session uid>): the answers it accepted so far, the
// question it waits on, and how it ended.

export const Form = defineEntity({
  name: 'Form',
  tableName: 'forms',
  properties: {
    id: p.bigint('string').primary().autoincrement(),
    /** Public id (frm_…): opaque, never guessable. */
    uid: p.string().length(32).unique(),
    accountId: p.integer(),
    /** The draft: what the next publish freezes. */
    draft: p.json<FormDefinition>(),
    /** The last published version (0: none yet). */
    latestVersion: p.integer().default(0),
    /** The draft differs from the last published version. */
    draftChanged: p.boolean().default(true),
    ...timestamps(),
  },
  indexes: [{ properties: ['accountId', 'id'] }],
});

/** A published version: written once, never changed. */
export const FormVersion = defineEntity({
  name: 'FormVersion',
  tableName: 'form_versions',
  properties: {
    formId: p.bigint('string').primary(),
    version: p.integer().primary(),
    accountId: p.integer(),
    definition: p.json<FormDefinition>(),
    publishedAt: p.datetime(),
  },
});

export const FormSession = defineEntity({
  name: 'FormSession',
  tableName: 'form_sessions',
  properties: {
    id: p.bigint('string').primary().autoincrement(),
    /** Public id (fss_…), also the native form's flow_token: opaque, never guessable. */
    uid: p.string().length(32).unique(),
    accountId: p.integer(),
    formId: p.bigint('string'),
    version: p.integer(),
    /** The customer, E.164 with '+'. */
    recipient: p.string().length(20),
    /** The business number's provider phone-number id the form goes out from. */
    senderId: p.string().length(64),
    conversationId: p.string().length(120),
    mode: p.enum(FORM_SESSION_MODES),
    status: p.enum(FORM_SESSION_STATUSES).default('active'),
    /** Accepted answers by question key (never a value that failed its question's rules). */
    answers: p.json<Record<string, unknown>>(),
    /** The question waited on in question-by-question mode (null: the native form, or ended). */
    currentQuestion: p.string().length(40).nullable(),
    /** Answers to the current question that did not fit. */
    invalidAttempts: p.integer().default(0),
    reminded: p.boolean().default(false),
    /** Prompts already sent (ask:<key>:<n>, native, remind): a retried activity sends none twice. */
    prompts: p.json<string[]>(),
    /** The uids of the customer's messages this session already read. */
    repliesSeen: p.json<string[]>(),
    endReason: p.string().length(32).nullable(),
    submittedAt: p.datetime().nullable(),
    endedAt: p.datetime().nullable(),
    ...timestamps(),
  },
  indexes: [{ properties: ['accountId', 'formId', 'id'] }, { properties: ['accountId', 'recipient', 'status'] }],
});

/** The Forms module of an account, switched by the operator (a switched-off module answers 403). */
export const FormSettings = defineEntity({
  name: 'FormSettings',
  tableName: 'form_settings',
  properties: {
    accountId: p.integer().primary().autoincrement(false),
    enabled: p.boolean().default(true),
    ...timestamps(),
  },
});
