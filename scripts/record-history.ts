// Records real histories of every workflow scenario for the replay test:
//   npm run record-history
// Starts a private stack (like `npm test`), runs each scenario through the public API, then writes
// test/replay/histories/<workflowType>/<scenario>.json with historyToJSON (payloads stay encoded).
import fs from 'node:fs';
import path from 'node:path';
import { Connection, Client } from '@temporalio/client';
import { historyToJSON } from '@temporalio/common/lib/proto-utils.js';
import { privateRunStack, projectRoot } from './stack.js';
import { messageWorkflowId, campaignWorkflowId } from '../temporal/ids.js';
import { recordWebhookScenarios } from './record-webhooks.js';
import { recordContactScenarios } from './record-contacts.js';

const operatorToken = 'record-operator-token';
const { stack, dataDir } = await privateRunStack('svc-record', {
  OPERATOR_TOKEN: operatorToken,
  LOG_LEVEL: 'warn',
  SIM_RECEIPT_DELAY_MS: '100',
  RECEIPT_TIMEOUT_SECONDS: '2',
  DELIVERY_POLL_SECONDS: '1',
  DELIVERY_POLL_ATTEMPTS: '2',
  CONTACT_IMPORT_BATCH_SIZE: '2',
  CAMPAIGN_PAGE_SIZE: '2',
});
const call = async (method: string, url: string, token: string, body?: unknown) => {
  const res = await fetch(url, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json' },
    body: body ? JSON.stringify(body) : undefined,
  });
  return res.json() as Promise<any>;
};
const adminCall = (method: string, p: string, body?: unknown) => call(method, `${stack.apiUrl}/admin/v1${p}`, operatorToken, body);
const simCall = (method: string, p: string, body?: unknown) => call(method, `${stack.simulatorUrl}${p}`, '', body);

