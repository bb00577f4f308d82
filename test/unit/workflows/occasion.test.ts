import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker, type WorkflowBundle } from '@temporalio/worker';
import { ApplicationFailure } from '@temporalio/common';
import type { OccasionActivities, OccasionRunOutcome } from '../../../activities/occasions/occasion.js';
import type { occasionWorkflow, OccasionRunState } from '../../../workflows/occasions/occasion.js';
import { timeSkippingEnv, freshTaskQueue } from '../../support/workflow-env.js';

// The run an occasion's Temporal Schedule starts each day, on the time-skipping test server (which
// has no Schedules: the test starts each day's run itself, as the schedule would, and skips the
// clock a day between them), with a typed double of its one activity that keeps the campaigns
// family's rule: one campaign per occasion and day.
let env: TestWorkflowEnvironment;
let bundle: WorkflowBundle;

before(async () => {
  ({ env, bundle } = await timeSkippingEnv('occasions/occasion.ts'));
});
after(async () => {
  await env?.teardown();
});

const HOUR = 3_600_000;

/** A double of runOccasion: the first `failures` calls fail (retryable unless `permanent`), then each day's first call sends. */
function occasionDouble(o: { failures?: number; permanent?: boolean } = {}) {
  const calls: Array<{ accountId: number; key: string; at: string; clock: number }> = [];
  const campaigns = new Map<string, string>();
  const activities: OccasionActivities = {
    async runOccasion(input): Promise<OccasionRunOutcome> {
      calls.push({ ...input, clock: await env.currentTimeMs() });
      if (calls.length <= (o.failures ?? 0)) {
        if (o.permanent) throw ApplicationFailure.nonRetryable('The sender id is not active.', 'invalid');
        throw ApplicationFailure.retryable('database unavailable', 'TemporaryFailure');
      }
      const day = input.at.slice(0, 10);
      const existing = campaigns.get(day);
      if (existing) return { status: 'already_sent', at: input.at, day, campaign_uid: existing };
      campaigns.set(day, `cmp_${day}`);
      return { status: 'sent', at: input.at, day, campaign_uid: `cmp_${day}` };
    },
  };
  return { activities, calls };
}

/** Starts `count` runs at once (as a schedule's action and a manual trigger of the same minute would), and answers their results. */
async function startTogether(taskQueue: string, count: number): Promise<OccasionRunState[]> {
  const handles = await Promise.all(
    Array.from({ length: count }, () =>
      env.client.workflow.start<typeof occasionWorkflow>('occasionWorkflow', {
        taskQueue,
        workflowId: `occasion/1/birthday-${Math.random()}`,
        args: [{ accountId: 1, key: 'birthday' }],
      }),
    ),
  );
  // One result at a time: each result() call unlocks the test server's clock while it waits and
  // locks it again after, and two waits at once leave it locked, so a later env.sleep never returns.
  const results: OccasionRunState[] = [];
  for (const h of handles) results.push(await h.result());
  return results;
}

/** Runs `fn` with a worker polling `taskQueue` (created before the runs start, so none waits for a worker while the clock skips). */
async function withWorker<T>(activities: OccasionActivities, taskQueue: string, fn: () => Promise<T>): Promise<T> {
  const worker = await Worker.create({ connection: env.nativeConnection, taskQueue, workflowBundle: bundle, activities });
  return worker.runUntil(fn());
}
const runDay = async (activities: OccasionActivities, taskQueue: string) =>
  (await withWorker(activities, taskQueue, () => startTogether(taskQueue, 1)))[0];

test(
  'each day’s run asks for that day’s greeting; a second run of a day finds it sent, the next day sends again',
  { timeout: 60_000 },
  async () => {
    const acts = occasionDouble();
    const taskQueue = freshTaskQueue('occasion');
    const [first, again, nextDay] = await withWorker(acts.activities, taskQueue, async () => {
      const [one, two] = await startTogether(taskQueue, 2);
      await env.sleep(24 * HOUR);
      const [three] = await startTogether(taskQueue, 1);
      return [one, two, three];
    });

    assert.deepEqual([first.status, again.status].sort(), ['already_sent', 'sent']);
    assert.equal((again as { campaign_uid: string }).campaign_uid, (first as { campaign_uid: string }).campaign_uid);
    assert.equal(nextDay.status, 'sent');
    assert.notEqual((nextDay as { day: string }).day, (first as { day: string }).day);
    assert.deepEqual(
      acts.calls.map((c) => [c.accountId, c.key]),
      [
        [1, 'birthday'],
        [1, 'birthday'],
        [1, 'birthday'],
      ],
    );
    // Without a schedule the run's time is its start (a schedule's run carries the time it was meant
    // for): the day skipped between the runs is in the third's.
    const [a, , c] = acts.calls.map((x) => Date.parse(x.at));
    assert.ok(c - a >= 24 * HOUR, `${acts.calls[0].at} → ${acts.calls[2].at}`);
  },
);

test('a run that cannot reach its database tries again with backoff, and sends once it can', { timeout: 60_000 }, async () => {
  const acts = occasionDouble({ failures: 3 });
  const out = await runDay(acts.activities, freshTaskQueue('occasion'));
  assert.equal(out.status, 'sent');
  assert.equal(acts.calls.length, 4);
  assert.ok(
    acts.calls.every((c) => c.at === acts.calls[0].at),
    'every attempt asks for the same day',
  );
  // 10 s, 20 s, 40 s between the attempts.
  assert.ok(acts.calls[3].clock - acts.calls[0].clock >= 70_000);
});

test('a run that still cannot reach its database after six hours gives up rather than greet a day late', { timeout: 120_000 }, async () => {
  const acts = occasionDouble({ failures: Infinity });
  const started = await env.currentTimeMs();
  const out = (await runDay(acts.activities, freshTaskQueue('occasion'))) as Extract<OccasionRunState, { status: 'gave_up' }>;
  assert.equal(out.status, 'gave_up');
  assert.ok(acts.calls.length > 5, `${acts.calls.length} attempts`);
  const last = acts.calls[acts.calls.length - 1].clock;
  assert.ok(last - started <= 6 * HOUR, 'no attempt after the bound');
  assert.ok(last - started >= 5 * HOUR, 'attempts went on for hours (backoff capped at 15 minutes)');
});

test('a refusal (a sender id no longer usable) ends the run at once with its reason', { timeout: 60_000 }, async () => {
  const acts = occasionDouble({ failures: 1, permanent: true });
  const out = (await runDay(acts.activities, freshTaskQueue('occasion'))) as Extract<OccasionRunState, { status: 'gave_up' }>;
  assert.equal(out.status, 'gave_up');
  assert.match(out.reason, /sender id is not active/);
  assert.equal(acts.calls.length, 1);
});
