import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { API_URL, OPERATOR_TOKEN } from './stack.js';

const run = promisify(execFile);

/** `npm run admin -- <args>` against the run's API, as an operator runs it: its exit code, its JSON answer (stdout) and stderr. */
export async function cli(...args: string[]): Promise<{ code: number; json: any; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, ['--import', 'tsx', 'scripts/admin.ts', ...args], {
      env: { ...process.env, ADMIN_URL: API_URL, OPERATOR_TOKEN },
    });
    return { code: 0, json: JSON.parse(stdout), stderr };
  } catch (err: any) {
    return { code: err.code, json: err.stdout ? JSON.parse(err.stdout) : null, stderr: err.stderr ?? '' };
  }
}
