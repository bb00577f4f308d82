// Immediate SMS sends against a local stack, beside the engine's own ceiling in the same run.
//   npm run bench:send [-- --seconds 20 --rate 500 --connections 64 --clients 50 --burst 10000 --max-in-flight 1000 --onset-seconds 5]
// Prints JSON figures; docs/benchmarks.md records them with this command.
import fs from 'node:fs';
import os from 'node:os';
import { Connection, Client } from '@temporalio/client';
import pg from 'pg';
import { benchStack, load, openLoop, jsonPoster, numberArg, sampleWaits, stackCpuSeconds } from './lib.js';

const seconds = numberArg('seconds', 20);
const clients = numberArg('clients', 50);
const burst = numberArg('burst', 10_000);
const rate = numberArg('rate', 500);
const maxInFlight = numberArg('max-in-flight', 1000);
// The open loop's client connections (wrk2-style): a fixed set, so the phase measures the service and
// not TCP set-up; requests beyond it wait in the client, and that wait counts in their latency.
const connections = numberArg('connections', 64);
const onsetSeconds = numberArg('onset-seconds', 5);
// `--onsets N`: N more streams from idle before the measured one (each after a drain and 3 s of
// quiet), reported as `earlierOnsets`: one onset is a small sample of a noisy moment.
const onsets = numberArg('onsets', 0);
// Diagnosis: `--pause worker` (or simulator) stops that process for the open loop (SIGSTOP, then
// SIGCONT), to see what the sends' tail owes to the dispatch and its callbacks sharing the machine.
const pauseIndex = process.argv.indexOf('--pause');
const pause = pauseIndex > 0 ? process.argv[pauseIndex + 1] : null;
// Diagnosis: `--sample-waits` reports what the database's backends wait on over the onset and the window.
const sampling = process.argv.includes('--sample-waits');
const { stack, dir, token, accountId, operator } = await benchStack();
const connection = await Connection.connect({ address: stack.temporalAddress });
const temporal = new Client({ connection });
const out: Record<string, unknown> = { machine: `${os.cpus().length} cores`, clients, rate, seconds };
const loadAverage: Record<string, number> = {};
const noteLoad = (phase: string) => {
  loadAverage[phase] = Math.round(os.loadavg()[0] * 10) / 10;
};
out.loadAverage1m = loadAverage;

const post = jsonPoster(stack.apiUrl, { authorization: `Bearer ${token}` }, maxInFlight);
const openLoopPost = jsonPoster(stack.apiUrl, { authorization: `Bearer ${token}` }, connections);
let n = 0;
let accepted = 0;
const sendWith = (poster: typeof post) => async () => {
  const res = await poster('/api/v3/sms/send', { recipient: `+2557${String(10_000_000 + n++).slice(-8)}1`, message: 'Benchmark message' });
  if (res.status !== 201) throw new Error(String(res.status));
  accepted++;
  return res.body.data.messages[0].status as string;
};
const send = sendWith(post);
const simCount = async () => ((await (await fetch(`${stack.simulatorUrl}/_sim/sms/messages?limit=0`)).json()) as any).count as number;
/** Waits until the simulator has every accepted send (so one phase's backlog does not load the next). */
const drain = async (maxSeconds: number) => {
  const t0 = performance.now();
  let pending = accepted - (await simCount());
  while (pending > 0 && performance.now() - t0 < maxSeconds * 1000) {
    await new Promise((r) => setTimeout(r, 1000));
    pending = accepted - (await simCount());
  }
  return { seconds: Math.round((performance.now() - t0) / 100) / 10, pending: Math.max(0, pending) };
};

