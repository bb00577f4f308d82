import type http from 'node:http';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { Client } from '@temporalio/client';

/**
 * Liveness and readiness of an API or worker process, for load balancers and orchestrators.
 *
 * - GET /healthz: the process runs and its event loop answers. No dependency is asked: a database
 *   outage must not make an orchestrator restart every replica.
 * - GET /readyz: PostgreSQL answers `select 1` and the Temporal frontend answers GetSystemInfo, each
 *   within READY_TIMEOUT_MS; 503 names what failed, so traffic leaves a replica that cannot serve.
 *
 * Answered ahead of Koa (no auth, no request log line per probe) and absent from the OpenAPI documents.
 */
export const READY_TIMEOUT_MS = 2000;

export interface ReadinessDeps {
  orm: MikroORM;
  temporal: Client;
}

export interface Readiness {
  status: 'ready' | 'not ready';
  checks: { database: CheckResult; temporal: CheckResult };
}
type CheckResult = { ok: true; ms: number } | { ok: false; ms: number; error: string };

async function timed(run: () => Promise<unknown>, timeoutMs: number): Promise<CheckResult> {
  const t0 = performance.now();
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      run(),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
      }),
    ]);
    return { ok: true, ms: Math.round(performance.now() - t0) };
  } catch (err) {
    return { ok: false, ms: Math.round(performance.now() - t0), error: (err as Error).message };
  } finally {
    clearTimeout(timer);
  }
}

export async function checkReadiness(deps: ReadinessDeps, timeoutMs = READY_TIMEOUT_MS): Promise<Readiness> {
  const [database, temporal] = await Promise.all([
    // Through the pool, as requests reach it (MikroORM's own checkConnection reports a pool that has
    // not connected yet as a failure).
    timed(() => deps.orm.em.getConnection().execute('select 1'), timeoutMs),
    timed(
      () => deps.temporal.connection.withDeadline(Date.now() + timeoutMs, () => deps.temporal.workflowService.getSystemInfo({})),
      timeoutMs,
    ),
  ]);
  return { status: database.ok && temporal.ok ? 'ready' : 'not ready', checks: { database, temporal } };
}

/**
 * A request handler for the two probe paths; false for any other request, which the caller serves.
 * `stopping()` true turns /readyz to 503 at once, so a balancer stops sending new requests while the
 * process finishes the ones it has.
 */
export function probeHandler(deps: ReadinessDeps, stopping: () => boolean = () => false) {
  return (req: http.IncomingMessage, res: http.ServerResponse): boolean => {
    const path = (req.url ?? '').split('?')[0];
    if (path !== '/healthz' && path !== '/readyz') return false;
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { allow: 'GET, HEAD', 'content-type': 'application/json' }).end('{"status":"error","message":"GET only"}');
      return true;
    }
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' });
      res.end(req.method === 'HEAD' ? undefined : JSON.stringify(body));
    };
    if (path === '/healthz') {
      send(200, { status: 'ok', uptime_seconds: Math.round(process.uptime()) });
      return true;
    }
    if (stopping()) {
      send(503, { status: 'stopping' });
      return true;
    }
    checkReadiness(deps).then(
      (r) => send(r.status === 'ready' ? 200 : 503, r),
      (err: unknown) => send(503, { status: 'not ready', error: (err as Error).message }),
    );
    return true;
  };
}
