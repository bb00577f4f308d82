import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import type { Client } from '@temporalio/client';
import { openOrm } from '../../entities/orm.js';
import { one } from '../../entities/db.js';
import { loadConfig } from '../../config.js';
import { createLogger } from '../../logger.js';
import { connectTemporalClient } from '../../temporal/client.js';
import { messageWorkflowId } from '../../temporal/ids.js';
import { reconcileOnce } from '../../worker/reconciler.js';
import { newTenant, uniquePhone, eventually, api } from '../support/stack.js';

// Two workers' reconcilers meet on the same owed row: only one of them repairs it. The starts go to
// the real Temporal server through a client that counts them and lingers before each, so two passes
// that did not claim would both be inside their starts at the same time.
const config = loadConfig();
const orm = await openOrm(config.databaseUrl, 4);
const temporal = await connectTemporalClient(config.temporalAddress, config.temporalNamespace);
after(async () => {
  await temporal.close();
  await orm.close();
});
const log = createLogger('test', 'warn');

function countingClient(real: Client, starts: string[]): Client {
  const workflow = new Proxy(real.workflow, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver);
      if (typeof value !== 'function') return value;
      return async (...args: unknown[]) => {
        const opts = args[1] as { workflowId?: string; startWorkflowOperation?: { options: { workflowId: string } } } | undefined;
        const id = opts?.workflowId ?? opts?.startWorkflowOperation?.options.workflowId;
        if (id) starts.push(id);
        await new Promise((r) => setTimeout(r, 300));
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return new Proxy(real, { get: (target, prop, receiver) => (prop === 'workflow' ? workflow : Reflect.get(target, prop, receiver)) });
}

const owedMessage = async (accountId: number) =>
  (await one<{ id: string; uid: string }>(
    orm.em.fork(),
    `insert into messages (uid, account_id, direction, channel_type, recipient, body, status, dispatch_mode, workflow_pending, segments, encoding, created_at, updated_at)
     values (?, ?, 'outbound', 'sms', ?, 'owed a workflow', 'queued', 'workflow', true, 1, 'GSM-7', now() - interval '1 minute', now() - interval '1 minute')
     returning id, uid`,
    [`msg_owed_${Date.now()}_${Math.random().toString(36).slice(2, 8)}`, accountId, uniquePhone()],
  ))!;

test('two reconcilers passing at once: one claims the pass, the owed workflow is started once and runs', { timeout: 120_000 }, async () => {
  const t = await newTenant();
  // The suite's own worker reconciles every 15 s and may hold the claim at that moment: try again.
  for (let attempt = 1; ; attempt++) {
    const row = await owedMessage(t.accountId);
    const starts: string[] = [];
    const deps = { config, orm, log, temporal: countingClient(temporal.client, starts) };
    const ran = await Promise.all([reconcileOnce(deps), reconcileOnce(deps)]);
    const wanted = messageWorkflowId(t.accountId, row.uid);
    if (!ran.includes(true) && attempt < 5) continue;
    assert.deepEqual(ran.filter(Boolean), [true], 'exactly one of the two passes ran while both asked');
    assert.equal(starts.filter((id) => id === wanted).length, 1, `started once: ${JSON.stringify(starts)}`);
    const repeated = starts.filter((id, i) => starts.indexOf(id) !== i);
    assert.deepEqual(repeated, [], 'no workflow started twice by the two passes');
    // The repair was real: the message leaves the queue.
    const done = await eventually(
      () => api('GET', `/api/v3/sms/${row.uid}`, t.token),
      (r) => r.body.data?.status !== 'queued',
      60_000,
      500,
    );
    assert.ok(['sent', 'delivered', 'processing', 'checking_delivery'].includes(done.body.data.status), done.text);
    break;
  }
});

test('the claim ends with the pass: a later pass runs', { timeout: 60_000 }, async () => {
  const deps = { config, orm, log, temporal: temporal.client };
  const ran = await eventually(
    () => reconcileOnce(deps),
    (r) => r,
    30_000,
    200,
  );
  assert.equal(ran, true);
});
