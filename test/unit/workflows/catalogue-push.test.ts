import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { ApplicationFailure } from '@temporalio/common';
import { Worker, type WorkflowBundle } from '@temporalio/worker';
import type { PlatformPushActivities, SendOutcome, SettleOutcome } from '../../../activities/catalogues/platform-push.js';
import type { productsPushWorkflow } from '../../../workflows/catalogues/products-push.js';
import type { catalogueSetupWorkflow } from '../../../workflows/catalogues/catalogue-setup.js';
import {
  productPushStateQuery,
  pushRevisionUpdate,
  type productPushWorkflow,
  type PushRevisionResult,
} from '../../../workflows/catalogues/product-push.js';
import { timeSkippingEnv, freshTaskQueue } from '../../support/workflow-env.js';

// The platform push on the time-skipping server with typed activity doubles: polling cadence and
// deadline of push-steps, refusals, and the product push's coalescing of edits.
let env: TestWorkflowEnvironment;
let bundle: WorkflowBundle;

before(async () => {
  ({ env, bundle } = await timeSkippingEnv('index.ts'));
});
after(async () => {
  await env?.teardown();
});

type Doubles = Pick<
  PlatformPushActivities,
  'sendCatalogueItems' | 'settleCatalogueBatch' | 'failCatalogueBatch' | 'createProviderCatalogue'
>;

const sent = (handles: SendOutcome['handles'], whatsapp = { synced: 0, blocked: 0, failed: 0 }): SendOutcome => ({
  handles,
  platforms: { whatsapp, storefront: { synced: handles.reduce((n, h) => n + h.productIds.length, 0), blocked: 0, failed: 0 } },
  problems: [],
  problemsTruncated: false,
});
const settled = (done: boolean, synced = 0, failed = 0): SettleOutcome => ({
  done,
  platforms: { whatsapp: { synced, blocked: 0, failed } },
  problems: failed ? [{ sku: 'S-1', stage: 'whatsapp', reason: 'Policy violation' }] : [],
  problemsTruncated: false,
});

function doubles(over: Partial<Doubles> & { times?: number[]; calls?: string[] }): Doubles {
  const note = async (name: string) => {
    over.calls?.push(name);
    over.times?.push(await env.currentTimeMs());
  };
  return {
    async sendCatalogueItems(input) {
      await note('send');
      return over.sendCatalogueItems
        ? over.sendCatalogueItems(input)
        : sent([{ handle: 'h1', productIds: input.productIds, revisions: [1], deletedIds: [] }]);
    },
    async settleCatalogueBatch(input) {
      await note('settle');
      return over.settleCatalogueBatch ? over.settleCatalogueBatch(input) : settled(true, input.productIds.length);
    },
    async failCatalogueBatch(input) {
      await note('fail');
      return over.failCatalogueBatch
        ? over.failCatalogueBatch(input)
        : {
            failed: input.productIds.length,
            problems: input.productIds.map(() => ({ sku: 'S', stage: 'whatsapp' as const, reason: input.reason })),
          };
    },
    async createProviderCatalogue(input) {
      await note('create');
      return over.createProviderCatalogue ? over.createProviderCatalogue(input) : { metaCatalogueId: '123' };
    },
  };
}

async function withWorker<T>(activities: Doubles, fn: (taskQueue: string) => Promise<T>): Promise<T> {
  const taskQueue = freshTaskQueue('catalogue-push');
  const worker = await Worker.create({ connection: env.nativeConnection, taskQueue, workflowBundle: bundle, activities });
  return worker.runUntil(fn(taskQueue));
}

const productsPush = (taskQueue: string, productIds = [1, 2]) =>
  env.client.workflow.execute<typeof productsPushWorkflow>('productsPushWorkflow', {
    taskQueue,
    workflowId: `products-push-${Math.random()}`,
    args: [{ accountId: 1, catalogueId: 2, productIds, cause: { kind: 'test' } }],
  });

