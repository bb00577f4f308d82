import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker, type WorkflowBundle } from '@temporalio/worker';
import { ApplicationFailure } from '@temporalio/common';
import type { CatalogueDriftActivities, DriftShop, ShopDriftOutcome } from '../../../activities/catalogues/catalogue-drift.js';
import type { PlatformPushActivities } from '../../../activities/catalogues/platform-push.js';
import type { catalogueDriftWorkflow, CatalogueDriftInput, DriftProgress } from '../../../workflows/catalogues/catalogue-drift.js';
import { timeSkippingEnv, freshTaskQueue } from '../../support/workflow-env.js';

// The hourly drift pass (the workflow the `catalogue-drift` schedule starts) on the time-skipping
// server, with typed doubles of its activities and of the platform push it hands drift back to.
let env: TestWorkflowEnvironment;
let bundle: WorkflowBundle;

before(async () => {
  ({ env, bundle } = await timeSkippingEnv('catalogues/catalogue-drift.ts'));
});
after(async () => {
  await env?.teardown();
});

type Doubles = CatalogueDriftActivities &
  Pick<PlatformPushActivities, 'sendCatalogueItems' | 'settleCatalogueBatch' | 'failCatalogueBatch'>;

const found = (o: Partial<ShopDriftOutcome> = {}): ShopDriftOutcome => ({
  compared: 0,
  drifted: 0,
  newlyDrifted: 0,
  pulledIn: 0,
  pushBack: [],
  missingRemote: [],
  unknownRemote: 0,
  ...o,
});

interface Calls {
  pages: Array<{ afterId: number; limit: number; accountId?: number }>;
  compared: number[];
  pushed: Array<{ catalogueId: number; productIds: number[] }>;
  settled: string[];
}

/** Doubles over the shops `shops` (ids 1…n, account 7), each shop answering `outcomes[id]` (or nothing found). */
function doubles(o: { shops: number; outcomes?: Record<number, ShopDriftOutcome | 'fails'>; gate?: Promise<void> }) {
  const calls: Calls = { pages: [], compared: [], pushed: [], settled: [] };
  const all: DriftShop[] = Array.from({ length: o.shops }, (_, i) => ({ accountId: 7, catalogueId: i + 1 }));
  const activities: Doubles = {
    async listDriftShops(input) {
      calls.pages.push(input);
      return { shops: all.filter((s) => s.catalogueId > input.afterId).slice(0, input.limit) };
    },
    async compareShopCopies(shop) {
      calls.compared.push(shop.catalogueId);
      await o.gate;
      const out = o.outcomes?.[shop.catalogueId];
      if (out === 'fails') throw ApplicationFailure.nonRetryable('catalogue products read: Object does not exist', 'ProviderRefused');
      return out ?? found();
    },
    async sendCatalogueItems(input) {
      calls.pushed.push({ catalogueId: input.catalogueId, productIds: input.productIds });
      const handle = `h-${input.catalogueId}`;
      return {
        handles: [{ handle, productIds: input.productIds, revisions: input.productIds.map(() => 2), deletedIds: [] }],
        platforms: { whatsapp: { synced: 0, blocked: 0, failed: 0 } },
        problems: [],
        problemsTruncated: false,
      };
    },
    async settleCatalogueBatch(input) {
      calls.settled.push(input.handle);
      return {
        done: true,
        platforms: { whatsapp: { synced: input.productIds.length, blocked: 0, failed: 0 } },
        problems: [],
        problemsTruncated: false,
      };
    },
    async failCatalogueBatch() {
      return { failed: 0, problems: [] };
    },
  };
  return { activities, calls };
}

async function run(args: CatalogueDriftInput, activities: Doubles) {
  const taskQueue = freshTaskQueue('drift');
  const worker = await Worker.create({ connection: env.nativeConnection, taskQueue, workflowBundle: bundle, activities });
  return worker.runUntil(
    env.client.workflow.execute<typeof catalogueDriftWorkflow>('catalogueDriftWorkflow', {
      taskQueue,
      workflowId: `catalogue-drift-${Math.random()}`,
      args: [args],
    }),
  );
}

