import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { WorkflowNotFoundError } from '@temporalio/client';
import { openOrm } from '../../entities/orm.js';
import { exec, many, one } from '../../entities/db.js';
import { admin, newTenant, eventually } from '../support/stack.js';
import { receiversOfThisFile } from '../support/receiver.js';
import { createEndpoint, temporal, closeTemporal } from '../support/webhooks.js';
import { webhookDeliveryWorkflowId } from '../../temporal/ids.js';
import { COMMUNICATION_RETRY_SECONDS } from '../../domain/webhooks/retry.js';

// First attempts of endpoint deliveries go out in batches from the webhook dispatcher (leased
// claims); only a failed first attempt gets a durable retry workflow. Events are committed straight
// into the outbox here, as a burst of changes would leave them; the shared worker relays them.
const orm = await openOrm(process.env.DATABASE_URL!, 2);
const receiver = receiversOfThisFile();
after(async () => {
  await closeTemporal();
  await orm.close();
});

/** `count` committed order.paid events of the account, undispatched (the relay's to pick up); their ids. */
async function commitEvents(accountId: number, count: number, dispatched = false): Promise<string[]> {
  const prefix = `evt_t${process.pid}_${Date.now()}_`;
  await exec(
    orm.em.fork(),
    `insert into events (event_id, account_id, kind, payload, occurred_at, dispatched_at)
     select ? || g, ?, 'order.paid', jsonb_build_object('event_id', ? || g, 'event', 'order.paid', 'occurred_at', now(), 'account_id', ?::int, 'order_id', g), now(),
            ${dispatched ? 'now()' : 'null'}
       from generate_series(1, ?) g`,
    [prefix, accountId, prefix, accountId, count],
  );
  return Array.from({ length: count }, (_, i) => `${prefix}${i + 1}`);
}

const workflowExists = async (id: string) =>
  (await temporal()).workflow
    .getHandle(id)
    .describe()
    .then(
      () => true,
      (err) => {
        if (err instanceof WorkflowNotFoundError) return false;
        throw err;
      },
    );

test(
  'a batch of first attempts reaches the receiver exactly once each, signed V1 and V2, logged, with no workflow per delivery',
  { timeout: 90_000 },
  async () => {
    const t = await newTenant();
    const r = await receiver();
    const ep = await createEndpoint(t.accountId, r.url, ['order.*']);
    const ids = await commitEvents(t.accountId, 300);
    await eventually(
      async () => r.got.length,
      (n) => n >= ids.length,
      60_000,
    );
    await new Promise((res) => setTimeout(res, 1500)); // a duplicate would arrive now
    const byId = new Map<string, number>();
    for (const g of r.got) byId.set(String(g.headers['webhook-id']), (byId.get(String(g.headers['webhook-id'])) ?? 0) + 1);
    assert.deepEqual([...byId.keys()].sort(), [...ids].sort(), 'every event, and only these');
    assert.ok(
      [...byId.values()].every((n) => n === 1),
      'each exactly once',
    );
    const wh = new Webhook(ep.secret);
    for (const g of r.got) {
      assert.equal(g.headers['x-signature'], crypto.createHmac('sha256', ep.secret).update(g.body).digest('hex'));
      assert.deepEqual(wh.verify(g.body, g.headers as Record<string, string>), g.json);
      assert.equal(g.json.event_id, g.headers['webhook-id']);
      assert.deepEqual(Object.keys(g.json).slice(0, 3), ['event_id', 'event', 'occurred_at']);
    }
    const log = await eventually(
      () =>
        many<{ status: string; attempts: number; logged: string; code: number }>(
          orm.em.fork(),
          `select d.status, d.attempts, count(a.id) as logged, max(a.status_code) as code
             from webhook_deliveries d left join delivery_attempts a on a.delivery_id = d.id
            where d.account_id = ? and d.target_id = ? group by d.id`,
          [t.accountId, ep.id],
        ),
      (rows) => rows.length === ids.length && rows.every((x) => x.status === 'succeeded'),
    );
    assert.ok(log.every((x) => x.attempts === 1 && Number(x.logged) === 1 && x.code === 200));
    // The delivery keeps its readable id; a workflow under it exists only once an attempt failed.
    assert.equal(await workflowExists(webhookDeliveryWorkflowId(t.accountId, ids[0], ep.id)), false);
    const api = await admin('GET', `/accounts/${t.accountId}/webhook-deliveries?event_id=${ids[0]}`);
    assert.deepEqual([api.body.data[0].status, api.body.data[0].attempt_log[0].status_code], ['succeeded', 200]);
  },
);

