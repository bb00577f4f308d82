// `npm test`: type check, then every test file against a stack started for this run only
// (embedded PostgreSQL, an in-memory Temporal dev server, the simulator, a worker and the API).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { globSync } from 'node:fs';
import { startStack, projectRoot } from './stack.js';
import { freePort } from './embedded-pg.js';

const only = process.argv.slice(2);
const step = (title: string) => process.stdout.write(`\n== ${title}\n`);

if (!only.length) {
  step('type check');
  const tsc = spawnSync(process.execPath, [path.join(projectRoot, 'node_modules/typescript/bin/tsc'), '--noEmit', '-p', projectRoot], {
    stdio: 'inherit',
  });
  if (tsc.status !== 0) process.exit(tsc.status ?? 1);
}

step('starting the stack');
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-test-'));
const operatorToken = 'test-operator-token';
const stack = await startStack({
  dataDir,
  persistentTemporal: false,
  apiPort: await freePort(),
  logToFiles: true,
  extraEnv: {
    OPERATOR_TOKEN: operatorToken,
    LOG_LEVEL: 'warn',
    SIM_RECEIPT_DELAY_MS: '100',
    RECEIPT_TIMEOUT_SECONDS: '5',
    DELIVERY_POLL_SECONDS: '1',
    DELIVERY_POLL_ATTEMPTS: '3',
  },
});
process.stdout.write(`stack up: api ${stack.apiUrl}, temporal ${stack.temporalAddress}, logs in ${dataDir}\n`);

const files = only.length ? only : globSync('test/{unit,integration,replay}/**/*.test.ts', { cwd: projectRoot }).sort();
step(`running ${files.length} test files`);
const result = spawnSync(process.execPath, ['--import', 'tsx', '--test', '--test-concurrency=2', '--test-timeout=180000', ...files], {
  cwd: projectRoot,
  stdio: 'inherit',
  env: {
    ...process.env,
    ...stack.env,
    API_URL: stack.apiUrl,
    SIM_URL: stack.simulatorUrl,
    OPERATOR_TOKEN: operatorToken,
    TEST_DATA_DIR: dataDir,
  },
});

await stack.stop();
if (result.status === 0) fs.rmSync(dataDir, { recursive: true, force: true });
else process.stdout.write(`logs kept in ${dataDir}\n`);
process.exit(result.status ?? 1);
