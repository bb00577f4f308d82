// Records the batch dispatcher's history with several runs per channel (DISPATCH_RUNS=2, their
// streaming activities on the dispatch task queue) for the replay test:
//   npx tsx scripts/record-dispatch-runs.ts
// writes test/replay/histories/outboundDispatcherWorkflow/runs-run0.json and runs-run1.json. The
// dispatchers run for good, so the histories are taken while they run, once a batch with one
// transient failure went out.
import fs from 'node:fs';
import path from 'node:path';
import { historyToJSON } from '@temporalio/common/lib/proto-utils.js';
import { projectRoot } from './stack.js';
import { withRecorder } from './recorder.js';
import { dispatcherWorkflowId } from '../workflows/messaging/outbound-dispatcher.starter.js';

await withRecorder(
  'svc-record-dispatch',
  { DISPATCH_RUNS: '2', FIRST_OUTCOME_CONCURRENCY: '0', SIM_RECEIPT_DELAY_MS: '100' },
  'Dispatch recorder',
  async ({ client, api, sim }) => {
    await sim('POST', '/_sim/faults', { provider: 'sms', kind: 'http_500', to: '+255711000023', count: 1 });
    const sent = await api('POST', '/api/v3/sms/send', {
      recipients: ['+255711000021', '+255711000022', '+255711000023'],
      message: 'batched over two runs',
    });
    const messages = sent.data.messages as Array<{ uid: string }>;
    for (const m of messages) {
      for (let i = 0; ; i++) {
        const r = await api('GET', `/api/v3/sms/${m.uid}`);
        if (r.data.status === 'delivered') break;
        if (i > 300) throw new Error(`message ${m.uid} not delivered: ${JSON.stringify(r.data)}`);
        await new Promise((res) => setTimeout(res, 200));
      }
    }
    for (const run of [0, 1]) {
      const handle = client.workflow.getHandle(dispatcherWorkflowId('sms', run));
      const file = path.join(projectRoot, 'test/replay/histories/outboundDispatcherWorkflow', `runs-run${run}.json`);
      fs.writeFileSync(file, historyToJSON(await handle.fetchHistory()));
      process.stdout.write(`recorded ${path.relative(projectRoot, file)}\n`);
    }
  },
);
