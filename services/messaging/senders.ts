import { defaultSmsRoute, sendingIdentities } from './store/routes.js';
import type { RequestContext } from '../platform/context.js';

/** GET /sms/senders: every identity a message can name as sender_id, and whether it can send now. */
export async function listSmsSenders(rc: RequestContext) {
  const id = rc.account.id;
  const [alpha, numbers, codes] = await sendingIdentities(rc.em, id);
  const route = await defaultSmsRoute(rc.em, id);
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
        const sms = n.capabilities.includes('sms');
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
