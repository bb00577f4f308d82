import fs from 'node:fs';
import http from 'node:http';
import pg from 'pg';
import { privateRunStack, type Stack } from '../scripts/stack.js';

/** A numeric command-line option: `--name 42`, or the fallback. */
export function numberArg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
}

// Shared by the benchmarks: a private stack, an account, a load loop and percentiles.
export async function benchStack(
  extraEnv: Record<string, string> = {},
): Promise<{ stack: Stack; dir: string; token: string; accountId: number; operator: string }> {
  const operator = 'bench-operator';
  const { stack, dataDir: dir } = await privateRunStack('svc-bench', {
    OPERATOR_TOKEN: operator,
    LOG_LEVEL: 'warn',
    RATE_LIMIT_PER_MINUTE: '100000000',
    SIM_RECEIPT_DELAY_MS: '200',
    ...extraEnv,
  });
  const call = async (p: string, body: unknown) =>
    (
      await fetch(`${stack.apiUrl}/admin/v1${p}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${operator}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      })
    ).json() as Promise<any>;
  const account = (await call('/accounts', { name: 'Bench', wallet_balance: 1e9 })).data;
  const token = (await call(`/accounts/${account.id}/keys`, { name: 'bench' })).data.token;
  return { stack, dir, token, accountId: account.id, operator };
}

export function percentile(sorted: number[], p: number): number {
  if (!sorted.length) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

export const r1 = (n: number) => Math.round(n * 10) / 10;
export const r2 = (n: number) => Math.round(n * 100) / 100;
/** p50, p95 and max of latencies in ms, to the hundredth. */
export const stats = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return { p50: r2(percentile(s, 50)), p95: r2(percentile(s, 95)), max: r2(s.at(-1) ?? 0) };
};

/** A progress line on stderr, with the seconds since `started`. */
export const progressLog =
  (started = performance.now()) =>
  (msg: string) =>
    process.stderr.write(`[${((performance.now() - started) / 1000).toFixed(0).padStart(5)} s] ${msg}\n`);

/** The operator API of a bench stack: answers the envelope's `data`, and throws on a refusal. */
export function operatorCaller(apiUrl: string, operator: string) {
  return async (method: string, p: string, body?: unknown) => {
    const res = await fetch(`${apiUrl}/admin/v1${p}`, {
      method,
      headers: { authorization: `Bearer ${operator}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const json = (await res.json()) as any;
    if (res.status >= 300) throw new Error(`${method} ${p}: ${res.status} ${JSON.stringify(json).slice(0, 400)}`);
    return json.data;
  };
}

/**
 * GETs over a keep-alive agent (node:http is lighter on the shared CPU than fetch) with the bearer
 * token `token()` names at each call; the answer's JSON parsed. `close` ends the agent's sockets.
 */
export function jsonGetter(baseUrl: string, token: () => string, maxSockets = 4) {
  const agent = new http.Agent({ keepAlive: true, maxSockets });
  const base = new URL(baseUrl);
  const get = (path: string, headers: Record<string, string> = {}) =>
    new Promise<{ status: number; body: any }>((resolve, reject) => {
      const req = http.request(
        {
          agent,
          host: base.hostname,
          port: base.port,
          path,
          method: 'GET',
          headers: { authorization: `Bearer ${token()}`, accept: 'application/json', ...headers },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            try {
              resolve({ status: res.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) });
            } catch (err) {
              reject(err);
            }
          });
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end();
    });
  return { get, close: () => agent.destroy() };
}

export interface LoadResult {
  count: number;
  seconds: number;
  perSecond: number;
  p50: number;
  p99: number;
  max: number;
  errors: number;
  statuses: Record<string, number>;
}

/** A load result as the benches print it (snake_case, milliseconds named). */
export const loadFigures = (r: LoadResult) => ({
  count: r.count,
  seconds: r.seconds,
  per_second: r.perSecond,
  p50_ms: r.p50,
  p99_ms: r.p99,
  errors: r.errors,
});

