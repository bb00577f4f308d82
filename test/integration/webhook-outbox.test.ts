import { test } from 'node:test';
import assert from 'node:assert/strict';
import { openOrm, migrate } from '../../entities/orm.js';
import { http, eventually, OPERATOR_TOKEN } from '../support/stack.js';
import { privateStack } from '../support/private-stack.js';
import { startReceiver } from '../support/receiver.js';
import { signTwilio } from '../../providers/sms-gateway/signature.js';
import { loadConfig } from '../../config.js';

// The shared stack's worker would relay every event of a shared database, so this test gets a
// database of its own: only the private worker it kills can deliver its events.
async function privateDatabase(): Promise<string> {
  const url = new URL(process.env.DATABASE_URL!);
  const name = `outbox_${process.pid}_${Date.now()}`;
  const orm = await openOrm(url.toString(), 1);
  await orm.em.fork().execute(`create database ${name}`);
  await orm.close();
  url.pathname = `/${name}`;
  const fresh = await openOrm(url.toString(), 1);
  await migrate(fresh);
  await fresh.close();
  return url.toString();
}

test('an event committed while no worker runs is delivered once the worker is back, exactly once', { timeout: 120_000 }, async () => {
  const receiver = await startReceiver();
  // Its own webhook queue too: the shared workers poll the default one and know nothing of this database.
  const stack = await privateStack({ DATABASE_URL: await privateDatabase(), WEBHOOK_TASK_QUEUE: `private-webhooks-${process.pid}` });
  try {
    const op = (method: string, path: string, body?: unknown) =>
      http(method, `${stack.apiUrl}/admin/v1${path}`, { token: OPERATOR_TOKEN, body });
    const account = (await op('POST', '/accounts', { name: 'Outbox' })).body.data;
    const number = '+255799000111';
    await op('POST', `/accounts/${account.id}/phone-numbers`, { number, capabilities: ['sms'] });
    await op('POST', `/accounts/${account.id}/webhook-endpoints`, { url: receiver.url, events: ['message.received'] });

    await stack.killWorker();
    // The provider ingress (in the API) stores the inbound message and its event in one commit.
    const url = `${stack.apiUrl}/providers/sms/inbound`;
    const params = { MessageSid: `SM${Date.now()}`, From: '+255711222333', To: number, Body: 'is the shop open?' };
    const posted = await http('POST', url, {
      raw: new URLSearchParams(params).toString(),
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        'x-twilio-signature': signTwilio(loadConfig().smsGatewayAuthToken, url, params),
      },
    });
    assert.equal(posted.status, 200);
    const events = await op('GET', `/accounts/${account.id}/events`);
    assert.equal(events.body.data.length, 1);
    assert.equal(events.body.data[0].event, 'message.received');
    assert.equal(events.body.data[0].dispatched_at, null, 'committed, not yet relayed');
    await new Promise((r) => setTimeout(r, 1500));
    assert.equal(receiver.got.length, 0, 'nothing is sent while no worker runs');

    stack.startWorker();
    await eventually(
      async () => receiver.got.length,
      (n) => n >= 1,
      60_000,
    );
    await new Promise((r) => setTimeout(r, 2000));
    assert.equal(receiver.got.length, 1, 'delivered exactly once');
    const hook = receiver.got[0].json;
    assert.deepEqual(
      [hook.event, hook.event_id, hook.body, hook.sender, hook.status],
      ['message.received', events.body.data[0].event_id, 'is the shop open?', '+255711222333', 'received'],
    );
    assert.equal(typeof hook.message_id, 'number');
  } finally {
    await stack.stop();
    await receiver.close();
  }
});
