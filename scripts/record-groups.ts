// Records the chat-group workflows' histories for the replay test:
//   npx tsx scripts/record-groups.ts [creation] [members]
// A stack of its own (a 5 s confirmation wait); groups created through the API on a number of the
// recorder's account, the simulator's Groups API confirming, refusing or never answering.
// creation: test/replay/histories/chatGroupWorkflow/<scenario>.json (created, failed, not-eligible,
// timed-out) and chatGroupChangeWorkflow/<scenario>.json (update, delete, refused);
// members: chatGroupChangeWorkflow/<scenario>.json of the member and pin kinds (invite-link-reset,
// join-requests, participants-removal, pin, member-refused). No argument records both. Record only
// the set a change is meant for: the older histories are what proves a change kept them replaying.
import type { Client } from '@temporalio/client';
import { chatGroupWorkflowId } from '../workflows/groups/chat-group.starter.js';
import { withRecorder } from './recorder.js';

const TYPE = 'chatGroupWorkflow';
const CHANGE = 'chatGroupChangeWorkflow';
const SETS = ['creation', 'members'];
const asked = process.argv.slice(2);
const bad = asked.filter((a) => !SETS.includes(a));
if (bad.length) throw new Error(`unknown scenario sets ${bad.join(', ')} (known: ${SETS.join(', ')})`);
const wanted = (set: string) => !asked.length || asked.includes(set);

/** The change workflows of one group, oldest first (visibility may lag a moment behind the start). */
async function changesOf(client: Client, groupId: number, count: number): Promise<string[]> {
  for (let i = 0; i < 100; i++) {
    const ids: { id: string; at: number }[] = [];
    for await (const w of client.workflow.list({ query: `ResourceType = 'chat_group_change' AND ResourceId = '${groupId}'` }))
      ids.push({ id: w.workflowId, at: w.startTime.getTime() });
    if (ids.length >= count) return ids.sort((a, b) => a.at - b.at).map((x) => x.id);
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`the change workflows of group ${groupId} are not listed`);
}

await withRecorder(
  'svc-record-groups',
  { GROUP_CONFIRMATION_SECONDS: '5' },
  'Groups recorder',
  async ({ client, account, admin, api, sim, save }) => {
    const phoneNumberId = `55${account.id}0001`;
    await admin('POST', `/accounts/${account.id}/phone-numbers`, {
      number: '+255700000101',
      capabilities: ['whatsapp'],
      provider_phone_number_id: phoneNumberId,
      business_account_id: `WABA${account.id}`,
    });
    const create = async (subject: string, extra: Record<string, unknown> = {}) => {
      const r = await api('POST', '/api/v3/whatsapp/groups', { sender_id: phoneNumberId, subject, ...extra });
      if (r.status !== 'success') throw new Error(`group create refused: ${JSON.stringify(r)}`);
      return r.data.id as number;
    };
    const keep = (scenario: string, id: number) => save(TYPE, scenario, client.workflow.getHandle(chatGroupWorkflowId(account.id, id)));
    const fault = (kind: string, code?: number) => sim('POST', '/_sim/faults', { provider: 'whatsapp', kind, to: phoneNumberId, code });

    if (wanted('members')) await recordMemberChanges(client, account.id, api, sim, save, create, fault);
    if (!wanted('creation')) return;

    // Confirmed by the lifecycle webhook: active, and the invitee is sent the invite template.
    const created = await create('Recorded club', { invitees: ['+255711000201'], invite_template: 'group_invite_link' });
    await keep('created', created);
    // The provider's failure webhook.
    await fault('group_create_fail', 131211);
    await keep('failed', await create('Recorded failure'));
    // No confirmation within the 5 s wait.
    await fault('group_create_hang');
    await keep('timed-out', await create('Recorded silence'));

    // Changes of the created group: a subject change, a refused change, the deletion.
    await api('PATCH', `/api/v3/whatsapp/groups/${created}`, { subject: 'Recorded readers' });
    await fault('group_error', 131207);
    await api('PATCH', `/api/v3/whatsapp/groups/${created}`, { subject: 'Refused' });
    await api('DELETE', `/api/v3/whatsapp/groups/${created}`);
    const [update, refused, del] = await changesOf(client, created, 3);
    await save(CHANGE, 'update', client.workflow.getHandle(update));
    await save(CHANGE, 'refused', client.workflow.getHandle(refused));
    await save(CHANGE, 'delete', client.workflow.getHandle(del));

    // A number not eligible for groups (131215): refused at the create call.
    await sim('POST', '/_sim/whatsapp/groups/eligibility', { phone_number_id: phoneNumberId, eligible: false });
    await keep('not-eligible', await create('Recorded refusal'));
  },
);

