import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker, type WorkflowBundle } from '@temporalio/worker';
import { ApplicationFailure, defaultPayloadConverter } from '@temporalio/common';
import type { CampaignActivities, CampaignPageOutcome, CampaignStatus } from '../../../activities/campaigns/campaign.js';
import type { campaignWorkflow, CampaignWorkflowInput, CampaignState } from '../../../workflows/campaigns/campaign.js';
import { timeSkippingEnv, freshTaskQueue } from '../../support/workflow-env.js';

// The real campaign workflow on the time-skipping test server with typed doubles of its two
// activities: beginCampaign (draft/scheduled → running) and processCampaignPage (one page of the
// audience written as messages, or the wallet running out).
let env: TestWorkflowEnvironment;
let bundle: WorkflowBundle;

before(async () => {
  ({ env, bundle } = await timeSkippingEnv('campaigns/campaign.ts'));
});
after(async () => {
  await env?.teardown();
});

type PageState = CampaignPageOutcome['state'];

interface Calls {
  begin: number[];
  pages: Array<{ campaignId: number; pageSize: number }>;
}

/** Doubles answering the begin with `begin` and each page call with the next of `pages` (cursor +100 each). */
function campaignDoubles(o: { begin?: CampaignStatus | 'not visible'; pages: PageState[] }) {
  const calls: Calls = { begin: [], pages: [] };
  const activities: CampaignActivities = {
    async beginCampaign() {
      calls.begin.push(await env.currentTimeMs());
      if (o.begin === 'not visible') throw ApplicationFailure.nonRetryable('campaign 1 is not visible', 'CampaignNotVisible');
      return o.begin ?? 'running';
    },
    async processCampaignPage(input) {
      calls.pages.push(input);
      const state = o.pages[calls.pages.length - 1] ?? 'completed';
      const cursor = calls.pages.length * 100;
      return { state, cursor, totalRecipients: 1000, inserted: state === 'more' || state === 'completed' ? 100 : 0, skipped: 0 };
    },
  };
  return { activities, calls };
}

const input = (over: Partial<CampaignWorkflowInput> = {}): CampaignWorkflowInput => ({
  accountId: 1,
  campaignId: 42,
  uid: 'cmp_test',
  scheduledAt: null,
  pageSize: 100,
  pagesPerRun: 50,
  ...over,
});

async function run(args: CampaignWorkflowInput, activities: CampaignActivities) {
  const taskQueue = freshTaskQueue('campaign');
  const workflowId = `campaign-${Math.random()}`;
  const worker = await Worker.create({ connection: env.nativeConnection, taskQueue, workflowBundle: bundle, activities });
  const result = await worker.runUntil(
    env.client.workflow.execute<typeof campaignWorkflow>('campaignWorkflow', { taskQueue, workflowId, args: [args] }),
  );
  return { result, workflowId };
}

test('a campaign begins, then writes pages until the audience is done', { timeout: 60_000 }, async () => {
  const acts = campaignDoubles({ pages: ['more', 'more', 'completed'] });
  const { result } = await run(input(), acts.activities);
  assert.deepEqual(result, { status: 'completed', cursor: 300, totalRecipients: 1000, pages: 3 } satisfies CampaignState);
  assert.equal(acts.calls.begin.length, 1);
  assert.deepEqual(acts.calls.pages, Array(3).fill({ campaignId: 42, pageSize: 100 }));
});

test('a campaign pauses when the wallet cannot cover the next page, and writes no page after it', { timeout: 60_000 }, async () => {
  const acts = campaignDoubles({ pages: ['more', 'paused', 'more'] });
  const { result } = await run(input(), acts.activities);
  assert.equal(result.status, 'paused');
  assert.equal(result.cursor, 200);
  assert.equal(acts.calls.pages.length, 2);
});

