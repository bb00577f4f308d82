import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { WorkflowBundle } from '@temporalio/worker';
import { Context } from '@temporalio/activity';
import type { FormSessionActivities } from '../../../activities/forms/form-session.js';
import type { formSessionWorkflow, FormSessionInput, FormSessionState, ReplyOutcome } from '../../../workflows/forms/form-session.js';
import { timeSkippingEnv, withQueueWorker } from '../../support/workflow-env.js';

// A form session's timers on the time-skipping server: the one reminder after remind_after quiet,
// the expiry after expire_after; a reply starts the quiet period again; a re-ask and a submission;
// a cancel stops the wait at once.
let env: TestWorkflowEnvironment;
let bundle: WorkflowBundle;

before(async () => {
  ({ env, bundle } = await timeSkippingEnv('forms/form-session.ts'));
});
after(async () => {
  await env?.teardown();
});

const REMIND = 3600;
const EXPIRE = 4 * 3600;
const input: FormSessionInput = { accountId: 7, sessionUid: 'fss_test', remindAfterSeconds: REMIND, expireAfterSeconds: EXPIRE };

/** Activity doubles: each call recorded with its (server) time; replies answered by `outcomes` in turn. */
function doubles(outcomes: ReplyOutcome[] = []) {
  const calls: Array<{ step: string; at: number }> = [];
  const at = () => Context.current().info.scheduledTimestampMs;
  const activities: FormSessionActivities = {
    async sendFormPrompt(i) {
      calls.push({ step: i.prompt.kind === 'question' ? `ask:${i.prompt.key}` : i.prompt.kind, at: at() });
      return { sent: true };
    },
    async takeFormReply(i) {
      calls.push({ step: `reply:${i.reply.text}`, at: at() });
      return outcomes.shift() ?? { outcome: 'ignored' };
    },
    async expireFormSession(i) {
      calls.push({ step: `expire:${i.reason}`, at: at() });
      return { expired: true, status: 'expired' };
    },
  };
  return { activities, calls };
}

const start = (taskQueue: string) =>
  env.client.workflow.start<typeof formSessionWorkflow>('formSessionWorkflow', {
    taskQueue,
    workflowId: `form-session-${Math.random()}`,
    args: [input],
  });

test('nobody answers: asked, reminded once after remind_after, expired at expire_after (no_reply)', { timeout: 60_000 }, async () => {
  const d = doubles();
  const state = await withQueueWorker(env, bundle, 'form', d.activities, async (q) => (await start(q)).result());
  assert.equal(state.phase, 'expired');
  assert.equal(state.reminded, true);
  assert.deepEqual(
    d.calls.map((c) => c.step),
    ['open', 'remind', 'expire:no_reply'],
  );
  const secs = (i: number) => (d.calls[i].at - d.calls[0].at) / 1000;
  assert.ok(Math.abs(secs(1) - REMIND) < 5, `reminded ${secs(1)}s after the ask`);
  assert.ok(Math.abs(secs(2) - EXPIRE) < 5, `expired ${secs(2)}s after the ask`);
});

test(
  'a reply starts the quiet period again; an answer that does not fit is asked again; every answer in: submitted, thanks sent',
  { timeout: 60_000 },
  async () => {
    const d = doubles([
      { outcome: 'ask', key: 'age', problem: 'Please answer with a number.', attempt: 1 },
      { outcome: 'submitted', thanks: true },
    ]);
    const state = await withQueueWorker(env, bundle, 'form', d.activities, async (q) => {
      const h = await start(q);
      await env.sleep(REMIND * 800);
      await h.signal('reply', { uid: 'msg_1', text: 'old', fields: null });
      // Quiet again for most of remind_after: no reminder yet (the period started at the reply).
      await env.sleep(REMIND * 800);
      assert.deepEqual(
        d.calls.map((c) => c.step),
        ['open', 'reply:old', 'ask:age'],
      );
      assert.equal((await h.query<FormSessionState>('state')).phase, 'waiting');
      await h.signal('reply', { uid: 'msg_2', text: '34', fields: null });
      return h.result();
    });
    assert.equal(state.phase, 'submitted');
    assert.equal(state.reminded, false);
    assert.deepEqual(
      d.calls.map((c) => c.step),
      ['open', 'reply:old', 'ask:age', 'reply:34', 'thanks'],
    );
  },
);

test(
  'after the reminder, a reply gives the customer the whole expiry period again; a cancel ends the wait at once',
  { timeout: 60_000 },
  async () => {
    const d = doubles([{ outcome: 'ask', key: 'email', problem: null, attempt: 0 }]);
    const state = await withQueueWorker(env, bundle, 'form', d.activities, async (q) => {
      const h = await start(q);
      await env.sleep(REMIND * 1000 + 60_000);
      await h.signal('reply', { uid: 'msg_1', text: 'Asha', fields: null });
      await env.sleep((EXPIRE - 60) * 1000);
      assert.ok(!d.calls.some((c) => c.step.startsWith('expire')), 'not expired within expire_after of the reply');
      await h.signal('cancel');
      return h.result();
    });
    assert.equal(state.phase, 'cancelled');
    assert.deepEqual(
      d.calls.map((c) => c.step),
      ['open', 'remind', 'reply:Asha', 'ask:email'],
    );
  },
);
