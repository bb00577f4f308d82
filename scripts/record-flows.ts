// Records the flow session workflow's histories for the replay test:
//   npx tsx scripts/record-flows.ts
// A stack of its own: a session walked to a handover by the customer's replies through the chat
// ingress (messages, a wait, a split looping back, a lead stage, a named operation as a child
// run), one ended by the business during its wait and one whose wait timed out.
// test/replay/histories/flowSessionWorkflow/<scenario>.json. Re-record after a change to workflows/flows/.
import { flowSessionWorkflowId } from '../workflows/flows/flow-session.starter.js';
import { withRecorder } from './recorder.js';

const TYPE = 'flowSessionWorkflow';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const definition = (timeoutSeconds: number) => ({
  initial_state: 'welcome',
  states: [
    {
      name: 'welcome',
      type: 'send_message',
      properties: { body: 'Hi {{flow.data.name}}!' },
      transitions: [{ event: 'sent', next: 'ask' }],
    },
    {
      name: 'ask',
      type: 'wait_for_reply',
      properties: { body: 'Interested? Reply YES or NO', timeout_seconds: timeoutSeconds },
      transitions: [
        { event: 'reply', next: 'route' },
        { event: 'timeout', next: 'bye' },
      ],
    },
    {
      name: 'route',
      type: 'split',
      properties: { cases: [{ event: 'yes', match: 'any_of', value: ['yes', 'sure'] }] },
      transitions: [
        { event: 'yes', next: 'qualify' },
        { event: 'no_match', next: 'ask' },
      ],
    },
    { name: 'qualify', type: 'set_lead_stage', properties: { stage: 'qualified' }, transitions: [{ event: 'done', next: 'record' }] },
    {
      name: 'record',
      type: 'run_operation',
      properties: { operation: 'demo-wanted', input: { data: { phone: '{{contact.phone}}' } } },
      transitions: [
        { event: 'succeeded', next: 'person' },
        { event: 'failed', next: 'person' },
      ],
    },
    { name: 'person', type: 'handover', properties: { note: 'Call {{flow.data.name}}' } },
    { name: 'bye', type: 'send_message', properties: { body: 'Bye.' } },
  ],
});

await withRecorder('svc-record-flows', {}, 'Flows recorder', async ({ client, account, admin, api, sim, save }) => {
  const phoneNumberId = `57${account.id}0001`;
  await admin('POST', `/accounts/${account.id}/phone-numbers`, {
    number: '+255700000401',
    capabilities: ['whatsapp'],
    provider_phone_number_id: phoneNumberId,
    business_account_id: `WABA${account.id}`,
  });
  await admin('POST', `/accounts/${account.id}/operations`, {
    name: 'demo-wanted',
    kind: 'emit_business_event',
    config: { type: 'lead.demo_wanted' },
  });
  const flowOf = async (name: string, timeoutSeconds: number) => {
    const f = (await admin('POST', `/accounts/${account.id}/flows`, { name, definition: definition(timeoutSeconds) })).data;
    await api('POST', `/api/v3/flows/${f.id}/publish`, {});
    return f.id as number;
  };
  const say = (customer: string, text: string) =>
    sim('POST', '/_sim/whatsapp/inbound', { from: customer.replace('+', ''), phone_number_id: phoneNumberId, text });
  const at = async (flow: number, uid: string, state: string) => {
    for (let i = 0; i < 200; i++) {
      const s = (await api('GET', `/api/v3/flows/${flow}/sessions/${uid}`)).data;
      if (s.current_state === state || s.status === 'ended') return s;
      await sleep(200);
    }
    throw new Error(`session ${uid} never reached ${state}`);
  };
  const handle = (uid: string) => client.workflow.getHandle(flowSessionWorkflowId(account.id, uid));

  const long = await flowOf('Qualify', 3600);
  const c1 = '+255712000401';
  await say(c1, 'hello');
  const s1 = (await api('POST', `/api/v3/flows/${long}/sessions`, { to: c1, parameters: { name: 'Amina' } })).data;
  await at(long, s1.uid, 'ask');
  await sleep(500);
  await say(c1, 'maybe');
  await sleep(1500);
  await say(c1, 'sure');
  await save(TYPE, 'handed-over', handle(s1.uid));

  const c2 = '+255712000402';
  await say(c2, 'hello');
  const s2 = (await api('POST', `/api/v3/flows/${long}/sessions`, { to: c2 })).data;
  await at(long, s2.uid, 'ask');
  await sleep(500);
  // A second session for the same customer is refused before any workflow starts.
  const refused = await api('POST', `/api/v3/flows/${long}/sessions`, { to: c2 });
  if (refused.reason !== 'session_active') throw new Error(`expected session_active: ${JSON.stringify(refused)}`);
  await api('POST', `/api/v3/flows/${long}/sessions/${s2.uid}/end`, {});
  await save(TYPE, 'ended-by-business', handle(s2.uid));

  const short = await flowOf('Quick', 2);
  const c3 = '+255712000403';
  await say(c3, 'hello');
  const s3 = (await api('POST', `/api/v3/flows/${short}/sessions`, { to: c3 })).data;
  await save(TYPE, 'timed-out', handle(s3.uid));
});