test(
  'a push polls its batch after 0.5 s, then 1 s, 2 s, … until finished, and adds up what each step counted',
  { timeout: 60_000 },
  async () => {
    const times: number[] = [];
    const calls: string[] = [];
    let polls = 0;
    const outcome = await withWorker(
      doubles({ times, calls, settleCatalogueBatch: async (b) => settled(++polls >= 4, b.productIds.length) }),
      (q) => productsPush(q),
    );
    assert.deepEqual(calls, ['send', 'settle', 'settle', 'settle', 'settle']);
    // Each pause at least its schedule (0.5, 1, 2, 4 s) and at most 1.5 s more: activity calls take
    // real time next to the skipped timers, more on a loaded machine (exact half seconds failed there).
    const gaps = times.slice(1).map((t, i) => (t - times[i]) / 1000);
    for (const [i, want] of [0.5, 1, 2, 4].entries())
      assert.ok(gaps[i] >= want - 0.05 && gaps[i] <= want + 1.5, `pause ${i + 1}: ${gaps[i]} s, scheduled ${want} s`);
    assert.deepEqual(outcome.platforms, {
      whatsapp: { synced: 2, blocked: 0, failed: 0 },
      storefront: { synced: 2, blocked: 0, failed: 0 },
    });
    assert.equal(outcome.refused, undefined);
  },
);

test(
  'a batch that never finishes: past the 15-minute deadline its listings fail with "no answer from the platform"',
  { timeout: 60_000 },
  async () => {
    const times: number[] = [];
    const calls: string[] = [];
    const outcome = await withWorker(doubles({ times, calls, settleCatalogueBatch: async () => settled(false) }), (q) => productsPush(q));
    assert.equal(calls.at(-1), 'fail');
    const span = (times.at(-1)! - times[0]) / 1000;
    assert.ok(span >= 900 && span < 960, `failed after ${span} s`);
    const settles = calls.filter((c) => c === 'settle').length;
    assert.ok(settles < 45, `the poll backs off to 30 s (${settles} polls)`);
    assert.equal(outcome.platforms.whatsapp.failed, 2);
    assert.equal(outcome.problems[0].reason, 'no answer from the platform');
  },
);

test('a synchronous refusal is the outcome’s `refused`; batches accepted before it still settle', { timeout: 60_000 }, async () => {
  const calls: string[] = [];
  const outcome = await withWorker(
    doubles({
      calls,
      sendCatalogueItems: async () => {
        throw ApplicationFailure.nonRetryable('(#200) Requires business_management permission (provider code 200)', 'ProviderRefused', {
          platform: 'whatsapp',
          message: '(#200) Requires business_management permission (provider code 200)',
          accepted: [{ handle: 'h0', productIds: [9], revisions: [1], deletedIds: [] }],
          outcome: { platforms: { whatsapp: { synced: 0, blocked: 0, failed: 2 } }, problems: [], problemsTruncated: false },
        });
      },
    }),
    (q) => productsPush(q),
  );
  assert.deepEqual(outcome.refused, {
    platform: 'whatsapp',
    message: '(#200) Requires business_management permission (provider code 200)',
  });
  assert.deepEqual(calls, ['send', 'settle']);
  assert.deepEqual(outcome.platforms.whatsapp, { synced: 1, blocked: 0, failed: 2 });
});

test('a platform that stays unreachable fails the listings instead of the workflow', { timeout: 60_000 }, async () => {
  const calls: string[] = [];
  const outcome = await withWorker(
    doubles({
      calls,
      sendCatalogueItems: async () => {
        throw ApplicationFailure.nonRetryable('connect ECONNREFUSED', 'ProviderTransient');
      },
    }),
    (q) => productsPush(q),
  );
  assert.deepEqual(calls, ['send', 'fail']);
  assert.equal(outcome.platforms.whatsapp.failed, 2);
  assert.match(outcome.problems[0].reason, /could not be reached/);
});

test('the catalogue setup returns the provider id; a refusal fails the workflow with ProviderRefused', { timeout: 60_000 }, async () => {
  const ok = await withWorker(doubles({}), (taskQueue) =>
    env.client.workflow.execute<typeof catalogueSetupWorkflow>('catalogueSetupWorkflow', {
      taskQueue,
      workflowId: `setup-${Math.random()}`,
      args: [{ accountId: 1, catalogueId: 2 }],
    }),
  );
  assert.deepEqual(ok, { metaCatalogueId: '123' });
  const refused = await withWorker(
    doubles({
      createProviderCatalogue: async () => {
        throw ApplicationFailure.nonRetryable('(#200) Requires business_management permission', 'ProviderRefused');
      },
    }),
    (taskQueue) =>
      env.client.workflow
        .execute<typeof catalogueSetupWorkflow>('catalogueSetupWorkflow', {
          taskQueue,
          workflowId: `setup-${Math.random()}`,
          args: [{ accountId: 1, catalogueId: 2 }],
        })
        .then(
          () => null,
          (err: Error) => err,
        ),
  );
  let e: Error | undefined = refused ?? undefined;
  while (e && !(e instanceof ApplicationFailure)) e = e.cause as Error | undefined;
  assert.ok(e instanceof ApplicationFailure && e.type === 'ProviderRefused', String(refused));
});

