import { defineEntity, p } from '@mikro-orm/core';
import { createdAt, timestamps } from './columns.js';
import { END_REASONS, FLOW_STATUSES, SESSION_STATUSES } from '../domain/flows/index.js';

// Flows (docs/flows.md): the journeys an operator loads and a business publishes, the sessions
// (Twilio Studio's executions) that walk a customer through one, and each session's steps.

export const Flow = defineEntity({
  name: 'Flow',
  tableName: 'flows',
  properties: {
    id: p.integer().primary().autoincrement(),
    accountId: p.integer(),
    /** Unique in the account: loading a definition under a known name makes a new draft revision of it. */
    name: p.string().length(100),
    /** draft: the draft is newer than what is published (or nothing is); published: they are the same. */
    status: p.enum(FLOW_STATUSES).default('draft'),
    /** The draft's revision: 1 at the first load, +1 at each later load. */
    revision: p.integer().default(1),
    definition: p.json<Record<string, unknown>>(),
    commitMessage: p.string().length(500).nullable(),
    /** What sessions start from: a copy of a draft at its publication, with its revision. */
    publishedRevision: p.integer().nullable(),
    publishedDefinition: p.json<Record<string, unknown>>().nullable(),
    publishedAt: p.datetime().nullable(),
    ...timestamps(),
  },
  uniques: [{ properties: ['accountId', 'name'] }],
  indexes: [{ properties: ['accountId', 'id'] }],
});

/** One customer's walk through one flow's published revision (pinned at its start). */
export const FlowSession = defineEntity({
  name: 'FlowSession',
  tableName: 'flow_sessions',
  properties: {
    uid: p.string().length(40).primary(),
    accountId: p.integer(),
    flowId: p.integer(),
    revision: p.integer(),
    /** E.164 with '+'. */
    customer: p.string().length(16),
    /** The customer while the session is active, null once it ended: unique per account, so a customer has one live session at a time. */
    liveKey: p.string().length(16).nullable(),
    status: p.enum(SESSION_STATUSES).default('active'),
    endReason: p.enum(END_REASONS).nullable(),
    /** The state the session is at (the workflow's query has it live). */
    currentState: p.string().length(64).nullable(),
    parameters: p.json<Record<string, unknown>>(),
    /** What failed, when it ended failed. */
    error: p.text().nullable(),
    endedAt: p.datetime().nullable(),
    ...timestamps(),
  },
  uniques: [{ properties: ['accountId', 'liveKey'] }],
  indexes: [{ properties: ['accountId', 'flowId', 'createdAt'] }],
});

/** A state a session went through: what it did and the event it left by. */
export const FlowSessionStep = defineEntity({
  name: 'FlowSessionStep',
  tableName: 'flow_session_steps',
  properties: {
    sessionUid: p.string().length(40).primary(),
    seq: p.integer().primary(),
    accountId: p.integer(),
    state: p.string().length(64),
    type: p.string().length(32),
    /** The event the state left by (null for a state that ended the session). */
    event: p.string().length(64).nullable(),
    next: p.string().length(64).nullable(),
    /** What the step did: the message uid sent, the reply, the operation run, the lead. */
    detail: p.json<Record<string, unknown>>(),
    createdAt: createdAt(),
  },
});
