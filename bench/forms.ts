// A form sent to many recipients who all answer through the simulator (issue 29, point 6), on a
// private stack. An account with a WhatsApp number and a published three-question form; the
// simulator's customers-answer policy completes every native form (nfm_reply) the moment it is
// delivered; every recipient's 24-hour window is opened first (they wrote in). Measured in one run:
//   1. the engine's floor: `recipients` bare workflows (bench/signal-sink.workflow.ts) started with
//      signal-with-start and ended by that one signal, on a worker in this process: the least a
//      workflow that is started and told one thing costs the engine;
//   2. the form: POST /api/v3/forms/{id}/sends once per recipient (`concurrency` at a time): one
//      session row and one form-session workflow each, which sends the Flow message (a message
//      record and its message workflow), takes the answer from the chat ingress (signal), checks
//      and stores it, and emits form.submitted. The time to the last answer recorded
//      (max(submitted_at) − first send) and the CPU seconds of every process of the stack per
//      session, beside the floor's per workflow.
//   npm run bench:forms [-- --recipients 10000 --concurrency 32]
import os from 'node:os';
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime, Worker, bundleWorkflowCode } from '@temporalio/worker';
import { benchStack, jsonPoster, load, loadFigures, numberArg, operatorCaller, progressLog, r1, r2, stackCpuSeconds } from './lib.js';

const recipients = numberArg('recipients', 10_000);
const concurrency = numberArg('concurrency', 32);
const progress = progressLog();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const out: Record<string, unknown> = { recipients, concurrency, cpus: os.cpus().length };
const loadAverage: Record<string, number[]> = {};
const noteLoad = (phase: string) => void (loadAverage[phase] = os.loadavg().map((x) => r1(x)));

const { stack, dir, accountId, operator } = await benchStack();
const adminCall = operatorCaller(stack.apiUrl, operator);
const pool = new pg.Pool({ connectionString: stack.databaseUrl, max: 4 });
const connection = await Connection.connect({ address: stack.temporalAddress });
const temporal = new Client({ connection });
const cpuDelta = (a: Record<string, number>, b: Record<string, number>): Record<string, number> =>
  Object.fromEntries(Object.keys(b).map((k) => [k, r1(b[k] - (a[k] ?? 0))]));
const sum = (o: Record<string, number>) => Object.values(o).reduce((s, x) => s + x, 0);

