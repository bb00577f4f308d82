import { one } from '../../entities/db.js';
import type { RequestContext } from '../platform/context.js';
import { notFound } from '../platform/errors.js';
import type { GroupStatus, JoinApprovalMode } from '../../domain/groups/index.js';

// A chat group as every group service reads it, and how it leaves the service.

export interface GroupRow {
  id: string | number;
  account_id: number;
  sender_phone_number_id: string;
  channel_id: number | null;
  provider_group_id: string | null;
  provider_request_id: string | null;
  subject: string;
  description: string | null;
  join_approval_mode: JoinApprovalMode;
  status: GroupStatus;
  invite_link: string | null;
  invite_template: string | null;
  invitees: string[];
  failure_reason: string | null;
  last_participant_message_at: Date | null;
  deleted_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

/** The caller's group by its local numeric id; another account's (or a malformed id) is 404. */
export async function loadGroup(rc: RequestContext, id: string, opts: { forUpdate?: boolean } = {}): Promise<GroupRow> {
  if (!/^\d{1,18}$/.test(id)) throw notFound('Group');
  const row = await one<GroupRow>(
    rc.em,
    `select * from chat_groups where id = ?::bigint and account_id = ?${opts.forUpdate ? ' for update' : ''}`,
    [id, rc.account.id],
  );
  if (!row) throw notFound('Group');
  return row;
}

const iso = (d: Date | null) => (d ? new Date(d).toISOString() : null);

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