/** `clients` loops run `fn` until `total` calls are made or `maxSeconds` pass; each call's latency is kept. */
export async function load(clients: number, total: number, maxSeconds: number, fn: (i: number) => Promise<string>): Promise<LoadResult> {
  const latencies: number[] = [];
  const statuses: Record<string, number> = {};
  let next = 0;
  let errors = 0;
  const started = performance.now();
  const deadline = started + maxSeconds * 1000;
  await Promise.all(
    Array.from({ length: clients }, async () => {
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
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  const r = (n: number) => Math.round(n * 10) / 10;
  return {
    count: latencies.length,
    seconds: r(seconds),
    perSecond: r(latencies.length / seconds),
    p50: r(percentile(latencies, 50)),
    p99: r(percentile(latencies, 99)),
    max: r(latencies.at(-1) ?? 0),
    errors,
    statuses,
  };
}

export interface OpenLoopResult {
  /** Requested arrival rate and window. */
  offeredPerSecond: number;
  seconds: number;
  scheduled: number;
  /** Arrivals actually sent, and those refused because `maxInFlight` requests were already open. */
  started: number;
  refusedAtCap: number;
  /** Successful answers completed inside the arrival window, per second of the window. */
  achievedPerSecond: number;
  /** Requests still open when the last arrival was due, and those still open after the grace period. */
  outstandingAtEnd: number;
  unfinished: number;
  maxInFlight: number;
  /** Latency from each request's scheduled arrival (so client lag and queueing count), in ms. */
  p50: number;
  p99: number;
  max: number;
  /** How late the client started requests after their scheduled arrival (this process's own lag), ms. */
  startLagP99: number;
  errors: number;
  statuses: Record<string, { count: number; p50: number; p99: number }>;
  /** Each second of the window (from its start) with an arrival answered after 50 ms: how many, and the slowest, ms. */
  slowSeconds: Array<{ second: number; over50ms: number; maxMs: number }>;
}

/** Latencies grouped by the second of their arrival. */
function bySecond(xs: Array<[number, number]>) {
  const out = new Map<number, number[]>();
  for (const [at, latency] of xs) {
    const second = Math.floor(at / 1000);
    const xs = out.get(second);
    if (xs) xs.push(latency);
    else out.set(second, [latency]);
  }
  return out;
}

/**
 * Open-loop load: request i is started at `i / rate` seconds whatever the earlier ones are doing
 * (no coordinated omission), for `seconds`, with at most `maxInFlight` open at once (an arrival
 * finding the cap reached is refused and counted, not queued). Latency is measured from the
 * scheduled arrival. After the window, open requests get `graceSeconds` to finish.
 */
export async function openLoop(
  rate: number,
  seconds: number,
  fn: (i: number) => Promise<string>,
  opts: { maxInFlight?: number; graceSeconds?: number } = {},
): Promise<OpenLoopResult> {
  const cap = opts.maxInFlight ?? 1000;
  const scheduled = Math.max(0, Math.round(rate * seconds));
  const intervalMs = 1000 / rate;
  const latencies: number[] = [];
  const lags: number[] = [];
  const byStatus: Record<string, number[]> = {};
  /** [arrival since t0, latency] of each request answered after 50 ms. */
  const slow: Array<[number, number]> = [];
  const open = new Set<Promise<void>>();
  let started = 0;
  let refused = 0;
  let errors = 0;
  let okInWindow = 0;
  let peak = 0;
  const t0 = performance.now() + 20;
  const windowEnd = t0 + seconds * 1000;
  let i = 0;
  while (i < scheduled) {
    const now = performance.now();
    // Start every arrival that is due; then sleep until the next one (timers fire about every ms).
    while (i < scheduled && t0 + i * intervalMs <= now) {
      const due = t0 + i * intervalMs;
      const n = i++;
      if (open.size >= cap) {
        refused++;
        continue;
      }
      started++;
      lags.push(performance.now() - due);
      const p = fn(n)
        .then(
          (status) => {
            const done = performance.now();
            latencies.push(done - due);
            if (done - due > 50) slow.push([due - t0, done - due]);
            (byStatus[status] ??= []).push(done - due);
            if (done <= windowEnd) okInWindow++;
          },
          () => {
            errors++;
            latencies.push(performance.now() - due);
          },
        )
        .finally(() => {
          open.delete(p);
        });
      open.add(p);
      peak = Math.max(peak, open.size);
    }
    if (i < scheduled) await new Promise((r) => setTimeout(r, Math.max(0, t0 + i * intervalMs - performance.now())));
  }
  const stillWaiting = Math.max(0, windowEnd - performance.now());
  if (stillWaiting > 0) await new Promise((r) => setTimeout(r, stillWaiting));
  const outstandingAtEnd = open.size;
  const grace = opts.graceSeconds ?? 30;
  await Promise.race([Promise.all([...open]), new Promise((r) => setTimeout(r, grace * 1000))]);
  const unfinished = open.size;
  const r = (n: number) => Math.round(n * 10) / 10;
  const sorted = (xs: number[]) => xs.sort((a, b) => a - b);
  sorted(latencies);
  sorted(lags);
  const statuses: OpenLoopResult['statuses'] = {};
  for (const [s, xs] of Object.entries(byStatus)) {
    sorted(xs);
    statuses[s] = { count: xs.length, p50: r(percentile(xs, 50)), p99: r(percentile(xs, 99)) };
  }
  return {
    offeredPerSecond: rate,
    seconds,
    scheduled,
    started,
    refusedAtCap: refused,
    achievedPerSecond: r(okInWindow / seconds),
    outstandingAtEnd,
    unfinished,
    maxInFlight: peak,
    p50: r(percentile(latencies, 50)),
    p99: r(percentile(latencies, 99)),
    max: r(latencies.at(-1) ?? 0),
    startLagP99: r(percentile(lags, 99)),
    errors,
    statuses,
    slowSeconds: [...bySecond(slow)].map(([second, xs]) => ({ second, over50ms: xs.length, maxMs: r(Math.max(...xs)) })),
  };
}

/**
 * A JSON POST over node:http with a keep-alive agent: lighter on this (shared) CPU than fetch, so the
 * client takes less of the machine from the service it measures.
 */
export function jsonPoster(baseUrl: string, headers: Record<string, string>, maxSockets = 1000) {
  const agent = new http.Agent({ keepAlive: true, maxSockets });
  const base = new URL(baseUrl);
  return (path: string, body: unknown) =>
    new Promise<{ status: number; body: any }>((resolve, reject) => {
      const payload = Buffer.from(JSON.stringify(body));
      const req = http.request(
        {
          agent,
          host: base.hostname,
          port: base.port,
          path,
          method: 'POST',
          headers: { ...headers, 'content-type': 'application/json', 'content-length': String(payload.length) },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            try {
              resolve({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) : null });
            } catch (err) {
              reject(err);
            }
          });
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end(payload);
    });
}

/** utime + stime (+ cutime + cstime: reaped children) of a process, in seconds; 0 once it is gone. */
function procCpu(pid: number, withReaped: boolean): number {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(f[11]) + Number(f[12]) + (withReaped ? Number(f[13]) + Number(f[14]) : 0);
    return ticks / 100; // USER_HZ = 100
  } catch {
    return 0;
  }
}

/**
 * CPU seconds so far of every process of a bench stack: the three Node processes, the embedded
 * PostgreSQL (its postmaster, reaped backends and live ones) and the Temporal dev server, found by
 * their command lines (the machine may run other PostgreSQL servers). Two readings give a run's
 * share per process: the two cores are saturated, so a run's time follows the sum.
 */
export function stackCpuSeconds(stack: Stack, dataDir: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const name of ['api', 'worker', 'simulator'] as const) {
    const pid = stack.children.get(name)?.pid;
    out[name] = pid ? procCpu(pid, false) : 0;
  }
  const temporalPort = stack.temporalAddress.split(':').pop();
  const procs = fs.readdirSync('/proc').filter((p) => /^\d+$/.test(p));
  const cmdline = (pid: string) => {
    try {
      return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    } catch {
      return [];
    }
  };
  const ppid = (pid: string) => {
    try {
      const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
      return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1];
    } catch {
      return '';
    }
  };
  const postmaster = procs.find((p) => {
    const c = cmdline(p);
    return c[0]?.endsWith('postgres') && c.some((a) => a.startsWith(dataDir));
  });
  out.postgres = postmaster
    ? procCpu(Number(postmaster), true) + procs.filter((p) => ppid(p) === postmaster).reduce((s, p) => s + procCpu(Number(p), false), 0)
    : 0;
  const temporal = procs.find((p) => {
    const c = cmdline(p);
    return c.includes('start-dev') && c.includes(String(temporalPort));
  });
  out.temporal = temporal ? procCpu(Number(temporal), true) : 0;
  for (const k of Object.keys(out)) out[k] = Math.round(out[k] * 10) / 10;
  return out;
}