test(
  'a failed first attempt hands over to the durable retry workflow: logged as attempt 1, next attempt after 1 minute, same webhook-id',
  { timeout: 60_000 },
  async () => {
    const t = await newTenant();
    const r = await receiver([500]);
    const ep = await createEndpoint(t.accountId, r.url, ['order.paid']);
    const [id] = await commitEvents(t.accountId, 1);
    const workflowId = webhookDeliveryWorkflowId(t.accountId, id, ep.id);
    await eventually(() => workflowExists(workflowId), Boolean, 30_000);
    const handle = (await temporal()).workflow.getHandle(workflowId);
    try {
      const timer = await eventually(async () => (await handle.fetchHistory()).events?.find((e) => e.timerStartedEventAttributes), Boolean);
      const seconds = Number(timer!.timerStartedEventAttributes!.startToFireTimeout!.seconds);
      assert.equal(seconds, COMMUNICATION_RETRY_SECONDS[0], 'the contract schedule, from its first delay');
      assert.deepEqual(COMMUNICATION_RETRY_SECONDS, [60, 300, 1800, 7200, 21600]);
      const log = await eventually(
        () => admin('GET', `/accounts/${t.accountId}/webhook-deliveries?endpoint_id=${ep.id}`),
        (x) => x.body.data[0]?.attempt_log?.length === 1,
      );
      assert.equal(log.body.data[0].status, 'pending');
      assert.deepEqual(
        log.body.data[0].attempt_log.map((a: any) => [a.attempt, a.status_code, a.error]),
        [[1, 500, 'HTTP 500']],
      );
      assert.equal(r.got.length, 1, 'one first attempt, not one from the dispatcher and another from the workflow');
      assert.equal(r.got[0].headers['webhook-id'], id);
      const ep2 = (await admin('GET', `/accounts/${t.accountId}/webhook-endpoints/${ep.id}`)).body.data;
      assert.ok(ep2.failing_since, 'the failure counts against the endpoint');
      assert.equal(ep2.consecutive_failures, 0, 'a delivery counts once it has exhausted its retries');
    } finally {
      await handle.terminate('test done').catch(() => undefined);
    }
  },
);

test(
  'a claim whose worker died before the POST is delivered once its lease runs out, exactly once by webhook-id',
  { timeout: 60_000 },
  async () => {
    const t = await newTenant();
    const r = await receiver();
    const ep = await createEndpoint(t.accountId, r.url, ['order.paid']);
    // What a worker that claimed and died leaves behind: a queued delivery, leased for 4 more seconds.
    const [id] = await commitEvents(t.accountId, 1, true);
    const workflowId = webhookDeliveryWorkflowId(t.accountId, id, ep.id);
    const leased = await one<{ until: Date }>(
      orm.em.fork(),
      `insert into webhook_deliveries (account_id, workflow_id, event_id, target_type, target_id, status, attempts, created_at, updated_at, claimed_until)
       values (?, ?, ?, 'endpoint', ?, 'pending', 0, now(), now(), now() + interval '4 seconds') returning claimed_until as until`,
      [t.accountId, workflowId, id, ep.id],
    );
    await new Promise((res) => setTimeout(res, 2500));
    assert.equal(r.got.length, 0, 'nobody sends a claim still leased');
    await eventually(
      async () => r.got.length,
      (n) => n >= 1,
      30_000,
    );
    assert.ok(r.got[0].at >= new Date(leased!.until).getTime() - 50, 'sent only after the lease ran out');
    await new Promise((res) => setTimeout(res, 2000));
    assert.deepEqual(
      r.got.map((g) => g.headers['webhook-id']),
      [id],
    );
    const row = await eventually(
      () =>
        one<{ status: string; attempts: number }>(orm.em.fork(), 'select status, attempts from webhook_deliveries where workflow_id = ?', [
          workflowId,
        ]),
      (x) => x?.status === 'succeeded',
    );
    assert.equal(row!.attempts, 1);
  },
);
