// `npm test`: the plain unit tests first (test/unit/**, no stack: a failing one stops the run in
// seconds), then the type check and lint, the workflow unit tests, then the integration and replay
// files against a stack started for this run only (embedded PostgreSQL, an in-memory Temporal dev
// server, the simulator, a worker and the API).
// `tsx scripts/test.ts <files>` runs just those files, and starts a stack only if one of them needs it.
import fs from 'node:fs';
import path from 'node:path';
import { spawn, spawnSync } from 'node:child_process';
import { globSync } from 'node:fs';
import { privateRunStack, projectRoot } from './stack.js';
import { TEST_SECRETS, secretsEnv } from './secrets.js';
import { ensureChromium } from './browser.js';

const only = process.argv.slice(2);
const step = (title: string) => process.stdout.write(`\n== ${title}\n`);

// A named file that is not there is refused before anything starts (it used to throw after the
// stack was up, leaving its processes running).
const missing = only.filter((f) => !fs.existsSync(path.resolve(projectRoot, f)));
if (missing.length) {
  process.stderr.write(`no such test file: ${missing.join(', ')}\n`);
  process.exit(2);
}

const files = only.length ? only : globSync('test/{unit,integration,replay}/**/*.test.ts', { cwd: projectRoot }).sort();
const relative = (f: string) => path.relative(projectRoot, path.resolve(projectRoot, f)).split(path.sep).join('/');
const isUnit = (f: string) => relative(f).startsWith('test/unit/');
const isWorkflowUnit = (f: string) => relative(f).startsWith('test/unit/workflows/');
// Plain unit tests first (seconds, in one process), then the workflow unit tests (a time-skipping Temporal test server each).
const unitPhases = [files.filter((f) => isUnit(f) && !isWorkflowUnit(f)), files.filter(isWorkflowUnit)];
const withStack = files.filter((f) => !isUnit(f));

/**
 * Runs test files with node:test; answers the exit status. Asynchronous on purpose: this process
 * owns the stack's child processes, and a blocked event loop would stop it reading their output.
 * `oneProcess` loads every file into one process (`--test-isolation=none`): the plain unit files
 * share most of their import graph, and loading it once per file (tsx compiling the same modules
 * again in each process) was most of that phase's time (docs/benchmarks.md, "Unit phase").
 */
function runTests(list: string[], env: NodeJS.ProcessEnv = {}, concurrency = 2, oneProcess = false): Promise<number> {
  const isolation = oneProcess ? ['--test-isolation=none'] : [`--test-concurrency=${concurrency}`];
  const child = spawn(process.execPath, ['--import', 'tsx', '--test', ...isolation, '--test-timeout=180000', ...list], {
    cwd: projectRoot,
    stdio: 'inherit',
    env: { ...process.env, ...env },
  });
  return new Promise((resolve) => child.on('close', (code) => resolve(code ?? 1)));
}

/** Type check and lint (whole runs only): after the plain unit tests, which need neither. */
function staticChecks(): void {
  step('type check');
  const tsc = spawnSync(process.execPath, [path.join(projectRoot, 'node_modules/typescript/bin/tsc'), '--noEmit', '-p', projectRoot], {
    stdio: 'inherit',
  });
  if (tsc.status !== 0) process.exit(tsc.status ?? 1);
  step('lint (ESLint, Prettier)');
  const bin = (name: string) => path.join(projectRoot, 'node_modules', '.bin', name);
  for (const [cmd, args] of [
    [bin('eslint'), ['.']],
    [bin('prettier'), ['--check', '--log-level', 'warn', '.']],
  ] as const) {
    const r = spawnSync(cmd, args, { cwd: projectRoot, stdio: 'inherit' });
    if (r.status !== 0) process.exit(r.status ?? 1);
  }
}

for (const [i, unit] of unitPhases.entries()) {
  if (i === 1 && !only.length) staticChecks();
  if (!unit.length) continue;
  step(`${i === 0 ? 'unit tests' : 'workflow unit tests (time-skipping server)'}: ${unit.length} files, no stack`);
  const status = await runTests(unit, {}, 2, i === 0);
  if (status !== 0) process.exit(status);
}
if (!withStack.length) process.exit(0);

