import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { Connection, Client } from '@temporalio/client';
import { api, newTenant, eventually, sim } from '../support/stack.js';
import { messageWorkflowId } from '../../temporal/ids.js';
import { AccountId, ResourceId } from '../../temporal/search-attributes.js';

const connection = await Connection.connect({ address: process.env.TEMPORAL_ADDRESS! });
const temporal = new Client({ connection });
after(() => connection.close());

test('one SMS travels end to end: record, workflow, gateway, signed receipt, delivered', async () => {
  const t = await newTenant();
  const to = `+2557${String(Date.now()).slice(-8)}`;
  const sent = await api('POST', '/api/v3/sms/send', t.token, { recipient: to, message: 'Hello from the end-to-end test' });
  assert.equal(sent.status, 201);
  assert.equal(sent.body.status, 'success');
  const [msg] = sent.body.data.messages;
  assert.equal(msg.recipient, to);
  assert.equal(msg.direction, 'outbound');
  assert.equal(msg.channel_type, 'sms');
  assert.ok(['queued', 'processing', 'sent', 'delivered'].includes(msg.status), msg.status);
  assert.equal(typeof msg.id, 'number');

  const handle = temporal.workflow.getHandle(messageWorkflowId(t.accountId, msg.uid));
  const desc = await handle.describe();
  assert.equal(desc.type, 'messageWorkflow');
  assert.deepEqual(desc.typedSearchAttributes.get(AccountId), String(t.accountId));
  assert.deepEqual(desc.typedSearchAttributes.get(ResourceId), msg.uid);

  const delivered = await eventually(
    () => api('GET', `/api/v3/sms/${msg.uid}`, t.token),
    (r) => r.body.data?.status === 'delivered',
  );
  assert.equal(delivered.body.data.status, 'delivered');
  assert.match(delivered.body.data.gateway_message_id, /^SM[0-9a-f]{32}$/);
  assert.ok(delivered.body.data.sent_at);
  assert.ok(delivered.body.data.delivered_at);
  assert.equal(delivered.body.data.error_message, null);

  const byId = await api('GET', `/api/v3/sms/${msg.id}`, t.token);
  assert.equal(byId.body.data.uid, msg.uid);

  const seen = await sim('GET', `/_sim/sms/messages?to=${encodeURIComponent(to)}`);
  assert.equal(seen.body.messages.length, 1, 'the gateway received the message exactly once');

  const result = await handle.result();
  assert.equal(result.status, 'delivered');
});

test('a missing or foreign message is 404', async () => {
  const t = await newTenant();
  assert.equal((await api('GET', '/api/v3/sms/msg_doesnotexist', t.token)).status, 404);
  assert.equal((await api('GET', '/api/v3/sms/999999999', t.token)).status, 404);
});
