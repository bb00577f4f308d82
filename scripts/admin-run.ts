// One admin CLI command line run to its answer, without exiting: scripts/admin.ts prints it and
// exits with its code; tests run the README's examples through it in-process (loading the whole
// operation registry once rather than once per command).
import { cliCommands, parseCommandLine, CliUsageError, type CliRequest } from './admin-cli.js';
import type { Operation } from '../api/operation.js';

export interface CliRun {
  /** 0 answered 2xx (or help), 1 refused or unreachable, 2 a command line it cannot read. */
  code: 0 | 1 | 2;
  /** What goes to stdout: the JSON answer, pretty-printed, or the help text. */
  out: string;
  /** What goes to stderr: one line saying why, when code is not 0. */
  err: string;
}

export interface CliTarget {
  /** The API's base URL. */
  adminUrl: string;
  operatorToken: string;
}

export async function runAdminCli(ops: readonly Operation[], argv: readonly string[], target: CliTarget): Promise<CliRun> {
  let parsed;
  try {
    parsed = parseCommandLine(cliCommands(ops), argv);
  } catch (err) {
    if (!(err instanceof CliUsageError)) throw err;
    const hint = err.command ? `npm run admin -- help ${err.command}` : 'npm run admin -- help';
    return { code: 2, out: '', err: `error: ${err.message}\nsee: ${hint}\n` };
  }
  if (parsed.kind === 'help') return { code: 0, out: parsed.text, err: '' };
  return send(parsed.request, target);
}

async function send(request: CliRequest, target: CliTarget): Promise<CliRun> {
  const base = target.adminUrl.replace(/\/$/, '');
  const query = new URLSearchParams(request.query).toString();
  try {
    const res = await fetch(`${base}${request.path}${query ? `?${query}` : ''}`, {
      method: request.method,
      headers: {
        authorization: `Bearer ${target.operatorToken}`,
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
    return {
      code: res.ok ? 0 : 1,
      out: `${JSON.stringify(answer, null, 2)}\n`,
      err: res.ok ? '' : `error: ${request.method} ${request.path} answered ${res.status}${message ? `: ${message}` : ''}\n`,
    };
  } catch (err) {
    return { code: 1, out: '', err: `error: cannot reach ${base}: ${(err as Error).message}\n` };
  }
}
