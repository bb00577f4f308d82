// Records the agent run workflow's histories for the replay test:
//   npx tsx scripts/record-agents.ts
// A stack of its own: a run with tool calls and an approval, a run cancelled while it waits for
// one, and a run that fails on the model's garbage. test/replay/histories/agentRunWorkflow/<scenario>.json.
// Re-record after a change to workflows/agents/.
import { agentRunWorkflowId } from '../workflows/agents/agent-run.starter.js';
import { withRecorder } from './recorder.js';

const TYPE = 'agentRunWorkflow';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

await withRecorder('svc-record-agents', {}, 'Agents recorder', async ({ client, account, admin, api, save }) => {
  await admin('PUT', `/accounts/${account.id}/agent-engine`, { engine_enabled: true, api_enabled: true });
  await admin('POST', `/accounts/${account.id}/agents`, {
    name: 'helper',
    instructions: 'You help the business with its account.',
    mcp_servers: ['account', 'contacts'],
  });
  const submit = async (prompt: string) => {
    const r = await api('POST', '/api/engine/agents/helper/runs', { prompt });
    if (!r.run_uuid) throw new Error(`no run: ${JSON.stringify(r)}`);
    return r.run_uuid as string;
  };
  const waiting = async (run: string) => {
    for (let i = 0; i < 200; i++) {
      const r = await api('GET', `/api/engine/runs/${run}`);
      if (r.status === 'requires_action') return r.pending_tool_call as { call_id: string };
      await sleep(200);
    }
    throw new Error(`run ${run} never waited for approval`);
  };
  const handle = (run: string) => client.workflow.getHandle(agentRunWorkflowId(account.id, run));

  const approved = await submit('CALL get_profile {}\nCALL create_contact_group {"name":"Recorded"}\nCALL get_balance {}\nANSWER done');
  const pending = await waiting(approved);
  await api('POST', `/api/engine/runs/${approved}/approval`, { call_id: pending.call_id, decision: 'approve' });
  await save(TYPE, 'tool-calls-and-approval', handle(approved));

  const denied = await submit('CALL create_contact_group {"name":"Denied"}\nANSWER after {{last}}');
  const p2 = await waiting(denied);
  await api('POST', `/api/engine/runs/${denied}/approval`, { call_id: p2.call_id, decision: 'deny', note: 'no' });
  await save(TYPE, 'denied', handle(denied));

  const cancelled = await submit('CALL get_profile {}\nCALL create_contact_group {"name":"Never"}\nANSWER never');
  await waiting(cancelled);
  await api('POST', `/api/engine/runs/${cancelled}/cancel`);
  await save(TYPE, 'cancelled-while-waiting', handle(cancelled));

  const garbage = await submit('CALL get_profile {}\nGARBAGE');
  await save(TYPE, 'model-garbage', handle(garbage));
});
