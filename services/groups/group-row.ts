import type { RequestContext } from '../platform/context.js';
import { notFound } from '../platform/errors.js';
import { groupOfAccount, type GroupRow } from './store.js';
import { iso } from '../platform/time.js';

export type { GroupRow } from './store.js';

// A chat group as every group service reads it (store.ts), and how it leaves the service.

/** The caller's group by its local numeric id; another account's (or a malformed id) is 404. */
export async function loadGroup(rc: RequestContext, id: string, opts: { forUpdate?: boolean } = {}): Promise<GroupRow> {
  if (!/^\d{1,18}$/.test(id)) throw notFound('Group');
  const row = await groupOfAccount(rc.em, id, rc.account.id, opts);
  if (!row) throw notFound('Group');
  return row;
}

/** The group as the API shows it (Resources > Chat-channel group). */
export function groupView(g: GroupRow) {
  return {
    id: Number(g.id),
    provider_group_id: g.provider_group_id,
    sender_id: g.sender_phone_number_id,
    subject: g.subject,
    description: g.description,
    join_approval_mode: g.join_approval_mode,
    status: g.status,
    invite_link: g.invite_link,
    failure_reason: g.failure_reason,
    last_participant_message_at: iso(g.last_participant_message_at),
    created_at: iso(g.created_at),
    updated_at: iso(g.updated_at),
  };
}

export const groupSchema = {
  type: 'object',
  required: ['id', 'provider_group_id', 'sender_id', 'subject', 'description', 'join_approval_mode', 'status', 'invite_link', 'created_at'],
  properties: {
    id: { type: 'integer' },
    provider_group_id: { type: ['string', 'null'], description: 'absent while creating' },
    sender_id: { type: 'string', description: 'the provider phone-number id of the business number the group runs on' },
    subject: { type: 'string', maxLength: 128 },
    description: { type: ['string', 'null'], maxLength: 2048 },
    join_approval_mode: { enum: ['auto_approve', 'approval_required'] },
    status: { enum: ['creating', 'active', 'suspended', 'deleting', 'deleted', 'failed'] },
    invite_link: { type: ['string', 'null'] },
    failure_reason: { type: ['string', 'null'] },
    last_participant_message_at: { type: ['string', 'null'], format: 'date-time' },
    created_at: { type: 'string', format: 'date-time' },
    updated_at: { type: 'string', format: 'date-time' },
  },
} as const;
