// Talks to the stack that `npm test` started (scripts/test.ts passes its addresses in the environment).
import { inspect } from 'node:util';
export const API_URL = process.env.API_URL ?? 'http://127.0.0.1:8080';
export const SIM_URL = process.env.SIM_URL ?? 'http://127.0.0.1:4010';
export const OPERATOR_TOKEN = process.env.OPERATOR_TOKEN ?? '';

/** Longer than any wait the service documents (15 s for answered sends and group changes). */
const REQUEST_TIMEOUT_MS = 90_000;

/** The database's busy sessions and what they wait for, to explain a request left unanswered. */
async function databaseActivity(): Promise<string> {
  if (!process.env.DATABASE_URL) return '';
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: process.env.DATABASE_URL });
  try {
    await client.connect();
    const { rows } = await client.query(
      `select pid, state, wait_event_type, wait_event, pg_blocking_pids(pid) as blocked_by,
              now() - xact_start as in_transaction, left(query, 300) as query
         from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid() and state <> 'idle'`,
    );
    return `; database sessions: ${JSON.stringify(rows, null, 1)}`;
  } catch (err) {
    return `; database activity unreadable: ${(err as Error).message}`;
  } finally {
    await client.end().catch(() => undefined);
  }
}

export interface Reply<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export async function http<T = any>(
  method: string,
  url: string,
  opts: { token?: string | null; body?: unknown; raw?: string; headers?: Record<string, string> } = {},
): Promise<Reply<T>> {
  const headers: Record<string, string> = { accept: 'application/json', ...opts.headers };
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  let payload: string | undefined;
  if (opts.raw !== undefined) payload = opts.raw;
  else if (opts.body !== undefined) {
    payload = JSON.stringify(opts.body);
    headers['content-type'] ??= 'application/json';
  }
  const target = url.startsWith('http') ? url : `${API_URL}${url}`;
  let res: Response;
  try {
    res = await fetch(target, { method, headers, body: payload, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
  } catch (err) {
    if ((err as Error).name !== 'TimeoutError') throw err;
    // A request the service never answers would otherwise surface only as the test runner's timeout,
    // naming no request; say which one, and what the database was doing meanwhile.
    throw new Error(`${method} ${target} was not answered within ${REQUEST_TIMEOUT_MS} ms${await databaseActivity()}`);
  }
  const text = await res.text();
  let body: any = null;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    body = text;
  }
  return { status: res.status, headers: res.headers, body, text };
}

export const api = <T = any>(method: string, path: string, token: string | null, body?: unknown) => http<T>(method, path, { token, body });
export const admin = <T = any>(method: string, path: string, body?: unknown) =>
  http<T>(method, `/admin/v1${path}`, { token: OPERATOR_TOKEN, body });

export interface Tenant {
  accountId: number;
  /** The account's public uid (acc_…), which operator paths take as well as the id. */
  accountUid: string;
  userId: number;
  token: string;
  legacyToken: string;
}

let counter = 0;
/** A fresh account with a full-permission user, a key issued by that user and a legacy key with no issuer. */
export async function newTenant(opts: { permissions?: string[]; name?: string } = {}): Promise<Tenant> {
  const name = opts.name ?? `Test ${process.pid}-${++counter}-${Date.now()}`;
  const acc = await admin('POST', '/accounts', { name, wallet_balance: 100, currency: 'USD' });
  if (acc.status !== 201) throw new Error(`account create failed: ${acc.text}`);
  const accountId = acc.body.data.id;
  const user = await admin('POST', `/accounts/${accountId}/users`, {
    email: `u${counter}-${Date.now()}@example.com`,
    name: 'Tester',
    permissions: opts.permissions ?? ['*'],
  });
  const key = await admin('POST', `/accounts/${accountId}/keys`, { name: 'test key', user_id: user.body.data.id });
  const legacy = await admin('POST', `/accounts/${accountId}/keys`, { name: 'legacy key' });
  return {
    accountId,
    accountUid: acc.body.data.uid,
    userId: user.body.data.id,
    token: key.body.data.token,
    legacyToken: legacy.body.data.token,
  };
}

/**
 * Calls `fn` until `ok` holds and answers that value. After 10 s it asks at most once a second: a
 * poll of the API at 5 a second would spend a key's 120 requests a minute (the stack's rate limit)
 * in 24 s, and a slow wait would then end in a 429 instead of its own assertion.
 * When `timeoutMs` passes first it fails with its own message (what was awaited, for how long, the
 * last value seen): handing the last value back, as it once did, let a timed-out wait surface later
 * as an unrelated assertion. `what` names the wait in that message; without it, `ok`'s source does.
 */
export async function eventually<T>(
  fn: () => Promise<T>,
  ok: (v: T) => boolean,
  timeoutMs = 20_000,
  everyMs = 200,
  what?: string,
): Promise<T> {
  const { last, held } = await poll(fn, ok, timeoutMs, everyMs);
  if (held) return last;
  throw new Error(`eventually: ${what ?? shortened(String(ok), 200)} did not hold within ${timeoutMs} ms; last value: ${shown(last)}`);
}

async function poll<T>(
  fn: () => Promise<T>,
  ok: (v: T) => boolean,
  timeoutMs: number,
  everyMs: number,
): Promise<{ last: T; held: boolean }> {
  const started = Date.now();
  const deadline = started + timeoutMs;
  for (;;) {
    const last = await fn();
    if (ok(last)) return { last, held: true };
    if (Date.now() > deadline) return { last, held: false };
    await new Promise((r) => setTimeout(r, Date.now() - started > 10_000 ? Math.max(everyMs, 1000) : everyMs));
  }
}

const shortened = (text: string, max: number) => {
  const flat = text.replace(/\s+/g, ' ');
  return flat.length > max ? `${flat.slice(0, max)}… (${flat.length} characters)` : flat;
};
/** A last value as the failure message shows it: an API reply or a row list can be long, so it is cut. */
const shown = (value: unknown) => shortened(inspect(value, { depth: 4, breakLength: Infinity }), 800);

export const sim = <T = any>(method: string, path: string, body?: unknown) => http<T>(method, `${SIM_URL}${path}`, { body });

let phoneSeq = Date.now() % 900_000;
/** A phone number unique within this run (process id + counter); never ending in 0000 (the simulator's undeliverable numbers). */
export function uniquePhone(prefix = '2557'): string {
  let n: number;
  do {
    n = ++phoneSeq % 1_000_000;
  } while (n % 10_000 === 0);
  return `+${prefix}${String(process.pid % 1000).padStart(3, '0')}${String(n).padStart(6, '0')}`;
}