test('drift found in an api or svc shop is pushed back; a platform shop pulled it in and pushes nothing', { timeout: 60_000 }, async () => {
  const d = doubles({
    shops: 3,
    outcomes: {
      1: found({ compared: 5, drifted: 2, newlyDrifted: 2, pushBack: [11, 12] }),
      2: found({ compared: 4, drifted: 1, newlyDrifted: 1, pulledIn: 1 }),
      3: found({ compared: 3 }),
    },
  });
  const result = await run({}, d.activities);
  assert.deepEqual(d.calls.compared.sort(), [1, 2, 3]);
  assert.deepEqual(d.calls.pushed, [{ catalogueId: 1, productIds: [11, 12] }], 'only the api/svc shop pushes its copy back');
  assert.deepEqual(d.calls.settled, ['h-1'], 'the push waits for the platform to settle its batch');
  assert.deepEqual(result, {
    phase: 'done',
    afterShopId: 3,
    current: [],
    run: 1,
    shopsChecked: 3,
    shopsFailed: 0,
    compared: 12,
    drifted: 3,
    newlyDrifted: 3,
    pulledIn: 1,
    pushedBack: 2,
    missingRemote: 0,
  } satisfies DriftProgress);
});

test('items gone from the platform are pushed again with the drifted ones, once each', { timeout: 60_000 }, async () => {
  const d = doubles({ shops: 1, outcomes: { 1: found({ compared: 2, drifted: 1, pushBack: [5], missingRemote: [5, 6] }) } });
  const result = await run({}, d.activities);
  assert.deepEqual(d.calls.pushed, [{ catalogueId: 1, productIds: [5, 6] }]);
  assert.equal(result.missingRemote, 2);
  assert.equal(result.pushedBack, 2);
});

test('shops are visited in pages and a long pass continues as new with its totals', { timeout: 60_000 }, async () => {
  const outcomes = Object.fromEntries(
    Array.from({ length: 5 }, (_, i) => [i + 1, found({ compared: 1, drifted: 1, pushBack: [100 + i] })]),
  );
  const d = doubles({ shops: 5, outcomes });
  const result = await run({ shopsPerPage: 2, shopsPerRun: 2, concurrency: 2 }, d.activities);
  assert.deepEqual(
    d.calls.pages.map((p) => p.afterId),
    [0, 2, 4],
    'keyset pages of shop ids, the cursor carried across runs',
  );
  assert.equal(result.run, 3, 'two continue-as-new');
  assert.equal(result.shopsChecked, 5);
  assert.equal(result.pushedBack, 5);
  assert.deepEqual(d.calls.compared.sort(), [1, 2, 3, 4, 5], 'each shop once');
});

test('a shop whose comparison fails is counted and the pass goes on', { timeout: 60_000 }, async () => {
  const d = doubles({ shops: 2, outcomes: { 1: 'fails', 2: found({ compared: 1, drifted: 1, pushBack: [9] }) } });
  const result = await run({}, d.activities);
  assert.equal(result.shopsFailed, 1);
  assert.equal(result.shopsChecked, 1);
  assert.deepEqual(d.calls.pushed, [{ catalogueId: 2, productIds: [9] }]);
});

test('a run-now for one account asks only for its shops', { timeout: 60_000 }, async () => {
  const d = doubles({ shops: 1 });
  await run({ accountId: 7 }, d.activities);
  assert.deepEqual(d.calls.pages, [{ afterId: 0, limit: 50, accountId: 7 }]);
});

test('the progress query shows the shops being compared', { timeout: 60_000 }, async () => {
  let open!: () => void;
  const gate = new Promise<void>((r) => (open = r));
  const d = doubles({ shops: 2, gate, outcomes: { 1: found({ compared: 1 }), 2: found({ compared: 1 }) } });
  const taskQueue = freshTaskQueue('drift');
  const worker = await Worker.create({ connection: env.nativeConnection, taskQueue, workflowBundle: bundle, activities: d.activities });
  await worker.runUntil(async () => {
    const handle = await env.client.workflow.start<typeof catalogueDriftWorkflow>('catalogueDriftWorkflow', {
      taskQueue,
      workflowId: `catalogue-drift-${Math.random()}`,
      args: [{}],
    });
    let progress: DriftProgress | undefined;
    for (let i = 0; i < 100; i++) {
      progress = await handle.query<DriftProgress>('progress');
      if (progress.current.length === 2) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    assert.equal(progress?.phase, 'comparing');
    assert.deepEqual(progress?.current.sort(), [1, 2]);
    open();
    const result = await handle.result();
    assert.equal(result.phase, 'done');
    assert.equal(result.shopsChecked, 2);
  });
});