type Call = (method: string, p: string, payload?: unknown) => Promise<any>;

/** The member and pin change kinds of one active group, each call's change workflow saved as it closes. */
async function recordMemberChanges(
  client: Client,
  accountId: number,
  api: Call,
  sim: Call,
  save: (workflowType: string, scenario: string, handle: ReturnType<Client['workflow']['getHandle']>) => Promise<void>,
  create: (subject: string, extra?: Record<string, unknown>) => Promise<number>,
  fault: (kind: string, code?: number) => Promise<unknown>,
) {
  const G = '/api/v3/whatsapp/groups';
  const id = await create('Recorded members', { join_approval_mode: 'approval_required' });
  const group = await until(
    () => api('GET', `${G}/${id}`),
    (r) => r.data?.status !== 'creating',
  );
  if (group.data.status !== 'active') throw new Error(`group not active: ${JSON.stringify(group)}`);
  let seen = 0;
  const keepChange = async (scenario: string) => {
    const ids = await changesOf(client, id, ++seen);
    await save(CHANGE, scenario, client.workflow.getHandle(ids[seen - 1]));
  };
  const expect = (r: any, what: string) => {
    if (r.status !== 'success') throw new Error(`${what}: ${JSON.stringify(r)}`);
    return r.data;
  };

  const reset = expect(await api('POST', `${G}/${id}/invite-link/reset`, {}), 'invite-link reset');
  await keepChange('invite-link-reset');

  // Someone asks to join through the new link; approved, they join (the provider's webhook).
  const who = '+255711000301';
  const asked = await sim('POST', '/_sim/whatsapp/groups/join', { invite_link: reset.invite_link, from: who });
  if (asked.outcome !== 'join_requested') throw new Error(`join: ${JSON.stringify(asked)}`);
  expect(await api('POST', `${G}/${id}/join-requests/approve`, { join_requests: [asked.join_request_id] }), 'approve');
  await keepChange('join-requests');

  // Removed once the join is reported (before that they are no member: nothing is asked of the provider).
  await until(
    () => api('DELETE', `${G}/${id}/participants`, { participants: [who] }),
    (r) => r.data?.successes?.[0]?.status === 'removed',
  );
  await keepChange('participants-removal');

  const sent = expect(await api('POST', `${G}/${id}/messages`, { template: { name: 'hello_world', language: 'en_US' } }), 'group message');
  expect(await api('POST', `${G}/${id}/pin`, { message_uid: sent.uid, pin: true, expiration_days: 7 }), 'pin');
  await keepChange('pin');

  // The provider refuses the next group call: the change workflow fails with ProviderRefused.
  await fault('group_error', 131207);
  const refused = await api('POST', `${G}/${id}/invite-link/reset`, {});
  if (refused.status !== 'error') throw new Error(`the refused reset answered ${JSON.stringify(refused)}`);
  await keepChange('member-refused');
}

async function until<T>(get: () => Promise<T>, done: (x: T) => boolean, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const x = await get();
    if (done(x) || Date.now() > deadline) return x;
    await new Promise((r) => setTimeout(r, 250));
  }
}
