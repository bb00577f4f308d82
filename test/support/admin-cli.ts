import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { operatorOperations } from '../../api/operations.js';
import { runAdminCli, type CliRun } from '../../scripts/admin-run.js';
import { API_URL, OPERATOR_TOKEN } from './stack.js';

/**
 * `npm run admin -- <args>` against the run's API: the CLI's own run (scripts/admin-run.ts, what
 * scripts/admin.ts prints and exits with), in this process: a process per command spent seconds
 * loading the operation registry again each time. `adminProcess` runs the script itself.
 */
export async function adminCli(args: readonly string[]): Promise<CliRun> {
  return runAdminCli(operatorOperations, args, { adminUrl: API_URL, operatorToken: OPERATOR_TOKEN });
}

/** The CLI as an operator runs it: its exit code, its JSON answer (stdout) and stderr. */
export async function cli(...args: string[]): Promise<{ code: number; json: any; stderr: string }> {
  const r = await adminCli(args);
  return { code: r.code, json: r.out ? JSON.parse(r.out) : null, stderr: r.err };
}

const run = promisify(execFile);

/** The script in a process of its own, as `npm run admin --` starts it: its exit code and output. */
export async function adminProcess(args: readonly string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, ['--import', 'tsx', 'scripts/admin.ts', ...args], {
      env: { ...process.env, ADMIN_URL: API_URL, OPERATOR_TOKEN },
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout?: string; stderr?: string };
    return { code: e.code, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}
