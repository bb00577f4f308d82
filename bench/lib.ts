import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startStack, type Stack } from '../scripts/stack.js';
import { freePort } from '../scripts/embedded-pg.js';

// Shared by the benchmarks: a private stack, an account, a load loop and percentiles.
export async function benchStack(extraEnv: Record<string, string> = {}): Promise<{ stack: Stack; dir: string; token: string; accountId: number; operator: string }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-bench-'));
  const operator = 'bench-operator';
  const stack = await startStack({
    dataDir: dir, persistentTemporal: false, apiPort: await freePort(), logToFiles: true,
    extraEnv: { OPERATOR_TOKEN: operator, LOG_LEVEL: 'warn', RATE_LIMIT_PER_MINUTE: '100000000', SIM_RECEIPT_DELAY_MS: '200', ...extraEnv },
  });
  const call = async (p: string, body: unknown) => (await fetch(`${stack.apiUrl}/admin/v1${p}`, {
    method: 'POST', headers: { authorization: `Bearer ${operator}`, 'content-type': 'application/json' }, body: JSON.stringify(body),
  })).json() as Promise<any>;
  const account = (await call('/accounts', { name: 'Bench', wallet_balance: 1e9 })).data;
  const token = (await call(`/accounts/${account.id}/keys`, { name: 'bench' })).data.token;
  return { stack, dir, token, accountId: account.id, operator };
}

export function percentile(sorted: number[], p: number): number {
  if (!sorted.length) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

export interface LoadResult { count: number; seconds: number; perSecond: number; p50: number; p99: number; max: number; errors: number; statuses: Record<string, number> }

/** `clients` loops run `fn` until `total` calls are made or `maxSeconds` pass; each call's latency is kept. */
export async function load(clients: number, total: number, maxSeconds: number, fn: (i: number) => Promise<string>): Promise<LoadResult> {
  const latencies: number[] = [];
  const statuses: Record<string, number> = {};
  let next = 0;
  let errors = 0;
  const started = performance.now();
  const deadline = started + maxSeconds * 1000;
  await Promise.all(Array.from({ length: clients }, async () => {
    while (next < total && performance.now() < deadline) {
      const i = next++;
      const t0 = performance.now();
      try {
        const s = await fn(i);
        statuses[s] = (statuses[s] ?? 0) + 1;
      } catch {
        errors++;
      }
      latencies.push(performance.now() - t0);
    }
  }));
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  const r = (n: number) => Math.round(n * 10) / 10;
  return { count: latencies.length, seconds: r(seconds), perSecond: r(latencies.length / seconds), p50: r(percentile(latencies, 50)), p99: r(percentile(latencies, 99)), max: r(latencies.at(-1) ?? 0), errors, statuses };
}