try {
  // ---- setup: a user's key, a WhatsApp number, a published form ------------------------------------
  const user = await adminCall('POST', `/accounts/${accountId}/users`, { email: 'bench@example.com', name: 'Bench', permissions: ['*'] });
  const token = (await adminCall('POST', `/accounts/${accountId}/keys`, { name: 'forms', user_id: user.id })).token as string;
  const pnid = `58${accountId}0001`;
  await adminCall('POST', `/accounts/${accountId}/phone-numbers`, {
    number: '+255700000501',
    capabilities: ['whatsapp'],
    provider_phone_number_id: pnid,
    business_account_id: `WABA${accountId}`,
  });
  const post = jsonPoster(stack.apiUrl, { authorization: `Bearer ${token}`, accept: 'application/json' }, concurrency + 4);
  const form = (
    await post('/api/v3/forms', {
      name: 'Bench survey',
      intro: 'Three quick questions',
      questions: [
        { key: 'full_name', type: 'text', label: 'Your name?' },
        { key: 'age', type: 'number', label: 'Your age?', integer: true, min: 18 },
        {
          key: 'plan',
          type: 'choice',
          label: 'Plan?',
          options: [
            { id: 'basic', title: 'Basic' },
            { id: 'pro', title: 'Pro' },
          ],
        },
      ],
    })
  ).body.data;
  await post(`/api/v3/forms/${form.id}/publish`, {});
  const sim = jsonPoster(stack.simulatorUrl, {}, 64);
  // Never ending in 0000: the simulator's numbers that are not on WhatsApp.
  const customer = (i: number) => `+2557${String(i).padStart(7, '0')}1`;
  await load(16, recipients, 600, async (i) => {
    await sim('/_sim/whatsapp/window', { from: customer(i), phone_number_id: pnid });
    return 'open';
  });
  const policy = await fetch(`${stack.simulatorUrl}/_sim/whatsapp/customers/policy`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ native: { full_name: 'Bench Customer', age: '30', plan: 'pro' }, delay_ms: 0 }),
  });
  if (!policy.ok) throw new Error(`policy: ${policy.status}`);
  progress(`setup: form ${form.id}, ${recipients} windows open`);

  // ---- 1. the engine's floor --------------------------------------------------------------------
  const taskQueue = 'bench-form-floor';
  const workflowBundle = await bundleWorkflowCode({
    workflowsPath: fileURLToPath(new URL('./signal-sink.workflow.ts', import.meta.url)),
    logger: { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error() {} },
  });
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const native = await NativeConnection.connect({ address: stack.temporalAddress });
  const worker = await Worker.create({ connection: native, taskQueue, workflowBundle });
  const workerRun = worker.run();
  noteLoad('floor');
  let cpu0 = stackCpuSeconds(stack, dir);
  const bench0 = process.cpuUsage();
  let t0 = performance.now();
  const starts = await load(concurrency, recipients, 1200, async (i) => {
    await temporal.workflow.signalWithStart('benchSignalSink', {
      taskQueue,
      workflowId: `floor-${i}`,
      args: [1],
      signal: 'sink',
      signalArgs: [i],
    });
    return 'started';
  });
  for (;;) {
    const done = (await temporal.workflow.count(`WorkflowType = 'benchSignalSink' AND ExecutionStatus = 'Completed'`)).count;
    if (done >= recipients || performance.now() - t0 > 1_200_000) break;
    await sleep(500);
  }
  const floorSeconds = (performance.now() - t0) / 1000;
  const benchCpu = process.cpuUsage(bench0);
  const floorCpu: Record<string, number> = {
    ...cpuDelta(cpu0, stackCpuSeconds(stack, dir)),
    bench_process: r1((benchCpu.user + benchCpu.system) / 1e6),
  };
  worker.shutdown();
  await workerRun;
  await native.close();
  out.floor = {
    what: 'signal-with-start of a workflow that ends at its one signal (worker in the bench process)',
    starts: loadFigures(starts),
    all_completed_seconds: r1(floorSeconds),
    per_second: r1(recipients / floorSeconds),
    cpu_seconds: floorCpu,
    temporal_cpu_ms_per_workflow: r2((floorCpu.temporal * 1000) / recipients),
    cpu_ms_per_workflow: r2(((floorCpu.temporal + floorCpu.postgres + floorCpu.bench_process) * 1000) / recipients),
  };
  progress(`floor: ${recipients} workflows in ${r1(floorSeconds)} s`);

  // ---- 2. the form --------------------------------------------------------------------------------
  noteLoad('form');
  cpu0 = stackCpuSeconds(stack, dir);
  t0 = performance.now();
  const firstSend = new Date();
  const sends = await load(concurrency, recipients, 1800, async (i) => {
    const r = await post(`/api/v3/forms/${form.id}/sends`, { to: customer(i) });
    return String(r.status);
  });
  progress(`sends: ${sends.perSecond}/s accepted (${JSON.stringify(sends.statuses)})`);
  let submitted = 0;
  for (;;) {
    const r = await pool.query(`select count(*)::int as n from form_sessions where account_id = $1 and status = 'submitted'`, [accountId]);
    submitted = r.rows[0].n;
    if (submitted >= recipients || performance.now() - t0 > 2_400_000) break;
    if (Math.random() < 0.1) progress(`submitted ${submitted}/${recipients}`);
    await sleep(1000);
  }
  const wall = (performance.now() - t0) / 1000;
  const formCpu = cpuDelta(cpu0, stackCpuSeconds(stack, dir));
  const last = await pool.query(
    `select max(submitted_at) as last, count(*) filter (where status = 'submitted')::int as submitted, count(*) filter (where status = 'active')::int as active,
            percentile_cont(0.5) within group (order by extract(epoch from submitted_at - created_at)) as p50,
            percentile_cont(0.99) within group (order by extract(epoch from submitted_at - created_at)) as p99
       from form_sessions where account_id = $1`,
    [accountId],
  );
  const l = last.rows[0];
  const events = await pool.query(`select count(*)::int as n from events where account_id = $1 and kind = 'form.submitted'`, [accountId]);
  out.form = {
    sends: loadFigures(sends),
    statuses: sends.statuses,
    submitted: l.submitted,
    still_active: l.active,
    form_submitted_events: events.rows[0].n,
    seconds_to_last_answer_recorded: r1((new Date(l.last).getTime() - firstSend.getTime()) / 1000),
    wall_seconds: r1(wall),
    answers_per_second: r1(l.submitted / wall),
    send_to_answer_p50_s: r2(Number(l.p50)),
    send_to_answer_p99_s: r2(Number(l.p99)),
    cpu_seconds: formCpu,
    temporal_cpu_ms_per_session: r2((formCpu.temporal * 1000) / recipients),
    cpu_ms_per_session: r2((sum(formCpu) * 1000) / recipients),
  };
  const floor = out.floor as { temporal_cpu_ms_per_workflow: number };
  out.engine_cost_ratio = r2((formCpu.temporal * 1000) / recipients / floor.temporal_cpu_ms_per_workflow);
  noteLoad('end');
  out.load_average = loadAverage;
  process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
  fs.writeFileSync(`/tmp/bench-forms-${recipients}.json`, JSON.stringify(out, null, 2));
} finally {
  await pool.end();
  await connection.close();
  await stack.stop();
  fs.rmSync(dir, { recursive: true, force: true });
}