const connection = await Connection.connect({ address: stack.temporalAddress });
const client = new Client({ connection });
try {
  const account = (await adminCall('POST', '/accounts', { name: 'Recorder' })).data;
  const key = (await adminCall('POST', `/accounts/${account.id}/keys`, { name: 'recorder' })).data.token;
  const save = async (type: string, scenario: string, workflowId: string, waitForEnd = true) => {
    const handle = client.workflow.getHandle(workflowId);
    if (waitForEnd) await handle.result().catch(() => {});
    const file = path.join(projectRoot, 'test/replay/histories', type, `${scenario}.json`);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, historyToJSON(await handle.fetchHistory()));
    process.stdout.write(`recorded ${path.relative(projectRoot, file)}\n`);
  };
  const sendSms = async (body: Record<string, unknown>) =>
    (await call('POST', `${stack.apiUrl}/api/v3/sms/send`, key, body)).data.messages[0];

  const delivered = await sendSms({ recipient: '+255711000001', message: 'delivered' });
  await save('messageWorkflow', 'delivered', messageWorkflowId(account.id, delivered.uid));

  const scheduled = await sendSms({
    recipient: '+255711000002',
    message: 'later',
    schedule_time: new Date(Date.now() + 3000).toISOString(),
  });
  await save('messageWorkflow', 'scheduled', messageWorkflowId(account.id, scheduled.uid));

  await simCall('POST', '/_sim/config', { optOuts: ['+255711000003'] });
  const refused = await sendSms({ recipient: '+255711000003', message: 'opted out' });
  await save('messageWorkflow', 'provider-refused', messageWorkflowId(account.id, refused.uid));

  await simCall('POST', '/_sim/faults', { provider: 'sms', kind: 'no_receipt', to: '+255711000004' });
  const silent = await sendSms({ recipient: '+255711000004', message: 'no receipt' });
  await save('messageWorkflow', 'no-receipt-polled', messageWorkflowId(account.id, silent.uid));

  await simCall('POST', '/_sim/faults', { provider: 'sms', kind: 'http_500', to: '+255711000005', count: 2 });
  const retried = await sendSms({ recipient: '+255711000005', message: 'retried' });
  await save('messageWorkflow', 'transient-retried', messageWorkflowId(account.id, retried.uid));

  // The automation reads and operations need a key with an issuer.
  const user = (
    await adminCall('POST', `/accounts/${account.id}/users`, { email: 'recorder@example.com', name: 'Recorder', permissions: ['*'] })
  ).data;
  const issued = (await adminCall('POST', `/accounts/${account.id}/keys`, { name: 'recorder issued', user_id: user.id })).data.token;
  await recordWebhookScenarios({
    client,
    accountId: account.id,
    key: issued,
    adminCall,
    save,
    sendSms,
    apiCall: (method, p, body) => call(method, `${stack.apiUrl}${p}`, issued, body),
  });
  await recordContactScenarios({
    client,
    accountId: account.id,
    save,
    apiCall: (method, p, body) => call(method, `${stack.apiUrl}${p}`, issued, body),
  });

  // A campaign over a small group (pages of two contacts, so it loops), sent by the batch dispatcher.
  await adminCall('PATCH', `/accounts/${account.id}`, { wallet_balance: 100 });
  const campaignGroup = (await call('POST', `${stack.apiUrl}/api/v3/contact-groups`, issued, { name: 'Recorded campaign' })).data;
  for (const [i, name] of ['Ann', 'Bob', 'Cy'].entries()) {
    await call('POST', `${stack.apiUrl}/api/v3/contacts/${campaignGroup.id}/store`, key, { PHONE: `+25571200010${i}`, name, city: 'Dar' });
  }
  const campaign = (
    await call('POST', `${stack.apiUrl}/api/v3/sms/campaign`, key, {
      contact_list_id: String(campaignGroup.id),
      message: 'Hi {{name}} of {{cf:city}}',
    })
  ).data.campaigns[0];
  for (let i = 0; i < 100; i++) {
    if ((await call('GET', `${stack.apiUrl}/api/v3/campaign/${campaign.uid}/view`, key)).data.status === 'completed') break;
    await new Promise((res) => setTimeout(res, 200));
  }
  await save('campaignWorkflow', 'completed', campaignWorkflowId(account.id, campaign.uid));

  // The same group with a wallet that covers one page: paused after it, topped up, resumed (the new
  // run starts from the cursor); the resumed run is recorded.
  const waitFor = async (uid: string, status: string) => {
    for (let i = 0; i < 100; i++) {
      if ((await call('GET', `${stack.apiUrl}/api/v3/campaign/${uid}/view`, key)).data.status === status) return;
      await new Promise((res) => setTimeout(res, 200));
    }
  };
  await adminCall('PATCH', `/accounts/${account.id}`, { wallet_balance: 0.02 });
  const broke = (
    await call('POST', `${stack.apiUrl}/api/v3/sms/campaign`, key, {
      contact_list_id: String(campaignGroup.id),
      message: 'Again, {{name}}',
    })
  ).data.campaigns[0];
  await waitFor(broke.uid, 'paused');
  await adminCall('PATCH', `/accounts/${account.id}`, { wallet_balance: 100 });
  await call('POST', `${stack.apiUrl}/api/v3/campaign/${broke.uid}/resume`, key, {});
  await waitFor(broke.uid, 'completed');
  await save('campaignWorkflow', 'resumed', campaignWorkflowId(account.id, broke.uid));

  // The batch dispatcher runs for good: an API that sends everything through it, a batch with one
  // transient failure (retried after a backoff), then its history so far.
  await stack.stopChild('api');
  await stack.startChild('api', { FIRST_OUTCOME_CONCURRENCY: '0' });
  await simCall('POST', '/_sim/faults', { provider: 'sms', kind: 'http_500', to: '+255711000013', count: 1 });
  const batch = (
    await call('POST', `${stack.apiUrl}/api/v3/sms/send`, key, {
      recipients: ['+255711000011', '+255711000012', '+255711000013'],
      message: 'batched',
    })
  ).data.messages;
  for (const m of batch) {
    for (let i = 0; i < 100; i++) {
      const r = await call('GET', `${stack.apiUrl}/api/v3/sms/${m.uid}`, key);
      if (r.data.status === 'delivered') break;
      await new Promise((res) => setTimeout(res, 200));
    }
  }
  await save('outboundDispatcherWorkflow', 'streaming-with-retry', 'outbound-dispatcher/sms', false);
} finally {
  await connection.close();
  await stack.stop();
  fs.rmSync(dataDir, { recursive: true, force: true });
}
