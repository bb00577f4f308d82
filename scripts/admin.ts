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
import { cliCommands, parseCommandLine, CliUsageError, type CliRequest, type Parsed } from './admin-cli.js';

const finish = (code: number, out = '', err = '') => {
  if (err) process.stderr.write(err);
  process.stdout.write(out, () => process.exit(code));
};

function parse(): Parsed | null {
  try {
    return parseCommandLine(cliCommands(operatorOperations), process.argv.slice(2));
  } catch (err) {
    if (!(err instanceof CliUsageError)) throw err;
    const hint = err.command ? `npm run admin -- help ${err.command}` : 'npm run admin -- help';
    finish(2, '', `error: ${err.message}\nsee: ${hint}\n`);
    return null;
  }
}

function operatorToken(): string {
  if (process.env.OPERATOR_TOKEN) return process.env.OPERATOR_TOKEN;
  const dataDir = process.env.SVC_DATA_DIR ?? fileURLToPath(new URL('../.data', import.meta.url));
  try {
    return (JSON.parse(fs.readFileSync(path.join(dataDir, 'secrets.json'), 'utf8')) as { OPERATOR_TOKEN?: string }).OPERATOR_TOKEN ?? '';
  } catch {
    return '';
  }
}

async function send(request: CliRequest) {
  const base = (process.env.ADMIN_URL ?? 'http://127.0.0.1:8080').replace(/\/$/, '');
  const query = new URLSearchParams(request.query).toString();
  try {
    const res = await fetch(`${base}${request.path}${query ? `?${query}` : ''}`, {
      method: request.method,
      headers: {
        authorization: `Bearer ${operatorToken()}`,
        accept: 'application/json',
        ...(request.body ? { 'content-type': 'application/json' } : {}),
      },
      body: request.body ? JSON.stringify(request.body) : undefined,
    });
    const text = await res.text();
    let answer: unknown = text;
    try {
      answer = JSON.parse(text);
    } catch {
      // Not JSON (a proxy's error page): printed as a JSON string.
    }
    const message = (answer as { message?: string } | null)?.message;
    finish(
      res.ok ? 0 : 1,
      `${JSON.stringify(answer, null, 2)}\n`,
      res.ok ? '' : `error: ${request.method} ${request.path} answered ${res.status}${message ? `: ${message}` : ''}\n`,
    );
  } catch (err) {
    finish(1, '', `error: cannot reach ${base}: ${(err as Error).message}\n`);
  }
}

const parsed = parse();
if (parsed?.kind === 'help') finish(0, parsed.text);
else if (parsed?.kind === 'request') await send(parsed.request);
