// Operator CLI over the admin HTTP API, generated from the operator operations (api/operations.ts):
//   npm run admin -- <command> [--flag value ...]      (npm run admin -- help [<command>])
// Prints the JSON answer on stdout (a refusal too, with exit code 1 and a line on stderr); a command
// line it cannot read is explained on stderr with exit code 2.
// ADMIN_URL (default http://127.0.0.1:8080) and OPERATOR_TOKEN select the service; without
// OPERATOR_TOKEN the token `npm start` made for its data directory (SVC_DATA_DIR, default .data) is used.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { operatorOperations } from '../api/operations.js';
import { runAdminCli } from './admin-run.js';

function operatorToken(): string {
  if (process.env.OPERATOR_TOKEN) return process.env.OPERATOR_TOKEN;
  const dataDir = process.env.SVC_DATA_DIR ?? fileURLToPath(new URL('../.data', import.meta.url));
  try {
    return (JSON.parse(fs.readFileSync(path.join(dataDir, 'secrets.json'), 'utf8')) as { OPERATOR_TOKEN?: string }).OPERATOR_TOKEN ?? '';
  } catch {
    return '';
  }
}

const run = await runAdminCli(operatorOperations, process.argv.slice(2), {
  adminUrl: process.env.ADMIN_URL ?? 'http://127.0.0.1:8080',
  operatorToken: operatorToken(),
});
if (run.err) process.stderr.write(run.err);
process.stdout.write(run.out, () => process.exit(run.code));
