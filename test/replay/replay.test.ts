import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { Worker, bundleWorkflowCode } from '@temporalio/worker';

// Replays every recorded history (test/replay/histories/<workflowType>/<scenario>.json) against the
// current workflow code. A change that breaks one must go behind patched() or a new workflow type.
const require = createRequire(import.meta.url);
const root = path.resolve(import.meta.dirname, 'histories');
const files = fs
  .readdirSync(root, { recursive: true, encoding: 'utf8' })
  .filter((f) => f.endsWith('.json'))
  .sort();
const workflowTypes = fs.readdirSync(root).filter((d) => fs.statSync(path.join(root, d)).isDirectory());

test('every workflow type exported by workflows/index.ts has at least one recorded history', async () => {
  const exported = Object.keys(await import('../../workflows/index.js'));
  assert.deepEqual(
    exported.filter((w) => !workflowTypes.includes(w)),
    [],
  );
});

test('recorded histories replay without nondeterminism', async () => {
  assert.ok(files.length > 0, 'histories are recorded');
  const bundle = await bundleWorkflowCode({
    workflowsPath: require.resolve('../../workflows/index.ts'),
    logger: { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error() {} } as never,
  });
  const histories = files.map((f) => ({ workflowId: f, history: JSON.parse(fs.readFileSync(path.join(root, f), 'utf8')) }));
  const failures: string[] = [];
  for await (const r of Worker.runReplayHistories({ workflowBundle: bundle }, histories)) {
    if (r.error) failures.push(`${r.workflowId}: ${r.error.message}`);
  }
  assert.deepEqual(failures, []);
});