try {
  // 1. The engine's ceiling: bare workflow starts (no worker polls this queue, so nothing else runs).
  noteLoad('start');
  out.bareWorkflowStart = await load(clients, 1e9, seconds / 2, async (i) => {
    await temporal.workflow.start('messageWorkflow', { taskQueue: 'bench-no-worker', workflowId: `bench-bare-${i}`, args: [] });
    return 'started';
  });

  // 1b. The database's own floor for the same work: one message row inserted per call, 50 at a time.
  const pool = new pg.Pool({ connectionString: stack.databaseUrl, max: clients });
  let k = 0;
  out.bareInsert = await load(clients, 1e9, seconds / 2, async () => {
    await pool.query(
      `insert into messages (uid, account_id, direction, channel_type, recipient, body, status, dispatch_mode, created_at, updated_at)
                      values ($1, $2, 'outbound', 'sms', '+255700000001', 'floor', 'failed', 'bench', now(), now())`,
      [`bench_${k++}`, accountId],
    );
    return 'inserted';
  });
  await pool.end();

  // 2. Sustained sends at a fixed arrival rate (open loop): the target (500/s, p99 < 50 ms) can only
  //    be judged this way. 50 closed-loop clients at 500/s would by Little's law average 100 ms.
  //    A short warm-up first (JIT, pools, connections), drained so it does not load the phase.
  noteLoad('beforeWarmUp');
  out.warmUp = await load(10, Math.min(500, rate), 30, send);
  out.warmUpDrain = await drain(60);
  noteLoad('beforeOpenLoop');
  // The API's event loop and collections over the open loop (prom-client resets the loop's delay
  // histogram at each scrape, so the first one only starts the window).
  const apiMetrics = async () => {
    const text = await (await fetch(`${stack.apiUrl}/metrics`, { headers: { authorization: `Bearer ${operator}` } })).text();
    const value = (name: string) => Number(new RegExp(`^${name}(?:\\{[^}]*\\})? ([0-9.e+-]+)$`, 'm').exec(text)?.[1] ?? NaN);
    const gc = (kind: string, what: 'sum' | 'count') =>
      Number(new RegExp(`^nodejs_gc_duration_seconds_${what}\\{kind="${kind}"\\} ([0-9.e+-]+)$`, 'm').exec(text)?.[1] ?? 0);
    return {
      loopDelayMaxMs: Math.round(value('nodejs_eventloop_lag_max_seconds') * 1000),
      loopDelayP99Ms: Math.round(value('nodejs_eventloop_lag_p99_seconds') * 1000),
      majorGcSeconds: gc('major', 'sum'),
      majorGcs: gc('major', 'count'),
      minorGcSeconds: gc('minor', 'sum'),
    };
  };
  /** The API's loop delay over the scrapes' window (the later scrape's) and the collections between them. */
  const apiFigures = (start: Awaited<ReturnType<typeof apiMetrics>>, end: Awaited<ReturnType<typeof apiMetrics>>) => ({
    loopDelayMaxMs: end.loopDelayMaxMs,
    loopDelayP99Ms: end.loopDelayP99Ms,
    majorGcs: end.majorGcs - start.majorGcs,
    majorGcMs: Math.round((end.majorGcSeconds - start.majorGcSeconds) * 1000),
    minorGcMs: Math.round((end.minorGcSeconds - start.minorGcSeconds) * 1000),
  });
  // The stream's first seconds from idle, reported apart (openLoopOnset): the API's pool and the
  // client's connections grow, and admission control lets the first few sends of a quiet second
  // wait for their first outcome. The window measured next is the same stream, already flowing.
  const earlierOnsets = [];
  for (let i = 0; i < onsets; i++) {
    const o = await openLoop(rate, onsetSeconds, sendWith(openLoopPost), { maxInFlight, graceSeconds: 30 });
    earlierOnsets.push({
      p50: o.p50,
      p99: o.p99,
      max: o.max,
      over50ms: o.slowSeconds.reduce((n, s) => n + s.over50ms, 0),
      statuses: o.statuses,
    });
    await drain(60);
    await new Promise((r) => setTimeout(r, 3000));
  }
  if (onsets) out.earlierOnsets = earlierOnsets;
  const metricsBeforeOnset = await apiMetrics();
  let waits = sampling ? sampleWaits(stack.databaseUrl) : null;
  out.openLoopOnset = await openLoop(rate, onsetSeconds, sendWith(openLoopPost), { maxInFlight, graceSeconds: 30 });
  if (waits) out.openLoopOnsetWaits = await waits();
  // With EMBEDDED_PG_SETTINGS="shared_preload_libraries=pg_stat_statements": the open loop's
  // slowest statements (max and mean time), to find what holds a send's tail.
  const statementsPool = new pg.Pool({ connectionString: stack.databaseUrl, max: 1 });
  const withStatements = process.env.EMBEDDED_PG_SETTINGS?.includes('pg_stat_statements') ?? false;
  if (withStatements) {
    await statementsPool.query('create extension if not exists pg_stat_statements');
    await statementsPool.query('select pg_stat_statements_reset()');
  }
  const metricsAtStart = await apiMetrics();
  out.openLoopOnsetApi = apiFigures(metricsBeforeOnset, metricsAtStart);
  const paused = pause ? stack.children.get(pause) : undefined;
  if (pause && !paused) throw new Error(`--pause: no process ${pause}`);
  paused?.kill('SIGSTOP');
  waits = sampling ? sampleWaits(stack.databaseUrl) : null;
  const cpuBefore = stackCpuSeconds(stack, dir);
  const windowStart = new Date();
  // Checkpoints and full-page images over the window (after a checkpoint starts, the first change
  // to each page logs the whole page), and the database connections opened in it (a new backend
  // loads its catalog caches and plans the named statements again).
  const walState = async () =>
    (
      await statementsPool.query<{ checkpoints: number; fpi: string; wal_mb: number; opened: number }>(
        `select (select (num_timed + num_requested)::int from pg_stat_checkpointer) as checkpoints,
                (select wal_fpi::text from pg_stat_wal) as fpi, round((pg_current_wal_insert_lsn() - '0/0') / 1048576.0)::int as wal_mb,
                (select sessions::int from pg_stat_database where datname = current_database()) as opened`,
      )
    ).rows[0];
  const walBefore = await walState();
  const acceptedAtWindow = accepted;
  try {
    out.openLoopSend = {
      connections,
      paused: pause,
      ...(await openLoop(rate, seconds, sendWith(openLoopPost), { maxInFlight, graceSeconds: 30 })),
    };
  } finally {
    paused?.kill('SIGCONT');
  }
  // Each process's CPU over the window (and its grace) per send accepted in it, in ms: what a send
  // costs end to end (its request, its dispatch, its callbacks), the simulator's apart.
  const cpuAfter = stackCpuSeconds(stack, dir);
  out.openLoopCpuMsPerSend = Object.fromEntries(
    Object.keys(cpuAfter).map((k) => [
      k,
      Math.round(((cpuAfter[k] - cpuBefore[k]) * 1e6) / Math.max(1, accepted - acceptedAtWindow)) / 1000,
    ]),
  );
  if (waits) out.openLoopWaits = await waits();
  out.openLoopApi = apiFigures(metricsAtStart, await apiMetrics());
  if (withStatements)
    out.openLoopSlowestStatements = (
      await statementsPool.query(
        `select calls::int, round(max_exec_time::numeric, 1)::float as max_ms, round(mean_exec_time::numeric, 2)::float as mean_ms,
                left(regexp_replace(query, '[[:space:]]+', ' ', 'g'), 120) as query
           from pg_stat_statements order by max_exec_time desc limit 8`,
      )
    ).rows;
  // Where the database's time went over the window: execution and (with
  // pg_stat_statements.track_planning=on) planning, costliest first.
  if (withStatements)
    out.openLoopCostliestStatements = (
      await statementsPool.query(
        `select calls::int, plans::int, round(total_exec_time::numeric)::int as exec_ms, round(total_plan_time::numeric)::int as plan_ms,
                left(regexp_replace(query, '[[:space:]]+', ' ', 'g'), 120) as query
           from pg_stat_statements order by total_exec_time + total_plan_time desc limit 8`,
      )
    ).rows;
  const walAfter = await walState();
  out.openLoopDatabase = {
    // To line the window up with a probe outside the bench (a CPU sampler, the database's log).
    windowStartedAt: windowStart.toISOString(),
    checkpointsStarted: walAfter.checkpoints - walBefore.checkpoints,
    fullPageImages: Number(walAfter.fpi) - Number(walBefore.fpi),
    walMb: walAfter.wal_mb - walBefore.wal_mb,
    connectionsOpened: walAfter.opened - walBefore.opened,
  };
  // Autovacuum runs that ended inside the window (their CPU and I/O share the machine with the sends).
  out.openLoopAutovacuum = (
    await statementsPool.query(
      `select relname, round(extract(epoch from last_autovacuum - $1::timestamptz))::int as vacuum_ended_s,
              round(extract(epoch from last_autoanalyze - $1::timestamptz))::int as analyze_ended_s
         from pg_stat_user_tables where last_autovacuum > $1 or last_autoanalyze > $1`,
      [windowStart],
    )
  ).rows;
  await statementsPool.end();
  noteLoad('afterOpenLoop');
  out.openLoopDrain = await drain(120);

  // 2b. Sustained immediate sends from 50 closed-loop clients (auth, rate limit, insert, update-with-start).
  out.sustainedSend = await load(clients, 1e9, seconds, send);
  noteLoad('afterSustained');
  out.sustainedDrain = await drain(120);

  // 3. A burst of `burst` sends from `clients` clients: nothing may error or be lost.
  const before = await simCount();
  const acceptedBefore = accepted;
  out.burst = await load(clients, burst, 600, send);
  noteLoad('afterBurst');
  const drainStart = performance.now();
  let received = before;
  for (;;) {
    received = await simCount();
    if (received >= accepted || performance.now() - drainStart > 600_000) break;
    await new Promise((r) => setTimeout(r, 1000));
  }
  // Every 201 of the whole run should reach the provider exactly once: simulator total = accepted total.
  out.burstDrain = {
    burstAccepted: accepted - acceptedBefore,
    providerReceived: received - before,
    expected: burst,
    drainSeconds: Math.round((performance.now() - drainStart) / 100) / 10,
    run: { accepted, providerReceived: received },
  };
} finally {
  await connection.close();
  await stack.stop();
  fs.rmSync(dir, { recursive: true, force: true });
}
process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