/**
 * Caps a process at `fraction` of one CPU with a cgroup of its own (v2 `cpu.max`, else v1's CFS
 * quota), as on a machine where that process is the bottleneck; root only. Returns the undo, or
 * null when no cgroup could be made here (the bench then says the cap was not applied).
 */
export function capCpu(pid: number, fraction: number, name: string): (() => void) | null {
  const period = 100_000;
  const quota = Math.max(1000, Math.round(fraction * period));
  const tries: Array<{ dir: string; root: string; set: (dir: string) => void }> = [
    { dir: `/sys/fs/cgroup/${name}`, root: '/sys/fs/cgroup', set: (d) => fs.writeFileSync(`${d}/cpu.max`, `${quota} ${period}`) },
    {
      dir: `/sys/fs/cgroup/cpu/${name}`,
      root: '/sys/fs/cgroup/cpu',
      set: (d) => {
        fs.writeFileSync(`${d}/cpu.cfs_period_us`, String(period));
        fs.writeFileSync(`${d}/cpu.cfs_quota_us`, String(quota));
      },
    },
  ];
  for (const t of tries) {
    try {
      if (!fs.existsSync(t.root) || (t.root === '/sys/fs/cgroup' && !fs.existsSync(`${t.root}/cgroup.controllers`))) continue;
      fs.mkdirSync(t.dir, { recursive: true });
      t.set(t.dir);
      fs.writeFileSync(`${t.dir}/cgroup.procs`, String(pid));
      return () => {
        try {
          // Back to the root group (if it still runs), then the group is empty and can go.
          if (fs.existsSync(`/proc/${pid}`)) fs.writeFileSync(`${t.root}/cgroup.procs`, String(pid));
        } catch {
          /* exited meanwhile */
        }
        try {
          fs.rmdirSync(t.dir);
        } catch {
          /* left for the next run to reuse */
        }
      };
    } catch {
      /* not this hierarchy */
    }
  }
  return null;
}

