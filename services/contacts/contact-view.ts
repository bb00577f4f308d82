// The Contact resource as the contract lists it, the group and import objects we designed beside it,
// and their JSON Schemas (the same objects feed the OpenAPI document).
import type { ContactRow } from './store/contacts.js';
import type { GroupRow } from './store/groups.js';
import type { ImportRow } from './store/imports.js';

const iso = (d: Date | string | null) => (d === null || d === undefined ? null : new Date(d).toISOString());

export function contactView(r: ContactRow & { group_uid: string }) {
  return {
    id: Number(r.id),
    uid: r.uid,
    group_id: r.group_id,
    group_uid: r.group_uid,
    name: r.name,
    country_code: r.country_code,
    phone_number: r.phone_number,
    full_phone_number: r.full_phone_number,
    is_subscribed: r.is_subscribed,
    custom_field_values: r.custom_field_values ?? {},
    created_at: iso(r.created_at),
    updated_at: iso(r.updated_at),
  };
}

export const groupView = (r: GroupRow) => ({
  id: r.id,
  uid: r.uid,
  name: r.name,
  contacts_count: Number(r.contacts_count ?? 0),
  created_at: iso(r.created_at),
  updated_at: iso(r.updated_at),
});

/** An import's progress in the contract's words: what the view shows and what its workflow returns. */
export const importCounts = (
  r: Pick<ImportRow, 'status' | 'total_rows' | 'processed_rows' | 'created_count' | 'updated_count' | 'failed_count'>,
) => ({
  status: r.status,
  total: r.total_rows,
  processed: r.processed_rows,
  created: r.created_count,
  updated: r.updated_count,
  failed: r.failed_count,
});

export const importView = (r: ImportRow & { group_uid: string }) => ({
  id: Number(r.id),
  group_id: r.group_id,
  group_uid: r.group_uid,
  format: r.format,
  ...importCounts(r),
  problems: r.problems,
  problems_truncated: r.problems_truncated,
  error_message: r.error_message,
  created_at: iso(r.created_at),
  updated_at: iso(r.updated_at),
  started_at: iso(r.started_at),
  finished_at: iso(r.finished_at),
});

const ts = { type: ['string', 'null'] } as const;

export const contactSchema = {
  type: 'object',
  required: ['id', 'uid', 'group_id', 'group_uid', 'name', 'country_code', 'phone_number', 'full_phone_number', 'is_subscribed'],
  properties: {
    id: { type: 'integer' },
    uid: { type: 'string' },
    group_id: { type: 'integer' },
    group_uid: { type: 'string' },
    name: { type: 'string' },
    country_code: { type: 'string', description: 'digits of the calling code; empty when none was sent' },
    phone_number: { type: 'string', description: 'national number without country code' },
    full_phone_number: { type: 'string', description: 'country code and national number, digits only' },
    is_subscribed: { type: 'boolean' },
    custom_field_values: { type: 'object' },
    created_at: ts,
    updated_at: ts,
  },
} as const;

export const groupSchema = {
  type: 'object',
  required: ['id', 'uid', 'name', 'contacts_count', 'created_at', 'updated_at'],
  properties: {
    id: { type: 'integer' },
    uid: { type: 'string', format: 'uuid' },
    name: { type: 'string' },
    contacts_count: { type: 'integer' },
    created_at: ts,
    updated_at: ts,
  },
} as const;

export const importSchema = {
  type: 'object',
  required: ['id', 'group_id', 'status', 'total', 'processed', 'created', 'updated', 'failed', 'problems'],
  properties: {
    id: { type: 'integer' },
    group_id: { type: 'integer' },
    group_uid: { type: 'string' },
    format: { enum: ['json', 'csv'] },
    status: { enum: ['queued', 'running', 'completed', 'failed'] },
    total: { type: 'integer' },
    processed: { type: 'integer' },
    created: { type: 'integer' },
    updated: { type: 'integer', description: 'rows that matched a contact of the group by full number and replaced it' },
    failed: { type: 'integer' },
    problems: {
      type: 'array',
      description: 'the first 200 row problems',
      items: {
        type: 'object',
        required: ['row', 'field', 'message'],
        properties: { row: { type: 'integer' }, line: { type: 'integer' }, field: { type: 'string' }, message: { type: 'string' } },
      },
    },
    problems_truncated: { type: 'boolean' },
    error_message: ts,
    created_at: ts,
    updated_at: ts,
    started_at: ts,
    finished_at: ts,
  },
} as const;