test('product push: the update answers at acceptance; edits during a push coalesce into one more push', { timeout: 60_000 }, async () => {
  const revisionsSent: number[] = [];
  let release: () => void = () => {};
  let firstStarted: () => void = () => {};
  const firstSend = new Promise<void>((r) => (firstStarted = r));
  let sends = 0;
  const answers = await withWorker(
    doubles({
      sendCatalogueItems: async (input) => {
        sends += 1;
        // The first send waits until the later edits are in.
        if (sends === 1) {
          const released = new Promise<void>((r) => (release = r));
          firstStarted();
          await released;
        }
        revisionsSent.push(sends);
        return sent([{ handle: `h${sends}`, productIds: input.productIds, revisions: [sends], deletedIds: [] }]);
      },
    }),
    async (taskQueue) => {
      const handle = await env.client.workflow.start<typeof productPushWorkflow>('productPushWorkflow', {
        taskQueue,
        workflowId: `product-push-${Math.random()}`,
        args: [{ accountId: 1, catalogueId: 2, productId: 3 }],
      });
      const first = handle.executeUpdate(pushRevisionUpdate, { args: [{ revision: 1 }] });
      await firstSend;
      const second = handle.executeUpdate(pushRevisionUpdate, { args: [{ revision: 2 }] });
      const third = handle.executeUpdate(pushRevisionUpdate, { args: [{ revision: 3 }] });
      await new Promise((r) => setTimeout(r, 300));
      release();
      const results: PushRevisionResult[] = await Promise.all([first, second, third]);
      const state = await handle.query(productPushStateQuery);
      const final = await handle.result();
      return { results, state, final };
    },
  );
  assert.equal(sends, 2, 'revisions 2 and 3 went out in one push');
  assert.deepEqual(answers.results[0], {
    accepted: true,
    listings: [
      { platform: 'whatsapp', state: 'syncing', problem: null },
      { platform: 'storefront', state: 'synced', problem: null },
    ],
  });
  assert.equal(answers.results[2].accepted, true);
  assert.equal(answers.final.pushedRevision, 3);
  assert.equal(answers.final.phase, 'idle');
});

test(
  'product push: a refusal answers accepted false with the platform’s words; remove answers once the DELETE is accepted',
  { timeout: 60_000 },
  async () => {
    const removals: Array<number[] | undefined> = [];
    const out = await withWorker(
      doubles({
        sendCatalogueItems: async (input) => {
          removals.push(input.removeIds);
          if (!input.removeIds)
            throw ApplicationFailure.nonRetryable('Invalid parameter (provider code 100)', 'ProviderRefused', {
              platform: 'whatsapp',
              message: 'Invalid parameter (provider code 100)',
              accepted: [],
              outcome: { platforms: { whatsapp: { synced: 0, blocked: 0, failed: 1 } }, problems: [], problemsTruncated: false },
            });
          return sent([{ handle: 'hd', productIds: [], revisions: [], deletedIds: input.removeIds }]);
        },
      }),
      async (taskQueue) => {
        const handle = await env.client.workflow.start<typeof productPushWorkflow>('productPushWorkflow', {
          taskQueue,
          workflowId: `product-push-${Math.random()}`,
          args: [{ accountId: 1, catalogueId: 2, productId: 4 }],
        });
        const refused = await handle.executeUpdate(pushRevisionUpdate, { args: [{ revision: 1 }] });
        const removed = await handle.executeUpdate(pushRevisionUpdate, { args: [{ revision: 1, remove: true }] });
        return { refused, removed, final: await handle.result() };
      },
    );
    assert.deepEqual(out.refused, { accepted: false, refused: { platform: 'whatsapp', message: 'Invalid parameter (provider code 100)' } });
    assert.deepEqual(out.removed, { accepted: true, listings: [] });
    assert.deepEqual(removals, [undefined, [4]]);
    assert.equal(out.final.phase, 'removed');
  },
);
