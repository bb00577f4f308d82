// Payments taken from request to paid by the provider's callbacks (issue 26, point 8), through the
// real stack: a private stack (embedded PostgreSQL, in-memory Temporal dev server, one worker, the
// API, the simulator's M-Pesa with `--result-delay` ms before the payer "answers").
//
//   1. The engine's floor, on the same Temporal dev server: a trivial workflow that only counts
//      signals (bench/signal-sink.workflow.ts), run by a worker in this process.
//      a. signal-with-start, one workflow per call that ends at its first signal (a start and a
//         signal, as each payment has): calls accepted per second, and workflows finished per second;
//      b. signals to `--clients` running sink workflows: accepted per second, and handled per second.
//      Both `--engine-count` calls from `--clients` concurrent loops.
//   2. `--count` payments requested through the operator API (POST /admin/v1/accounts/{account}/
//      payments with a payer: draft, its workflow started after the commit), from `--clients`
//      loops, with at most `--window` payments requested and not yet paid at any moment (so the
//      backlog, and with it the latency, stays bounded). Each workflow pushes the prompt to the
//      simulator (draft → pending), the simulator posts the signed result to the API's callback
//      `--result-delay` ms later, the ingress signals the workflow, and the workflow moves the
//      payment to paid (recordMove: timeline row, charge legs, business event).
//   Figures: paid per second (the first request to the last paid timeline row, both PostgreSQL's
//   clock); callback-to-state latency, from the simulator's first attempt to post the callback
//   (`/_sim/callbacks`) to the payment's paid timeline row; request-to-paid; the sources of the
//   paid moves (provider: the callback; provider_poll: the workflow's status poll got there first);
//   CPU seconds per process. Every payment must reach paid once, with a balanced ledger.
//   npm run bench:payments-callbacks [-- --count 10000 --clients 20 --window 200 --result-delay 100 --engine-count 2000 --timeout 3600]
import fs from 'node:fs';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime, Worker, bundleWorkflowCode } from '@temporalio/worker';
import { benchStack, jsonPoster, load, numberArg, percentile, stackCpuSeconds } from './lib.js';

const count = numberArg('count', 10_000);
const clients = numberArg('clients', 20);
const windowSize = numberArg('window', 200);
const resultDelayMs = numberArg('result-delay', 100);
const engineCount = numberArg('engine-count', 2000);
const timeoutSeconds = numberArg('timeout', 3600);

