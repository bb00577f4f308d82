import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { WorkflowBundle } from '@temporalio/worker';
import type { FlowActivities } from '../../../activities/flows/flow-session.js';
import {
  endUpdate,
  flowSessionQuery,
  replySignal,
  type flowSessionWorkflow,
  type FlowSessionInput,
  type FlowSessionState,
} from '../../../workflows/flows/flow-session.js';
import type { FlowDefinition } from '../../../domain/flows/index.js';
import { timeSkippingEnv, untilQueried, withQueueWorker } from '../../support/workflow-env.js';

// The flow session on the time-skipping server: a wait for a reply of an hour passes in moments.
// The activity doubles record what the session asked for (messages, steps, its end).
let env: TestWorkflowEnvironment;
let bundle: WorkflowBundle;

before(async () => {
  ({ env, bundle } = await timeSkippingEnv('index.ts'));
});
after(async () => {
  await env?.teardown();
});

const HOUR = 3600;

const definition = (timeoutTransition: boolean): FlowDefinition => ({
  initial_state: 'ask',
  states: [
    {
      name: 'ask',
      type: 'wait_for_reply',
      properties: { body: 'Hi {{flow.data.name}}, reply YES or NO', timeout_seconds: HOUR },
      transitions: [{ event: 'reply', next: 'route' }, ...(timeoutTransition ? [{ event: 'timeout', next: 'bye' }] : [])],
    },
    {
      name: 'route',
      type: 'split',
      properties: { cases: [{ event: 'yes', match: 'any_of', value: ['yes', 'y'] }] },
      transitions: [{ event: 'yes', next: 'thanks' }],
    },
    { name: 'thanks', type: 'send_message', properties: { body: 'Thanks, {{widgets.ask.body}} noted' }, transitions: [] },
    ...(timeoutTransition ? [{ name: 'bye', type: 'send_message' as const, properties: { body: 'Bye' }, transitions: [] }] : []),
  ],
});

function doubles() {
  const sent: { seq: number; body: string | null }[] = [];
  const steps: { state: string; event: string | null; next: string | null }[] = [];
  const ends: { reason: string; error: string | null; at: number }[] = [];
  const activities: Partial<FlowActivities> = {
    async openFlowSession(a) {
      return {
        ok: true,
        session: {
          uid: a.sessionUid,
          account_id: a.accountId,
          flow_id: a.flowId,
          revision: a.revision,
          customer: a.customer,
          live_key: a.customer,
          status: 'active',
          end_reason: null,
          current_state: a.initialState,
          parameters: a.parameters,
          error: null,
          ended_at: null,
          created_at: '2026-11-28T00:00:00Z',
          updated_at: '2026-11-28T00:00:00Z',
        },
      };
    },
    async sendFlowMessage(a) {
      sent.push({ seq: a.seq, body: a.body });
      return { ok: true, message_uid: `msg_${a.seq}`, status: 'queued' };
    },
    async recordFlowStep(s) {
      steps.push({ state: s.state, event: s.event, next: s.next });
    },
    async closeFlowSession(a) {
      ends.push({ reason: a.reason, error: a.error, at: await env.currentTimeMs() });
    },
  };
  return { sent, steps, ends, activities };
}

const input = (timeoutTransition: boolean): FlowSessionInput => ({
  accountId: 1,
  sessionUid: `FN${Math.random().toString(16).slice(2).padEnd(32, '0').slice(0, 32)}`,
  flowId: 3,
  revision: 2,
  customer: '+255700000001',
  definition: definition(timeoutTransition),
  parameters: { name: 'Amina' },
});

const start = (taskQueue: string, i: FlowSessionInput) =>
  env.client.workflow.start<typeof flowSessionWorkflow>('flowSessionWorkflow', {
    taskQueue,
    workflowId: `flow-session-${Math.random()}`,
    args: [i],
  });

test('no reply within the wait: the timeout transition is taken after the hour, not before', { timeout: 60_000 }, async () => {
  const d = doubles();
  let begun = 0;
  const state = await withQueueWorker(env, bundle, 'flow-session', d.activities, async (q) => {
    begun = await env.currentTimeMs();
    const h = await start(q, input(true));
    return h.result();
  });
  assert.equal(state.status, 'ended');
  assert.equal(state.end_reason, 'completed');
  assert.deepEqual(
    d.sent.map((s) => s.body),
    ['Hi Amina, reply YES or NO', 'Bye'],
  );
  assert.deepEqual(d.steps, [
    { state: 'ask', event: 'timeout', next: 'bye' },
    { state: 'bye', event: 'sent', next: null },
  ]);
  const after = (d.ends[0].at - begun) / 1000 / HOUR;
  assert.ok(after >= 1 && after < 1.1, `ended after ${after} h`);
});

test('no reply and no timeout transition: the session ends timed_out', { timeout: 60_000 }, async () => {
  const d = doubles();
  const state = await withQueueWorker(env, bundle, 'flow-session', d.activities, async (q) => (await start(q, input(false))).result());
  assert.equal(state.end_reason, 'timed_out');
  assert.deepEqual(
    d.ends.map((e) => e.reason),
    ['timed_out'],
  );
});

test('a reply before the timeout: the split reads it and the timer is dropped', { timeout: 60_000 }, async () => {
  const d = doubles();
  const state = await withQueueWorker(env, bundle, 'flow-session', d.activities, async (q) => {
    const h = await start(q, input(true));
    await untilQueried<FlowSessionState>(h, flowSessionQuery, (s) => s.waiting_until !== null);
    await h.signal(replySignal, { messageUid: 'msg_in', body: ' Yes ' });
    return h.result();
  });
  assert.equal(state.end_reason, 'completed');
  assert.deepEqual(
    d.steps.map((s) => [s.state, s.event]),
    [
      ['ask', 'reply'],
      ['route', 'yes'],
      ['thanks', 'sent'],
    ],
  );
  assert.equal(d.sent[1].body, 'Thanks,  Yes  noted');
});

test('ended by the business during the wait: stops at once, the pending wait cancelled', { timeout: 60_000 }, async () => {
  const d = doubles();
  let asked = 0;
  const state = await withQueueWorker(env, bundle, 'flow-session', d.activities, async (q) => {
    const h = await start(q, input(true));
    await untilQueried<FlowSessionState>(h, flowSessionQuery, (s) => s.waiting_until !== null);
    asked = await env.currentTimeMs();
    const ended = await h.executeUpdate(endUpdate);
    assert.equal(ended.status, 'ended');
    return h.result();
  });
  assert.equal(state.end_reason, 'ended');
  assert.deepEqual(
    d.ends.map((e) => e.reason),
    ['ended'],
  );
  assert.deepEqual(d.steps, []);
  assert.ok(d.ends[0].at - asked < HOUR * 1000, 'ended before the wait would have timed out');
  assert.equal(d.sent.length, 1);
});
