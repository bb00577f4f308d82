import { Connection, Client } from '@temporalio/client';
import { admin, api, eventually, type Tenant } from './stack.js';
import { startReceiver } from './receiver.js';
import { loadConfig } from '../../config.js';
import type { WebhookDeliveryInput, WebhookDeliveryResult } from '../../workflows/webhooks/webhook-delivery.js';

// Helpers for webhook tests: endpoints through the operator API, and delivery workflows started
// directly with a short retry schedule (the schedule is part of the workflow input for this).
export async function createEndpoint(accountId: number, url: string, events: string[] = ['*']) {
  const r = await admin('POST', `/accounts/${accountId}/webhook-endpoints`, { url, events });
  if (r.status !== 201) throw new Error(`endpoint create failed: ${r.text}`);
  return r.body.data as { id: number; secret: string; url: string };
}

/**
 * Sends one SMS and waits until its message.delivered event is in the outbox; returns that event.
 * A delivery-progress event is stored only when an endpoint hears it, so unless the account already
 * listens (`listening`), an endpoint of the helper's own hears this one and is deleted once it has.
 */
export async function deliveredEvent(t: Tenant, recipient: string, opts: { listening?: boolean } = {}) {
  const own = opts.listening ? null : await startReceiver();
  const endpoint = own ? await createEndpoint(t.accountId, own.url, ['message.delivered']) : null;
  try {
    const sent = await api('POST', '/api/v3/sms/send', t.token, { recipient, message: 'hook me' });
    const m = sent.body.data.messages[0];
    const found = await eventually(
      () => admin('GET', `/accounts/${t.accountId}/events?kind=message.delivered`),
      (r) => r.body.data.some((e: any) => e.uid === m.uid),
      30_000,
      200,
      `the message.delivered event of ${m.uid}`,
    );
    const event = found.body.data.find((e: any) => e.uid === m.uid);
    // Heard before the endpoint goes, so no delivery of it is left in flight for the test to meet.
    if (own) await own.waitFor((got) => got.find((g) => g.json?.event_id === event.event_id), `the delivery of ${event.event_id}`);
    return { message: m, event };
  } finally {
    if (endpoint) await admin('DELETE', `/accounts/${t.accountId}/webhook-endpoints/${endpoint.id}`);
    await own?.close();
  }
}

let client: Client | null = null;
export async function temporal(): Promise<Client> {
  client ??= new Client({ connection: await Connection.connect({ address: process.env.TEMPORAL_ADDRESS ?? '127.0.0.1:7233' }) });
  return client;
}
export const closeTemporal = async () => {
  await client?.connection.close();
  client = null;
};

let n = 0;
export async function runDelivery(input: WebhookDeliveryInput): Promise<WebhookDeliveryResult> {
  const c = await temporal();
  return c.workflow.execute('webhookDeliveryWorkflow', {
    taskQueue: loadConfig().webhookTaskQueue,
    workflowId: `test-delivery/${process.pid}/${Date.now()}/${++n}`,
    args: [input],
  });
}
