import { defineEntity, p } from '@mikro-orm/core';
import { createdAt, timestamps } from './columns.js';
import { IDENTITY_KINDS, LEAD_STAGES } from '../domain/leads/index.js';

// Leads (Endpoints > Leads; docs/leads.md). A lead is one person the business is selling to; the
// ways that person is named (phone numbers in E.164, e-mail addresses, chat ids, the conversations
// and calls they were met in) are rows of lead_identities, unique per account: that constraint is
// what makes concurrent upserts of one person end as one lead. Its timeline (notes, stage moves,
// assignments, labels, merges) is an append-only table beside it.

export const Lead = defineEntity({
  name: 'Lead',
  tableName: 'leads',
  properties: {
    id: p.integer().primary().autoincrement(),
    accountId: p.integer(),
    name: p.string().length(160).nullable(),
    /** The lead's main phone number (E.164), e-mail (lower case) and chat id; each is also an identity. */
    phone: p.string().length(16).nullable(),
    email: p.string().length(254).nullable(),
    chatId: p.string().length(191).nullable(),
    company: p.string().length(160).nullable(),
    /** Where the lead came from (web form, whatsapp, referral…): the caller's word. */
    source: p.string().length(64).nullable(),
    stage: p.enum(LEAD_STAGES).default('new'),
    /** Why it is at its stage: required into lost or unqualified and out of won. */
    stageReason: p.text().nullable(),
    labels: p.json<string[]>(),
    /** Custom properties: the caller's own keys, free-form values. */
    fields: p.json<Record<string, unknown>>(),
    /** A user of the account (null: the unassigned pool). */
    assigneeId: p.integer().nullable(),
    /** The user who added it (the issuer of the key that created it); null when the service or the operator did. */
    addedBy: p.integer().nullable(),
    /** The conversation and the call it was last met in (all of them are identities). */
    conversationId: p.string().length(191).nullable(),
    callId: p.string().length(191).nullable(),
    /** Set when it enters won, lost or unqualified; cleared when it is reopened. */
    closedAt: p.datetime().nullable(),
    /** Leads merged into this one (their ids answer 404 since). */
    mergedIds: p.json<number[]>(),
    ...timestamps(),
  },
  indexes: [
    // The list, most recently changed first, and its filters (a b-tree reads backwards).
    { name: 'leads_account_updated_index', properties: ['accountId', 'updatedAt', 'id'] },
    { name: 'leads_account_stage_index', properties: ['accountId', 'stage', 'updatedAt', 'id'] },
    { name: 'leads_account_assignee_index', properties: ['accountId', 'assigneeId', 'updatedAt', 'id'] },
  ],
});

/** One way a lead's person is named; unique in the account (the upsert's key). */
export const LeadIdentity = defineEntity({
  name: 'LeadIdentity',
  tableName: 'lead_identities',
  properties: {
    accountId: p.integer().primary(),
    kind: p.enum(IDENTITY_KINDS).primary(),
    /** Normalised: E.164, a lower-case address, a trimmed chat id, the conversation or call id as given. */
    value: p.string().length(254).primary(),
    lead: p.manyToOne(Lead).deleteRule('cascade'),
    createdAt: createdAt(),
  },
  indexes: [{ properties: ['lead'] }],
});

/** A lead's timeline: notes, and every change of stage, assignee, labels and merges, oldest first by id. */
export const LeadActivity = defineEntity({
  name: 'LeadActivity',
  tableName: 'lead_activities',
  properties: {
    id: p.bigint('string').primary().autoincrement(),
    accountId: p.integer(),
    lead: p.manyToOne(Lead).deleteRule('cascade'),
    /** note, created, updated, stage_changed, assigned, label_added, label_removed, merged. */
    kind: p.string().length(32),
    /** A note's text. */
    body: p.text().nullable(),
    data: p.json<Record<string, unknown>>(),
    /** Who: an actor label (api_key:12, mcp_credential:3, operator). */
    actor: p.string().length(191),
    /** The user behind the actor, when there is one. */
    userId: p.integer().nullable(),
    createdAt: createdAt(),
  },
  indexes: [{ properties: ['lead', 'id'] }],
});

/** The leads module of an account: switched by the operator; how far AI assistants (MCP) may go, set with leads.settings. */
export const LeadSettings = defineEntity({
  name: 'LeadSettings',
  tableName: 'lead_settings',
  properties: {
    accountId: p.integer().primary().autoincrement(false),
    enabled: p.boolean().default(true),
    aiAccess: p.enum(['write', 'read', 'none']).default('write'),
    ...timestamps(),
  },
});
