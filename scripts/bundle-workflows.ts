// Builds the workflow bundle the worker runs (.build/workflow-bundle.js) unless the one on disk is
// current. Run by the stack launcher (npm start, npm test, benches) before the worker starts, in its
// own process so webpack's memory never lands in the worker's.
//   npx tsx scripts/bundle-workflows.ts [--force]
import path from 'node:path';
import { buildWorkflowBundle, bundlePath, staleReason } from '../worker/workflow-bundle.js';

const t0 = performance.now();
const reason = process.argv.includes('--force') ? 'forced' : staleReason();
const rel = path.relative(process.cwd(), bundlePath);
if (!reason) {
  process.stdout.write(`workflow bundle ${rel} is current (checked in ${Math.round(performance.now() - t0)} ms)\n`);
} else {
  const { code, ms, writeError } = await buildWorkflowBundle();
  if (writeError) throw writeError;
  process.stdout.write(`workflow bundle ${rel} built (${reason}): ${Math.round(code.length / 1024)} KB in ${ms} ms\n`);
}