// The shop page, API reference and OAuth page tests drive a real browser: Debian's chromium, installed here when missing.
if (withStack.some((f) => /^test\/integration\/(shop-page|api-docs-page|oauth-pages)/.test(relative(f)))) {
  const chromium = ensureChromium();
  process.stdout.write(chromium ? `browser: ${chromium}\n` : 'browser: chromium could not be installed; the shop page test will fail\n');
}

step('starting the stack');
const operatorToken = TEST_SECRETS.OPERATOR_TOKEN;
const { stack, dataDir } = await privateRunStack('svc-test', {
  // Fixed test secrets (not the public defaults), the simulator's matching ones included.
  ...secretsEnv(TEST_SECRETS),
  // The suite's files share one client address; the failure throttles are tested on processes of their own.
  AUTH_FAILURES_PER_MINUTE: '1000000',
  OPERATOR_FAILURES_PER_MINUTE: '1000000',
  // The same for the authorization server's throttles (test/integration/oauth-limits.test.ts runs its own API).
  OAUTH_TOKEN_REQUESTS_PER_MINUTE: '1000000',
  OAUTH_REGISTRATIONS_PER_MINUTE: '1000000',
  SIGN_IN_FAILURES_PER_MINUTE: '1000000',
  LOG_LEVEL: 'warn',
  // Every REST answer is held to its operation's output schema (api/http/answer-check.ts).
  CHECK_ANSWERS: 'true',
  SIM_RECEIPT_DELAY_MS: '100',
  RECEIPT_TIMEOUT_SECONDS: '5',
  DELIVERY_POLL_SECONDS: '1',
  DELIVERY_POLL_ATTEMPTS: '3',
  // The tests' webhook receivers listen on 127.0.0.1; a deployment never sets this.
  ALLOW_LOOPBACK_DESTINATIONS: 'true',
  // Tests run the drift pass themselves; an hourly one crossing a run would undo their remote changes.
  CATALOGUE_DRIFT_PAUSED: 'true',
  // Tests run reconciliation themselves; an hourly pass would record other files' in-flight payments as mismatches.
  PAYMENT_RECONCILIATION_PAUSED: 'true',
  // A basket opened from a chat and left with items is abandoned after 3 s here, not 24 h (shop-links.test.ts).
  CART_QUIET_SECONDS: '3',
  // No load balancer watches a test stack's /readyz: its APIs stop without a drain (api-stop.test.ts sets its own).
  API_DRAIN_SECONDS: '0',
});
process.stdout.write(`stack up: api ${stack.apiUrl}, temporal ${stack.temporalAddress}, logs in ${dataDir}\n`);
process.stdout.write('ALLOW_LOOPBACK_DESTINATIONS=true: webhooks may be sent to 127.0.0.1 in this run\n');

// A file marked `@test-alone` holds something every other file's work would wait on (an open writer
// on data_records while a concurrent index build must wait for it): it runs after the others, by itself.
const alone = withStack.filter((f) => fs.readFileSync(path.resolve(projectRoot, f), 'utf8').includes('@test-alone'));
const shared = withStack.filter((f) => !alone.includes(f));
const testEnv = {
  ...stack.env,
  API_URL: stack.apiUrl,
  SIM_URL: stack.simulatorUrl,
  OPERATOR_TOKEN: operatorToken,
  TEST_DATA_DIR: dataDir,
};
let status = 1;
try {
  step(`integration and replay tests: ${shared.length} files`);
  status = shared.length ? await runTests(shared, testEnv) : 0;
  if (status === 0 && alone.length) {
    step(`integration tests that run alone: ${alone.length} files`);
    status = await runTests(alone, testEnv, 1);
  }
} finally {
  await stack.stop();
}
if (status === 0) fs.rmSync(dataDir, { recursive: true, force: true });
else process.stdout.write(`logs kept in ${dataDir}\n`);
process.exit(status);