const started = performance.now();
const progress = (msg: string) => process.stderr.write(`[${((performance.now() - started) / 1000).toFixed(0).padStart(5)} s] ${msg}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const r1 = (n: number) => Math.round(n * 10) / 10;
const dist = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return { count: s.length, p50: r1(percentile(s, 50)), p90: r1(percentile(s, 90)), p99: r1(percentile(s, 99)), max: r1(s.at(-1) ?? 0) };
};

const { stack, dir, accountId, operator } = await benchStack({ SIM_CALLBACK_LOG_LIMIT: String(count * 2 + 1000) });
const pool = new pg.Pool({ connectionString: stack.databaseUrl, max: 4 });
const connection = await Connection.connect({ address: stack.temporalAddress });
const temporal = new Client({ connection });
const out: Record<string, unknown> = {
  count,
  clients,
  window: windowSize,
  resultDelayMs,
  engineCount,
  machine: `${os.cpus().length} cores`,
};
const loadAverage: Record<string, number> = {};
const noteLoad = (phase: string) => {
  loadAverage[phase] = Math.round(os.loadavg()[0] * 10) / 10;
};
out.loadAverage1m = loadAverage;
const problems: string[] = [];

/** How many sink workflows have finished, in all (the dev server's visibility; the two floors run one after the other). */
const sinksDone = async () => (await temporal.workflow.count(`WorkflowType = 'benchSignalSink' AND ExecutionStatus = 'Completed'`)).count;
const waitSinks = async (n: number, t0: number) => {
  for (;;) {
    const done = await sinksDone();
    if (done >= n || performance.now() - t0 > 600_000) return { done, seconds: (performance.now() - t0) / 1000 };
    await sleep(200);
  }
};

let worker: Worker | null = null;
let workerRun: Promise<void> | null = null;
try {
  // ---- 1. the engine's floor --------------------------------------------------------------------
  const taskQueue = 'bench-signal-sink';
  const workflowBundle = await bundleWorkflowCode({
    workflowsPath: fileURLToPath(new URL('./signal-sink.workflow.ts', import.meta.url)),
    logger: { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error() {} },
  });
  // The worker's own state changes are not figures: warnings only.
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const native = await NativeConnection.connect({ address: stack.temporalAddress });
  worker = await Worker.create({ connection: native, taskQueue, workflowBundle });
  workerRun = worker.run();
  noteLoad('engine');

  // a. signal-with-start, a workflow per call that ends at its first signal.
  let t0 = performance.now();
  const sws = await load(clients, engineCount, 600, async (i) => {
    await temporal.workflow.signalWithStart('benchSignalSink', {
      taskQueue,
      workflowId: `sws-${i}`,
      args: [1],
      signal: 'sink',
      signalArgs: [i],
    });
    return 'accepted';
  });
  const swsDone = await waitSinks(engineCount, t0);
  const signalWithStart = {
    acceptedPerSecond: sws.perSecond,
    p50Ms: sws.p50,
    p99Ms: sws.p99,
    errors: sws.errors,
    finished: swsDone.done,
    finishedPerSecond: r1(swsDone.done / swsDone.seconds),
  };
  progress(`engine: signal-with-start ${sws.perSecond}/s accepted, ${signalWithStart.finishedPerSecond}/s finished`);

  // b. signals to running workflows, `clients` of them, one loop each.
  const per = Math.ceil(engineCount / clients);
  for (let c = 0; c < clients; c++) await temporal.workflow.start('benchSignalSink', { taskQueue, workflowId: `sig-${c}`, args: [per] });
  t0 = performance.now();
  const sent = new Array<number>(clients).fill(0);
  const sig = await load(clients, per * clients, 600, async (i) => {
    const c = i % clients;
    sent[c]++;
    await temporal.workflow.getHandle(`sig-${c}`).signal('sink', i);
    return 'accepted';
  });
  const sigDone = await waitSinks(engineCount + clients, t0);
  const signals = {
    acceptedPerSecond: sig.perSecond,
    p50Ms: sig.p50,
    p99Ms: sig.p99,
    errors: sig.errors,
    handledPerSecond: r1((per * clients) / sigDone.seconds),
  };
  progress(`engine: signals ${sig.perSecond}/s accepted, ${signals.handledPerSecond}/s handled`);
  out.engine = { signalWithStart, signals };
  worker.shutdown();
  await workerRun;
  worker = null;
  await native.close();

  // ---- 2. payments, request to paid ---------------------------------------------------------------
  const sim = await fetch(`${stack.simulatorUrl}/_sim/payments/config`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ resultDelayMs }),
  });
  if (sim.status !== 200) throw new Error(`simulator config: ${sim.status}`);
  const post = jsonPoster(stack.apiUrl, { authorization: `Bearer ${operator}` }, clients);
  let requested = 0;
  let paid = 0;
  let ended = 0; // failed, expired or cancelled: each is a problem here
  let polling = true;
  const poller = (async () => {
    while (polling) {
      const r = (
        await pool.query(
          `select count(*) filter (where state = 'paid')::int as paid,
                  count(*) filter (where state in ('failed', 'expired', 'cancelled'))::int as ended
             from payments where account_id = $1 and not is_refund`,
          [accountId],
        )
      ).rows[0];
      paid = r.paid;
      ended = r.ended;
      await sleep(200);
    }
  })();
  const cpu0 = stackCpuSeconds(stack, dir);
  noteLoad('payments');
  const t1 = performance.now();
  let lastReport = t1;
  const requests = await load(clients, count, timeoutSeconds, async (i) => {
    while (requested - paid - ended >= windowSize) await sleep(20);
    requested++;
    const res = await post(`/admin/v1/accounts/${accountId}/payments`, {
      amount_minor: 150_000,
      currency: 'KES',
      payer: `+2547${String(10_000_000 + i).slice(-8)}`,
      // Not an order: a paid order payment also settles its order (where the orders family is wired
      // to payments), and this measures the payment's own path.
      subject_type: 'invoice',
      subject_id: `bench-${i}`,
    });
    if (res.status !== 201) {
      requested--;
      throw new Error(`${res.status} ${JSON.stringify(res.body).slice(0, 300)}`);
    }
    if (performance.now() - lastReport > 30_000) {
      lastReport = performance.now();
      progress(`  requested ${requested}, paid ${paid}, ended otherwise ${ended}`);
    }
    return '201';
  });
  progress(`requested ${requests.count} (${requests.perSecond}/s, ${requests.errors} errors); waiting for the last to be paid`);
  const deadline = t1 + timeoutSeconds * 1000;
  while (paid + ended < requests.count - requests.errors && performance.now() < deadline) await sleep(200);
  const wallSeconds = (performance.now() - t1) / 1000;
  const cpu1 = stackCpuSeconds(stack, dir);
  polling = false;
  await poller;
  noteLoad('afterPayments');
  progress(`paid ${paid} of ${requests.count} in ${r1(wallSeconds)} s (ended otherwise: ${ended})`);

  // Latencies: the simulator's callback attempts beside the payments' paid timeline rows.
  const rows = (
    await pool.query(
      `select p.provider_ref, extract(epoch from p.created_at) * 1000 as requested_ms,
              extract(epoch from e.occurred_at) * 1000 as paid_ms, e.source
         from payments p join payment_events e on e.payment_id = p.id and e.new_state = 'paid' and e.refused is null
        where p.account_id = $1 and not p.is_refund`,
      [accountId],
    )
  ).rows as { provider_ref: string; requested_ms: string; paid_ms: string; source: string }[];
  const callbacks = (
    (await (await fetch(`${stack.simulatorUrl}/_sim/callbacks?provider=payment&kind=payment.result`)).json()) as {
      callbacks: { messageId: string; attempts: { at: string; statusCode: number | null }[]; delivered: boolean }[];
    }
  ).callbacks;
  const sentAt = new Map<string, number>();
  let retried = 0;
  let undelivered = 0;
  for (const c of callbacks) {
    if (c.attempts.length > 1) retried++;
    if (!c.delivered) undelivered++;
    if (c.attempts[0] && !sentAt.has(c.messageId)) sentAt.set(c.messageId, Date.parse(c.attempts[0].at));
  }
  const callbackToPaid: number[] = [];
  const requestToPaid: number[] = [];
  const requestToCallback: number[] = [];
  const sources: Record<string, number> = {};
  let firstRequest = Infinity;
  let lastPaid = 0;
  for (const r of rows) {
    const req = Number(r.requested_ms);
    const at = Number(r.paid_ms);
    firstRequest = Math.min(firstRequest, req);
    lastPaid = Math.max(lastPaid, at);
    sources[r.source] = (sources[r.source] ?? 0) + 1;
    requestToPaid.push(at - req);
    const cb = sentAt.get(r.provider_ref);
    if (cb !== undefined && r.source === 'provider') {
      callbackToPaid.push(at - cb);
      requestToCallback.push(cb - req);
    }
  }
  const paidSeconds = (lastPaid - firstRequest) / 1000;
  const ledger = (
    await pool.query(
      `select count(*)::int as legs,
              count(*) filter (where payment_id in (select payment_id from ledger_entries where account_id = $1
                 group by payment_id having sum(case when direction = 'debit' then amount_minor else -amount_minor end) <> 0))::int as unbalanced
         from ledger_entries where account_id = $1`,
      [accountId],
    )
  ).rows[0];
  const timelines = (
    await pool.query(`select count(*)::int as refused from payment_events where account_id = $1 and refused is not null`, [accountId])
  ).rows[0];
  out.payments = {
    requested: requests.count,
    requestErrors: requests.errors,
    requestsPerSecond: requests.perSecond,
    requestP50Ms: requests.p50,
    requestP99Ms: requests.p99,
    paid: rows.length,
    endedOtherwise: ended,
    wallSeconds: r1(wallSeconds),
    paidPerSecond: r1(rows.length / paidSeconds),
    paidSources: sources,
    callbackToPaidMs: dist(callbackToPaid),
    requestToPaidMs: dist(requestToPaid),
    requestToCallbackMs: dist(requestToCallback),
    callbacks: { sent: callbacks.length, retried, undelivered },
    ledger: { legs: ledger.legs, unbalancedLegs: ledger.unbalanced, expectedLegs: rows.length * 2 },
    refusedMoves: timelines.refused,
    cpuSeconds: Object.fromEntries(Object.entries(cpu1).map(([k, v]) => [k, r1(v - (cpu0[k] ?? 0))])),
  };
  if (rows.length !== requests.count - requests.errors)
    problems.push(`${rows.length} paid of ${requests.count - requests.errors} requested`);
  if (requests.errors) problems.push(`${requests.errors} requests failed`);
  if (ledger.unbalanced || ledger.legs !== rows.length * 2) problems.push(`ledger: ${ledger.legs} legs, ${ledger.unbalanced} unbalanced`);
  const engineRate = signalWithStart.finishedPerSecond;
  out.ratios = {
    paidPerSecondOfSignalWithStartFinished: Math.round((rows.length / paidSeconds / engineRate) * 1000) / 1000,
    paidPerSecondOfSignalsHandled: Math.round((rows.length / paidSeconds / signals.handledPerSecond) * 1000) / 1000,
  };
  out.holds = problems.length ? problems : 'all';
  out.loadAverage = fs.readFileSync('/proc/loadavg', 'utf8').trim();
} finally {
  if (worker) {
    worker.shutdown();
    await workerRun?.catch(() => {});
  }
  await connection.close();
  await pool.end();
  await stack.stop();
  fs.rmSync(dir, { recursive: true, force: true });
}
process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
if (problems.length) process.exitCode = 1;