/**
 * Samples what the database's active backends wait on (pg_stat_activity's wait events, every
 * `everyMs`) until the returned function is called, which answers the mean number of backends in
 * each wait per sample (a lock wait names the waiting statement and the holder's), and a timeline of
 * the first 3 s in 100 ms slots: WAL written (from the insert position: pg_stat_wal is only updated
 * by each backend about once a second), client connections, and backends on the CPU, in a WAL wait,
 * in a lock wait or other. Where a phase's time goes inside PostgreSQL.
 */
export function sampleWaits(databaseUrl: string, everyMs = 10) {
  const client = new pg.Client({ connectionString: databaseUrl });
  const counts = new Map<string, number>();
  const t0 = performance.now();
  const timeline: Array<{ samples: number; walBytes: number; connections: number; waits: Record<string, number> }> = [];
  let samples = 0;
  let running = true;
  const loop = (async () => {
    await client.connect();
    while (running) {
      const { rows } = await client.query<{ what: string }>(
        `select coalesce(backend_type, '') || ' ' || coalesce(wait_event_type || ':' || wait_event, 'cpu')
                || case when wait_event_type = 'Lock' then ' ' || left(regexp_replace(query, '[[:space:]]+', ' ', 'g'), 70)
                          || ' <- ' || coalesce((select left(regexp_replace(b.query, '[[:space:]]+', ' ', 'g'), 70) || ' [' || coalesce(b.wait_event, b.state) || ']'
                                                   from pg_stat_activity b where b.pid = (pg_blocking_pids(a.pid))[1] limit 1), '?') else '' end as what
           from pg_stat_activity a where (state = 'active' or backend_type <> 'client backend') and pid <> pg_backend_pid()`,
      );
      const now = (
        await client.query<{ wal: string; connections: number }>(
          `select (pg_current_wal_insert_lsn() - '0/0')::text as wal,
                  (select count(*)::int from pg_stat_activity where backend_type = 'client backend') as connections`,
        )
      ).rows[0];
      samples++;
      for (const { what } of rows) counts.set(what, (counts.get(what) ?? 0) + 1);
      const slot = Math.floor((performance.now() - t0) / 100);
      if (slot < 30) {
        const b = (timeline[slot] ??= { samples: 0, walBytes: Number(now.wal), connections: now.connections, waits: {} });
        b.samples++;
        for (const { what } of rows) {
          if (/ (Activity|Timeout):|ClientRead/.test(what)) continue;
          const k = / cpu$/.test(what) ? 'cpu' : /Wal|WAL/.test(what) ? 'wal' : / Lock:/.test(what) ? 'lock' : 'other';
          b.waits[k] = (b.waits[k] ?? 0) + 1;
        }
      }
      await new Promise((r) => setTimeout(r, everyMs));
    }
    await client.end();
  })();
  return async () => {
    running = false;
    await loop;
    const per = (n: number, of: number) => Math.round((n / of) * 100) / 100;
    return {
      samples,
      activePerSample: Object.fromEntries(
        [...counts]
          .filter(([what]) => !/ (Activity|Timeout):/.test(what))
          .sort((a, b) => b[1] - a[1])
          .slice(0, 16)
          .map(([what, n]) => [what, per(n, samples)]),
      ),
      first3s: timeline.map((b, i) => ({
        ms: i * 100,
        walKb: timeline[i + 1] ? Math.round((timeline[i + 1].walBytes - b.walBytes) / 1024) : null,
        connections: b.connections,
        ...Object.fromEntries(Object.entries(b.waits).map(([k, n]) => [k, per(n, b.samples)])),
      })),
    };
  };
}
