import { pageQueryProperties } from '../platform/pagination.js';
import { iso } from '../platform/time.js';
import { END_REASONS, FLOW_STATUSES, SESSION_STATUSES, STATE_TYPES } from '../../domain/flows/index.js';
import type { FlowRow, SessionRow, StepRow } from './store.js';

// The flows family's request and answer shapes: one schema each, validated by ajv and shown in the
// OpenAPI document and the MCP tools (docs/flows.md).

/**
 * A definition as the answers show it: an object (its shape is the operator's load's, checked there
 * by checkDefinition; spelling it out here again would triple every flow tool's size on MCP).
 */
export const definitionSchema = {
  type: 'object',
  description: `{description?, initial_state, states:[{name, type, properties, transitions:[{event, next}]}]}; types: ${STATE_TYPES.join(', ')}`,
} as const;

export const flowSchema = {
  type: 'object',
  required: ['id', 'name', 'status', 'revision', 'published_revision', 'created_at', 'updated_at'],
  properties: {
    id: { type: 'integer' },
    name: { type: 'string' },
    status: { enum: FLOW_STATUSES, description: 'draft: the draft is newer than what is published (or nothing is); published: the same' },
    revision: { type: 'integer', description: 'the draft’s revision (each load by the operator adds one)' },
    commit_message: { type: ['string', 'null'] },
    published_revision: { type: ['integer', 'null'], description: 'the revision sessions start from; null: never published' },
    published_at: { type: ['string', 'null'], format: 'date-time' },
    definition: { ...definitionSchema, description: 'the draft (in reads of one flow; the list leaves it out, as Studio does)' },
    published_definition: {
      type: ['object', 'null'],
      description: 'what sessions start from (in reads of one flow); null: never published',
    },
    created_at: { type: 'string', format: 'date-time' },
    updated_at: { type: 'string', format: 'date-time' },
  },
} as const;

type FlowListRow = Omit<FlowRow, 'definition' | 'published_definition'> & Partial<Pick<FlowRow, 'definition' | 'published_definition'>>;

export function flowView(r: FlowListRow) {
  return {
    id: r.id,
    name: r.name,
    status: r.status,
    revision: r.revision,
    commit_message: r.commit_message,
    published_revision: r.published_revision,
    published_at: iso(r.published_at),
    ...(r.definition !== undefined
      ? {
          definition: r.definition,
          published_definition: r.published_definition ?? null,
        }
      : {}),
    created_at: iso(r.created_at),
    updated_at: iso(r.updated_at),
  };
}

export const sessionSchema = {
  type: 'object',
  required: ['uid', 'flow_id', 'revision', 'customer', 'status', 'end_reason', 'current_state', 'created_at'],
  properties: {
    uid: { type: 'string', description: 'FN followed by 32 hex digits (a Studio execution sid’s shape)' },
    flow_id: { type: 'integer' },
    revision: { type: 'integer', description: 'the published revision the session walks (pinned at its start)' },
    customer: { type: 'string', description: 'E.164' },
    status: { enum: SESSION_STATUSES },
    end_reason: { enum: [...END_REASONS, null] },
    error: { type: ['string', 'null'] },
    current_state: { type: ['string', 'null'] },
    parameters: { type: 'object' },
    created_at: { type: 'string', format: 'date-time' },
    updated_at: { type: 'string', format: 'date-time' },
    ended_at: { type: ['string', 'null'], format: 'date-time' },
  },
} as const;

export function sessionView(r: SessionRow) {
  return {
    uid: r.uid,
    flow_id: r.flow_id,
    revision: r.revision,
    customer: r.customer,
    status: r.status,
    end_reason: r.end_reason,
    error: r.error,
    current_state: r.current_state,
    parameters: r.parameters,
    created_at: iso(r.created_at),
    updated_at: iso(r.updated_at),
    ended_at: iso(r.ended_at),
  };
}

export const stepSchema = {
  type: 'object',
  required: ['seq', 'state', 'type', 'event', 'next', 'detail', 'created_at'],
  properties: {
    seq: { type: 'integer' },
    state: { type: 'string', description: 'the state (widget) the step ran' },
    type: { type: 'string' },
    event: { type: ['string', 'null'], description: 'the event it left by (Studio’s transitioned_from → transitioned_to)' },
    next: { type: ['string', 'null'] },
    detail: { type: 'object' },
    created_at: { type: 'string', format: 'date-time' },
  },
} as const;

export const stepView = (r: StepRow) => ({
  seq: r.seq,
  state: r.state,
  type: r.type,
  event: r.event,
  next: r.next,
  detail: r.detail,
  created_at: iso(r.created_at),
});

export const bundleSchema = {
  type: 'object',
  required: ['format', 'version', 'name', 'revision', 'definition', 'checksum'],
  properties: {
    format: { const: 'svc.flow-bundle' },
    version: { const: 1 },
    name: { type: 'string' },
    revision: { type: 'integer' },
    status: { enum: FLOW_STATUSES },
    commit_message: { type: ['string', 'null'] },
    exported_at: { type: 'string', format: 'date-time' },
    definition: definitionSchema,
    checksum: { type: 'string', description: 'sha256: then the hex SHA-256 of the definition as canonical JSON (keys sorted)' },
  },
} as const;

export const flowListQuery = {
  type: 'object',
  additionalProperties: false,
  properties: { status: { enum: FLOW_STATUSES }, ...pageQueryProperties },
} as const;

export const sessionListQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    status: { enum: SESSION_STATUSES },
    customer: { type: 'string', maxLength: 32, description: 'a phone number in any common form' },
    ...pageQueryProperties,
  },
} as const;

export const exportQuery = {
  type: 'object',
  additionalProperties: false,
  properties: { revision: { enum: ['draft', 'published'], description: 'which side to export; default published, else the draft' } },
} as const;

export const publishBody = {
  type: 'object',
  additionalProperties: false,
  properties: {
    revision: {
      type: 'integer',
      minimum: 1,
      description: 'the draft revision the caller reviewed: a draft loaded since is 409 (revision_moved); absent: the current draft',
    },
  },
} as const;

export const startBody = {
  type: 'object',
  additionalProperties: false,
  required: ['to'],
  properties: {
    to: { type: 'string', minLength: 1, maxLength: 32, description: 'the customer: a phone number in international form (Studio’s To)' },
    sender_id: {
      type: 'string',
      maxLength: 64,
      description: 'the business number (a provider phone-number id or the number); absent: the account’s first',
    },
    parameters: {
      type: 'object',
      description: 'read as {{flow.data.*}} in the flow’s messages (Studio’s Parameters); at most 16 KB',
    },
  },
} as const;

export const endBody = { type: 'object', additionalProperties: false, properties: {} } as const;

/** The operator's load: a definition under a name, or a bundle another account exported. */
export const loadBody = {
  type: 'object',
  additionalProperties: false,
  properties: {
    name: {
      type: 'string',
      minLength: 1,
      maxLength: 100,
      pattern: '\\S',
      description: 'unique in the account; a known name makes a new draft revision',
    },
    definition: { type: 'object', description: 'the flow definition (docs/flows.md)' },
    commit_message: { type: 'string', maxLength: 500 },
    bundle: { type: 'object', description: 'an export (GET …/export) instead of name and definition: its checksum is checked' },
  },
} as const;
