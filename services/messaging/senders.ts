import { many, one } from '../../entities/db.js';
import type { RequestContext } from '../platform/context.js';

/** GET /sms/senders: every identity a message can name as sender_id, and whether it can send now. */
export async function listSmsSenders(rc: RequestContext) {
  const id = rc.account.id;
  const [alpha, numbers, codes] = await Promise.all([
    many<{ id: number; value: string; approval_status: string; channel_id: number | null }>(
      rc.em,
      'select id, value, approval_status, channel_id from sender_ids where account_id = ? order by id',
      [id],
    ),
    many<{ id: number; number: string; capabilities: string[]; released: boolean; channel_id: number | null }>(
      rc.em,
      'select id, number, capabilities, released, channel_id from phone_numbers where account_id = ? order by id',
      [id],
    ),
    many<{ id: number; code: string; assignment_status: string; channel_id: number | null }>(
      rc.em,
      'select id, code, assignment_status, channel_id from short_codes where account_id = ? order by id',
      [id],
    ),
  ]);
  const route = await one<{ id: number; code: string; account_id: number | null }>(
    rc.em,
    `select id, code, account_id from channels where channel_type = 'sms' and active and is_default and (account_id = ? or account_id is null)
      order by account_id nulls last limit 1`,
    [id],
  );
  return {
    senders: [
      ...alpha.map((s) => ({
        type: 'alphanumeric',
        id: s.id,
        sender_id: s.value,
        status: s.approval_status,
        usable: s.approval_status === 'approved',
        tenant_channel_id: s.channel_id,
      })),
      ...numbers.map((n) => {
        const sms = (n.capabilities as string[]).includes('sms');
        return {
          type: 'phone_number',
          id: n.id,
          sender_id: n.number,
          status: n.released ? 'released' : 'assigned',
          capabilities: n.capabilities,
          usable: sms && !n.released,
          tenant_channel_id: n.channel_id,
        };
      }),
      ...codes.map((c) => ({
        type: 'short_code',
        id: c.id,
        sender_id: c.code,
        status: c.assignment_status,
        usable: c.assignment_status === 'active',
        tenant_channel_id: c.channel_id,
      })),
    ],
    default_channel: route ? { tenant_channel_id: route.id, channel_code: route.code, system_default: route.account_id === null } : null,
  };
}
