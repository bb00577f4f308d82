import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { WorkflowBundle } from '@temporalio/worker';
import type { PostActivities, PublishOutcome } from '../../../activities/posts/post.js';
import {
  cancelSignal,
  rescheduleSignal,
  scheduledPostStateQuery,
  type scheduledPostWorkflow,
} from '../../../workflows/posts/scheduled-post.js';
import { MAX_PUBLISH_ATTEMPTS } from '../../../domain/posts/index.js';
import { assertGaps, timeSkippingEnv, withQueueWorker } from '../../support/workflow-env.js';

// The scheduled post workflow on the time-skipping server (docs/posts.md): its durable timer to the
// publish time, moved by the reschedule signal and stopped by cancel; a transient refusal's retry
// timers (1, 2, 4, 8 minutes) and the last attempt marked final; the database's "not due yet"
// followed. Each test awaits one result at a time.
let env: TestWorkflowEnvironment;
let bundle: WorkflowBundle;

before(async () => {
  ({ env, bundle } = await timeSkippingEnv('index.ts'));
});
after(async () => {
  await env?.teardown();
});

/** The activity double: answers `outcomes` in turn (the last repeats) and records when and how it was called. */
function publisher(outcomes: PublishOutcome[]) {
  const calls: { at: number; final: boolean }[] = [];
  const activities: Partial<PostActivities> = {
    publishDuePost: async (input) => {
      calls.push({ at: await env.currentTimeMs(), final: input.final });
      return outcomes[Math.min(calls.length - 1, outcomes.length - 1)]!;
    },
  };
  return { calls, activities };
}

const start = async (taskQueue: string, inMs: number) => {
  const t0 = await env.currentTimeMs();
  const h = await env.client.workflow.start<typeof scheduledPostWorkflow>('scheduledPostWorkflow', {
    taskQueue,
    workflowId: `post/1/pst_${Math.random().toString(36).slice(2)}`,
    args: [{ accountId: 1, postUid: 'pst_test', at: new Date(t0 + inMs).toISOString() }],
  });
  return { h, t0 };
};

const published: PublishOutcome = { kind: 'closed', status: 'published' };

test('a scheduled post publishes when its timer fires, not before', { timeout: 60_000 }, async () => {
  const p = publisher([published]);
  const { state, t0 } = await withQueueWorker(env, bundle, 'post', p.activities, async (q) => {
    const { h, t0 } = await start(q, 3_600_000);
    const s = await h.query(scheduledPostStateQuery);
    assert.equal(s.status, 'scheduled');
    return { state: await h.result(), t0 };
  });
  assert.deepEqual(state, { status: 'closed', post_status: 'published', attempts: 1 });
  assert.equal(p.calls.length, 1);
  assert.ok(p.calls[0]!.at >= t0 + 3_600_000 && p.calls[0]!.at < t0 + 3_600_000 + 2000, 'published at its time');
});

test('reschedule moves the timer (later and earlier); the query shows the new time', { timeout: 60_000 }, async () => {
  const p = publisher([published]);
  const { t0 } = await withQueueWorker(env, bundle, 'post', p.activities, async (q) => {
    const { h, t0 } = await start(q, 3_600_000);
    const later = new Date(t0 + 3 * 3_600_000).toISOString();
    await h.signal(rescheduleSignal, later);
    const s = await h.query(scheduledPostStateQuery);
    assert.deepEqual(s, { status: 'scheduled', at: later, attempts: 0 });
    await h.result();
    return { t0 };
  });
  assert.ok(p.calls[0]!.at >= t0 + 3 * 3_600_000, 'not at the first time');

  // Earlier: a time already past publishes at once ("share now").
  const now = publisher([published]);
  const { t1 } = await withQueueWorker(env, bundle, 'post', now.activities, async (q) => {
    const { h, t0: t1 } = await start(q, 24 * 3_600_000);
    await h.signal(rescheduleSignal, new Date(t1).toISOString());
    await h.result();
    return { t1 };
  });
  assert.ok(now.calls[0]!.at < t1 + 60_000, 'published at once, not a day later');
});

test(
  'cancel stops it before its time: nothing is published; a reschedule after the cancel brings it back',
  { timeout: 60_000 },
  async () => {
    const p = publisher([published]);
    const state = await withQueueWorker(env, bundle, 'post', p.activities, async (q) => {
      const { h } = await start(q, 3_600_000);
      await h.signal(cancelSignal);
      return h.result();
    });
    assert.deepEqual(state, { status: 'cancelled', attempts: 0 });
    assert.equal(p.calls.length, 0);

    const again = publisher([published]);
    const s2 = await withQueueWorker(env, bundle, 'post', again.activities, async (q) => {
      const { h, t0 } = await start(q, 3_600_000);
      await h.signal(cancelSignal);
      await h.signal(rescheduleSignal, new Date(t0 + 7_200_000).toISOString());
      return h.result();
    });
    assert.equal(s2.status, 'closed');
    assert.equal(again.calls.length, 1);
  },
);

test('a transient refusal is retried after 1, 2, 4, 8 minutes; the last attempt is final', { timeout: 60_000 }, async () => {
  const p = publisher([{ kind: 'pending', pending: 1 }]);
  const state = await withQueueWorker(env, bundle, 'post', p.activities, async (q) => {
    const { h } = await start(q, 600_000);
    return h.result();
  });
  assert.equal(p.calls.length, MAX_PUBLISH_ATTEMPTS);
  assertGaps(p.calls, [60, 120, 240, 480]);
  assert.deepEqual(
    p.calls.map((c) => c.final),
    [false, false, false, false, true],
  );
  // The double keeps answering pending (the real activity closes the post on its final attempt): the workflow still ends.
  assert.deepEqual(state, { status: 'closed', post_status: 'failed', attempts: MAX_PUBLISH_ATTEMPTS });
});

test('a retry that succeeds closes it; "not due yet" from the database waits for that time', { timeout: 60_000 }, async () => {
  const p = publisher([{ kind: 'pending', pending: 1 }, published]);
  const state = await withQueueWorker(env, bundle, 'post', p.activities, async (q) => (await start(q, 600_000)).h.result());
  assert.deepEqual(state, { status: 'closed', post_status: 'published', attempts: 2 });
  assertGaps(p.calls, [60]);

  let first = 0;
  const calls: number[] = [];
  const acts: Partial<PostActivities> = {
    publishDuePost: async () => {
      const at = await env.currentTimeMs();
      calls.push(at);
      if (calls.length === 1) {
        first = at;
        return { kind: 'not_due', at: new Date(at + 1_800_000).toISOString() };
      }
      return published;
    },
  };
  const s2 = await withQueueWorker(env, bundle, 'post', acts, async (q) => (await start(q, 600_000)).h.result());
  assert.deepEqual(s2, { status: 'closed', post_status: 'published', attempts: 1 });
  assert.ok(calls[1]! - first >= 1_800_000, 'waited for the database’s time');
});