test('a campaign cancelled or paused by the API while running keeps its last status and stops', { timeout: 60_000 }, async () => {
  const acts = campaignDoubles({ pages: ['more', 'stopped'] });
  const { result } = await run(input(), acts.activities);
  assert.equal(result.status, 'running', 'the record says why it stopped; the workflow just ends');
  assert.equal(acts.calls.pages.length, 2);
  const cancelled = campaignDoubles({ pages: ['cancelled'] });
  assert.equal((await run(input(), cancelled.activities)).result.status, 'cancelled');
});

test('a scheduled campaign waits (durably) until its time, then begins', { timeout: 60_000 }, async () => {
  const acts = campaignDoubles({ pages: ['completed'] });
  const startsAt = (await env.currentTimeMs()) + 3 * 24 * 3600_000;
  const taskQueue = freshTaskQueue('campaign');
  const worker = await Worker.create({ connection: env.nativeConnection, taskQueue, workflowBundle: bundle, activities: acts.activities });
  await worker.runUntil(async () => {
    const handle = await env.client.workflow.start<typeof campaignWorkflow>('campaignWorkflow', {
      taskQueue,
      workflowId: `campaign-${Math.random()}`,
      args: [input({ scheduledAt: new Date(startsAt).toISOString() })],
    });
    // Time only skips while a result is awaited: until then the workflow is asleep on its timer.
    const waiting = await handle.query<CampaignState>('state');
    assert.equal(waiting.status, 'scheduled');
    assert.equal(acts.calls.begin.length, 0, 'nothing begins before the schedule');
    const result = await handle.result();
    assert.equal(result.status, 'completed');
  });
  assert.equal(acts.calls.begin.length, 1);
  assert.ok(acts.calls.begin[0] >= startsAt, `began ${startsAt - acts.calls.begin[0]} ms before its time`);
  assert.ok(acts.calls.begin[0] - startsAt < 60_000, 'began when its time came');
});

test('a schedule in the past starts at once', { timeout: 60_000 }, async () => {
  const acts = campaignDoubles({ pages: ['completed'] });
  const now = await env.currentTimeMs();
  await run(input({ scheduledAt: new Date(now - 3600_000).toISOString() }), acts.activities);
  assert.ok(acts.calls.begin[0] - now < 60_000);
});

test('past its page budget a run continues as new from its cursor, without beginning again', { timeout: 60_000 }, async () => {
  const acts = campaignDoubles({ pages: ['more', 'more', 'more', 'completed'] });
  const { result, workflowId } = await run(input({ pagesPerRun: 2 }), acts.activities);
  assert.deepEqual(result, { status: 'completed', cursor: 400, totalRecipients: 1000, pages: 2 });
  assert.equal(acts.calls.begin.length, 1, 'the continued run does not begin the campaign again');
  assert.equal(acts.calls.pages.length, 4);
  const history = await env.client.workflow.getHandle(workflowId).fetchHistory();
  const started = history.events![0].workflowExecutionStartedEventAttributes!;
  assert.ok(started.continuedExecutionRunId, 'the last run continued an earlier one');
  const carried = defaultPayloadConverter.fromPayload<CampaignWorkflowInput>(started.input!.payloads![0]);
  assert.deepEqual(carried, input({ pagesPerRun: 2, cursor: 200 }));
});

test('a campaign whose route is gone is cancelled at begin and writes no page', { timeout: 60_000 }, async () => {
  const acts = campaignDoubles({ begin: 'cancelled', pages: [] });
  const { result } = await run(input(), acts.activities);
  assert.deepEqual(result, { status: 'cancelled', cursor: 0, totalRecipients: 0, pages: 0 });
  assert.equal(acts.calls.pages.length, 0);
});

test('a campaign that never becomes visible (its transaction rolled back) is abandoned', { timeout: 60_000 }, async () => {
  const acts = campaignDoubles({ begin: 'not visible', pages: [] });
  const { result } = await run(input(), acts.activities);
  assert.equal(result.status, 'abandoned');
  assert.equal(acts.calls.pages.length, 0);
});
