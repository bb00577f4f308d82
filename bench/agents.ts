// Agent runs (issue 30, point 8), on a private stack against the simulator's scripted model:
//   1. `runs` concurrent runs (default 200), each of three tool steps (get_profile, get_balance,
//      get_profile: no approval) and four model turns, submitted at once over /api/engine; measured
//      from the first submission to the last run's end: runs/s, and each run's latency;
//   2. the floor, in the same run and at the same concurrency: as many workflows of a worker in
//      this process, each running seven no-op activities one after the other (the bare activity
//      round trip of the same Temporal server).
// The per-step overhead of the durable loop is a run's time per step (its seven activities: four
// model turns, three tool calls) beside the bare round trip; the rest is the model's HTTP answer,
// the tool's handler and the step's records and debit.
//   npm run bench:agents [-- --runs 200]
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime, Worker, bundleWorkflowCode } from '@temporalio/worker';
import { benchStack, numberArg, percentile, r1, r2 } from './lib.js';

const runs = numberArg('runs', 200);
const STEPS = 7;

const started = performance.now();
const progress = (msg: string) => process.stderr.write(`[${((performance.now() - started) / 1000).toFixed(0).padStart(5)} s] ${msg}\n`);
const dist = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return { p50: r1(percentile(s, 50)), p95: r1(percentile(s, 95)), max: r1(s.at(-1) ?? 0) };
};

const { stack, dir, accountId, operator } = await benchStack({
  ENGINE_RATE_LIMIT_PER_MINUTE: '100000000',
  AGENT_TOKEN_PRICE: '0',
  AGENT_TOOL_CALL_PRICE: '0',
});
const connection = await Connection.connect({ address: stack.temporalAddress });
const temporal = new Client({ connection });
const out: Record<string, unknown> = { runs, stepsPerRun: STEPS, machine: `${os.cpus().length} cores` };
const loadAverage: Record<string, number> = { before: r1(os.loadavg()[0]) };
out.loadAverage1m = loadAverage;

const admin = async (method: string, p: string, body?: unknown) => {
  const res = await fetch(`${stack.apiUrl}/admin/v1${p}`, {
    method,
    headers: { authorization: `Bearer ${operator}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = (await res.json()) as any;
  if (res.status >= 300) throw new Error(`${method} ${p}: ${res.status} ${JSON.stringify(json).slice(0, 300)}`);
  return json.data;
};

let worker: Worker | null = null;
let workerRun: Promise<void> | null = null;
try {
  const user = await admin('POST', `/accounts/${accountId}/users`, { email: 'bench@example.com', name: 'Bench', permissions: ['*'] });
  const token = (await admin('POST', `/accounts/${accountId}/keys`, { name: 'bench agents', user_id: user.id })).token as string;
  await admin('PUT', `/accounts/${accountId}/agent-engine`, { engine_enabled: true, api_enabled: true });
  await admin('POST', `/accounts/${accountId}/agents`, {
    name: 'bench',
    instructions: 'Bench agent.',
    mcp_servers: ['account'],
    max_steps: 20,
  });
  const prompt = 'CALL get_profile {}\nCALL get_balance {}\nCALL get_profile {}\nANSWER done';

  // ---- 1. agent runs ----------------------------------------------------------------------------
  progress(`submitting ${runs} runs`);
  const t0 = performance.now();
  const submitted = await Promise.all(
    Array.from({ length: runs }, async (_, i) => {
      const res = await fetch(`${stack.apiUrl}/api/engine/agents/bench/runs`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ prompt: `${prompt}\n# run ${i}` }),
      });
      const body = (await res.json()) as any;
      if (res.status !== 202) throw new Error(`submit ${i}: ${res.status} ${JSON.stringify(body).slice(0, 300)}`);
      return { run: body.run_uuid as string, at: performance.now() };
    }),
  );
  out.submitSeconds = r2((performance.now() - t0) / 1000);
  progress('waiting for the runs');
  const ends = await Promise.all(
    submitted.map(async (s) => {
      const r = (await temporal.workflow.getHandle(`agent-run/${accountId}/${s.run}`).result()) as { status: string };
      return { status: r.status, ms: performance.now() - s.at };
    }),
  );
  const wall = (performance.now() - t0) / 1000;
  loadAverage.agents = r1(os.loadavg()[0]);
  const completed = ends.filter((e) => e.status === 'completed').length;
  const latency = ends.map((e) => e.ms);
  out.agents = {
    completed,
    seconds: r2(wall),
    runsPerSecond: r2(runs / wall),
    runLatencyMs: dist(latency),
    msPerStep: dist(latency.map((ms) => ms / STEPS)),
  };
  // A sample run as the API reports it (the steps' own times).
  const sample = (await (
    await fetch(`${stack.apiUrl}/api/engine/runs/${submitted[0].run}`, { headers: { authorization: `Bearer ${token}` } })
  ).json()) as any;
  out.sampleSteps = sample.steps.map((s: any) => `${s.kind}:${s.name}`).join(' ');

  // ---- 2. the floor: bare activity round trips at the same concurrency ---------------------------
  const taskQueue = 'bench-activity-loop';
  const workflowBundle = await bundleWorkflowCode({
    workflowsPath: fileURLToPath(new URL('./activity-loop.workflow.ts', import.meta.url)),
    logger: { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error() {} },
  });
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const native = await NativeConnection.connect({ address: stack.temporalAddress });
  worker = await Worker.create({
    connection: native,
    taskQueue,
    workflowBundle,
    activities: { noop: async (i: number) => i },
    maxConcurrentActivityTaskExecutions: 40,
    maxConcurrentWorkflowTaskExecutions: 40,
  });
  workerRun = worker.run();
  progress(`floor: ${runs} workflows of ${STEPS} no-op activities`);
  const f0 = performance.now();
  const floor = await Promise.all(
    Array.from({ length: runs }, async (_, i) => {
      const at = performance.now();
      await temporal.workflow.execute('benchActivityLoop', { taskQueue, workflowId: `bench-loop-${i}-${Date.now()}`, args: [STEPS] });
      return performance.now() - at;
    }),
  );
  const floorWall = (performance.now() - f0) / 1000;
  loadAverage.floor = r1(os.loadavg()[0]);
  out.floor = {
    seconds: r2(floorWall),
    workflowsPerSecond: r2(runs / floorWall),
    workflowLatencyMs: dist(floor),
    msPerActivity: dist(floor.map((ms) => ms / STEPS)),
  };
  const a = out.agents as { msPerStep: { p50: number } };
  const f = out.floor as { msPerActivity: { p50: number } };
  out.overheadPerStepMsP50 = r1(a.msPerStep.p50 - f.msPerActivity.p50);
  process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
} finally {
  worker?.shutdown();
  await workerRun?.catch(() => undefined);
  await connection.close();
  await stack.stop();
  (await import('node:fs')).rmSync(dir, { recursive: true, force: true });
}
