// Webhook, automation and operation scenarios for `npm run record-history` (called by record-history.ts);
// the batch dispatcher's scenarios on their own: `npx tsx scripts/record-webhooks.ts dispatch`.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Client } from '@temporalio/client';
import { historyToJSON } from '@temporalio/common/lib/proto-utils.js';
import { withRecorder, type Recorder } from './recorder.js';
import { projectRoot } from './stack.js';
import { webhookDeliveryWorkflowId, operationRunWorkflowId } from '../temporal/ids.js';

interface Ctx {
  client: Client;
  accountId: number;
  key: string;
  adminCall: (method: string, p: string, body?: unknown) => Promise<any>;
  apiCall: (method: string, p: string, body?: unknown) => Promise<any>;
  sendSms: (body: Record<string, unknown>) => Promise<any>;
  save: (type: string, scenario: string, workflowId: string) => Promise<void>;
}

/** A receiver answering each request with the next status of `plan` (the last repeats). */
async function receiver(plan: number[]) {
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(plan.length > 1 ? plan.shift()! : plan[0]);
      res.end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

const until = async <T>(fn: () => Promise<T>, ok: (v: T) => boolean) => {
  for (let i = 0; i < 200; i++) {
    const v = await fn();
    if (ok(v)) return v;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error('scenario did not settle');
};

export async function recordWebhookScenarios(c: Ctx) {
  const ok = await receiver([200]);
  const flaky = await receiver([500, 200]);
  const down = await receiver([500]);
  try {
    const ep = (await c.adminCall('POST', `/accounts/${c.accountId}/webhook-endpoints`, { url: ok.url, events: ['message.delivered'] }))
      .data;
    const m = await c.sendSms({ recipient: '+255711000009', message: 'hooked' });
    const ev = (
      await until(
        () => c.adminCall('GET', `/accounts/${c.accountId}/events?kind=message.delivered`),
        (r) => r.data.some((e: any) => e.uid === m.uid),
      )
    ).data.find((e: any) => e.uid === m.uid);
    // The relay's first attempts go out from the batch dispatcher (no workflow per delivery), so
    // the plain delivery path is recorded from a direct start.
    const relayed = `record/delivered/${webhookDeliveryWorkflowId(c.accountId, ev.event_id, ep.id)}`;
    await c.client.workflow.start('webhookDeliveryWorkflow', {
      taskQueue: 'svc-webhooks',
      workflowId: relayed,
      args: [{ accountId: c.accountId, eventId: ev.event_id, target: { type: 'endpoint', id: ep.id } }],
    });
    await c.save('webhookDeliveryWorkflow', 'delivered', relayed);

    const direct = async (scenario: string, url: string, delays: number[]) => {
      const target = (await c.adminCall('POST', `/accounts/${c.accountId}/webhook-endpoints`, { url, events: ['order.paid'] })).data;
      const id = `record/${scenario}`;
      await c.client.workflow.start('webhookDeliveryWorkflow', {
        taskQueue: 'svc-webhooks',
        workflowId: id,
        args: [{ accountId: c.accountId, eventId: ev.event_id, target: { type: 'endpoint', id: target.id }, retryDelaysSeconds: delays }],
      });
      await c.save('webhookDeliveryWorkflow', scenario, id);
    };
    await direct('retried-then-delivered', flaky.url, [1, 1]);
    await direct('retries-exhausted', down.url, [1, 1]);

    await c.adminCall('POST', `/accounts/${c.accountId}/automation-subscriptions`, { event_type: 'order.*', target_url: ok.url });
    await c.adminCall('POST', `/accounts/${c.accountId}/operations`, {
      name: 'order-in',
      kind: 'emit_business_event',
      config: { type: 'order.received' },
    });
    const run = (await c.apiCall('POST', '/api/v3/operations/order-in/run', { input: { data: { order_id: 1 } } })).data;
    await c.save('operationRunWorkflow', 'emit-business-event', operationRunWorkflowId(c.accountId, run.run_id));
    const be = (
      await until(
        () => c.apiCall('GET', '/api/v3/automations/events?type=order.received'),
        (r) => r.data.events.length === 1,
      )
    ).data.events[0];
    const subs = (await c.apiCall('GET', '/api/v3/automations/subscriptions')).data.subscriptions;
    const callback = `automation/${c.accountId}/${be.id}/${subs[0].id}`;
    await until(
      () =>
        c.client.workflow
          .getHandle(callback)
          .describe()
          .then(
            () => true,
            () => false,
          ),
      Boolean,
    );
    await c.save('webhookDeliveryWorkflow', 'automation-callback', callback);

    await c.adminCall('POST', `/accounts/${c.accountId}/operations`, {
      name: 'otp',
      kind: 'send_sms',
      config: { message: 'Code {{code}}' },
    });
    const sms = (await c.apiCall('POST', '/api/v3/operations/otp/run', { input: { to: '+255711000010', vars: { code: '42' } } })).data;
    await c.save('operationRunWorkflow', 'send-sms', operationRunWorkflowId(c.accountId, sms.run_id));
    await c.client.workflow.start('operationRunWorkflow', {
      taskQueue: 'svc-main',
      workflowId: 'record/unknown-operation',
      args: [{ accountId: c.accountId, operationName: 'missing', input: {}, source: 'record' }],
    });
    await c.save('operationRunWorkflow', 'unknown-operation', 'record/unknown-operation');
  } finally {
    await Promise.all([ok.close(), flaky.close(), down.close()]);
  }
}

/**
 * The batch path's histories, on a stack of their own (record-history.ts does not run these):
 *   npx tsx scripts/record-webhooks.ts dispatch
 * webhookDeliveryWorkflow/handed-over-then-delivered (a failed first attempt of the dispatcher, then
 * the schedule) and webhookDispatcherWorkflow/continued-as-new (two activity runs, then continue-as-new).
 */
export async function recordWebhookDispatchScenarios(r: Recorder) {
  const flaky = await receiver([200]);
  try {
    const ep = (await r.admin('POST', `/accounts/${r.account.id}/webhook-endpoints`, { url: flaky.url, events: ['message.delivered'] }))
      .data;
    const m = (await r.api('POST', '/api/v3/sms/send', { recipient: '+255711000019', message: 'hooked' })).data.messages[0];
    const ev = (
      await until(
        () => r.admin('GET', `/accounts/${r.account.id}/events?kind=message.delivered`),
        (x) => x.data.some((e: any) => e.uid === m.uid),
      )
    ).data.find((e: any) => e.uid === m.uid);
    // What the dispatcher hands over after a 500; a short schedule instead of the contract's minute.
    const firstAttempt = {
      outcome: 'failed',
      attemptedAt: new Date().toISOString(),
      statusCode: 500,
      latencyMs: 3,
      error: 'HTTP 500',
      responseExcerpt: 'refused with 500',
    };
    const handedOver = await r.client.workflow.start('webhookDeliveryWorkflow', {
      taskQueue: 'svc-webhooks',
      workflowId: 'record/handed-over-then-delivered',
      args: [
        {
          accountId: r.account.id,
          eventId: ev.event_id,
          target: { type: 'endpoint', id: ep.id },
          retryDelaysSeconds: [1, 1],
          firstAttempt,
        },
      ],
    });
    await r.save('webhookDeliveryWorkflow', 'handed-over-then-delivered', handedOver);

    const dispatcher = await r.client.workflow.start('webhookDispatcherWorkflow', {
      taskQueue: 'svc-webhooks',
      workflowId: 'record/webhook-dispatcher',
      args: [{ sliceSize: 50, concurrency: 4, leaseSeconds: 60, idleWaitMs: 500, runsPerExecution: 2 }],
    });
    const first = r.client.workflow.getHandle(dispatcher.workflowId, dispatcher.firstExecutionRunId);
    await until(
      () => first.describe(),
      (d) => d.status.name === 'CONTINUED_AS_NEW',
    );
    const file = path.join(projectRoot, 'test/replay/histories/webhookDispatcherWorkflow/continued-as-new.json');
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, historyToJSON(await first.fetchHistory()));
    process.stdout.write(`recorded ${path.relative(projectRoot, file)}\n`);
    await dispatcher.terminate('recorded');
  } finally {
    await flaky.close();
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  if (process.argv[2] !== 'dispatch') throw new Error('usage: npx tsx scripts/record-webhooks.ts dispatch');
  await withRecorder('svc-record-webhooks', { ALLOW_LOOPBACK_DESTINATIONS: 'true' }, 'Webhook recorder', recordWebhookDispatchScenarios);
}
