import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker, type WorkflowBundle } from '@temporalio/worker';
import type { TemplateActivities } from '../../../activities/templates/template.js';
import type { TemplateStatus } from '../../../domain/templates/index.js';
import {
  submissionUpdate,
  templateReviewQuery,
  templateStatusSignal,
  type templateReviewWorkflow,
} from '../../../workflows/templates/template-review.js';
import { timeSkippingEnv, freshTaskQueue } from '../../support/workflow-env.js';

// The template review workflow on the time-skipping server (docs/templates.md): the submission
// answered through the update, then the status polled on a doubling backoff until a final status or
// the bound, a status-update webhook (signal) ending the polls at once, and a refusal or a template
// gone ending it without polls. Each test awaits one result at a time.
let env: TestWorkflowEnvironment;
let bundle: WorkflowBundle;

before(async () => {
  ({ env, bundle } = await timeSkippingEnv('index.ts'));
});
after(async () => {
  await env?.teardown();
});

type Acts = TemplateActivities;

/** Activity doubles: the provider answers `statuses` to successive polls (the last repeats); poll times are recorded. */
function provider(statuses: (TemplateStatus | 'gone')[], submit: Awaited<ReturnType<Acts['submitTemplate']>> | null = null) {
  const polls: number[] = [];
  const activities: Partial<Acts> = {
    submitTemplate: async () => submit ?? { kind: 'submitted', providerTemplateId: '5944', status: 'pending' },
    withdrawTemplate: async (a) => ({ kind: 'refused', code: a.code, message: a.message }),
    checkTemplateStatus: async () => {
      polls.push(await env.currentTimeMs());
      return { status: statuses[Math.min(polls.length - 1, statuses.length - 1)] };
    },
  };
  return { polls, activities };
}

async function run<T>(activities: Partial<Acts>, fn: (taskQueue: string) => Promise<T>) {
  const taskQueue = freshTaskQueue('template-review');
  const worker = await Worker.create({ connection: env.nativeConnection, taskQueue, workflowBundle: bundle, activities });
  return worker.runUntil(fn(taskQueue));
}

const input = { accountId: 1, templateId: '42', pollFirstSeconds: 60, pollMaxSeconds: 600, maxReviewSeconds: 72 * 3600 };
const start = (taskQueue: string, over: Partial<typeof input> = {}) =>
  env.client.workflow.start<typeof templateReviewWorkflow>('templateReviewWorkflow', {
    taskQueue,
    workflowId: `template-review-${Math.random()}`,
    args: [{ ...input, ...over }],
  });

test('no webhook: polled at 60 s, 120 s, 240 s… until approved; the submission update answers at once', { timeout: 60_000 }, async () => {
  const p = provider(['pending', 'pending', 'pending', 'approved']);
  const state = await run(p.activities, async (q) => {
    const h = await start(q);
    const submitted = await h.executeUpdate(submissionUpdate, { args: [15_000] });
    assert.deepEqual([submitted.phase, submitted.status, submitted.providerTemplateId], ['reviewing', 'pending', '5944']);
    return h.result();
  });
  assert.deepEqual([state.phase, state.status, state.polls, state.signals], ['reviewed', 'approved', 4, 0]);
  const gaps = p.polls.map((t, i) => (i === 0 ? 0 : Math.round((t - p.polls[i - 1]) / 1000)));
  assert.deepEqual(gaps.slice(1), [120, 240, 480], `doubling backoff: ${gaps}`);
});

test('the backoff stops at its maximum', { timeout: 60_000 }, async () => {
  const p = provider(['pending', 'pending', 'pending', 'pending', 'pending', 'rejected']);
  const state = await run(p.activities, async (q) => (await start(q, { pollFirstSeconds: 100, pollMaxSeconds: 300 })).result());
  assert.equal(state.status, 'rejected');
  const gaps = p.polls.slice(1).map((t, i) => Math.round((t - p.polls[i]) / 1000));
  assert.deepEqual(gaps, [200, 300, 300, 300, 300]);
});

test('a status-update webhook (signal) ends the review without waiting for the next poll', { timeout: 60_000 }, async () => {
  const p = provider(['pending']);
  const state = await run(p.activities, async (q) => {
    const h = await start(q);
    await h.executeUpdate(submissionUpdate, { args: [15_000] });
    await h.signal(templateStatusSignal, { status: 'approved' });
    return h.result();
  });
  assert.deepEqual([state.phase, state.status, state.signals, state.polls], ['reviewed', 'approved', 1, 0]);
});

test(
  'a webhook that says pending again keeps it polling; the bound leaves it pending (gave_up), queryable',
  { timeout: 60_000 },
  async () => {
    const p = provider(['pending']);
    const state = await run(p.activities, async (q) => {
      const h = await start(q, { pollFirstSeconds: 3600, pollMaxSeconds: 3600 * 8, maxReviewSeconds: 24 * 3600 });
      await h.signal(templateStatusSignal, { status: 'pending' });
      const during = await h.query(templateReviewQuery);
      assert.equal(during.templateId, '42');
      return h.result();
    });
    assert.deepEqual([state.phase, state.status, state.signals], ['gave_up', 'pending', 1]);
    assert.equal(state.polls, 5, 'at 1 h, 3 h, 7 h, 15 h and 23 h; then the 24 h bound');
  },
);

test('a refused submission ends it at once, the refusal in its state; a template gone ends it too', { timeout: 60_000 }, async () => {
  const refused = provider([], { kind: 'refused', code: '100', message: 'Invalid parameter' });
  const s1 = await run(refused.activities, async (q) => {
    const h = await start(q);
    const answer = await h.executeUpdate(submissionUpdate, { args: [15_000] });
    assert.deepEqual(answer.refusal, { code: '100', message: 'Invalid parameter' });
    return h.result();
  });
  assert.deepEqual([s1.phase, s1.status, s1.polls], ['refused', null, 0]);
  const gone = provider(['gone']);
  const s2 = await run(gone.activities, async (q) => (await start(q)).result());
  assert.deepEqual([s2.phase, s2.polls], ['gone', 1]);
});
