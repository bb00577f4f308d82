// Issue 16, point 4: a request id on every request (echoed, in the memo of the workflows it starts),
// Prometheus metrics on the API and the worker, and the worker's Temporal SDK lines in pino JSON.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import crypto from 'node:crypto';
import net from 'node:net';
import { spawn } from 'node:child_process';
import { Client, Connection } from '@temporalio/client';
import { freePort } from '../../scripts/embedded-pg.js';
import { messageWorkflowId } from '../../workflows/messaging/message.starter.js';
import { OPERATOR_TOKEN, eventually, http, newTenant, uniquePhone } from '../support/stack.js';
import { privateStack } from '../support/private-stack.js';

const connection = await Connection.connect({ address: process.env.TEMPORAL_ADDRESS ?? '127.0.0.1:7233' });
const temporal = new Client({ connection });
after(() => connection.close());

/** The value of one series in a Prometheus text scrape (0 when absent). */
function sample(text: string, name: string, labels: Record<string, string>): number {
  const want = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`)) continue;
    const inside = line.slice(name.length + 1, line.lastIndexOf('}'));
    const have = inside.split(',');
    if (want.every((w) => have.includes(w)) && have.length === want.length) return Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return 0;
}

test('a sane X-Request-Id is echoed and lands in the memo of the workflow the request started; a bad one is replaced', async () => {
  const t = await newTenant();
  const requestId = `obs-${crypto.randomUUID()}`;
  const later = new Date(Date.now() + 3600_000).toISOString();
  const sent = await http('POST', '/api/v3/sms/send', {
    token: t.token,
    headers: { 'X-Request-Id': requestId },
    body: { recipient: uniquePhone(), message: 'observed', schedule_time: later },
  });
  assert.equal(sent.status, 201, sent.text);
  assert.equal(sent.headers.get('x-request-id'), requestId);
  const [msg] = sent.body.data.messages;
  const desc = await temporal.workflow.getHandle(messageWorkflowId(t.accountId, msg.uid)).describe();
  assert.equal(desc.memo?.request_id, requestId);
  assert.equal(desc.memo?.messageId, msg.id, 'the starter memo is kept beside it');
  await temporal.workflow.getHandle(messageWorkflowId(t.accountId, msg.uid)).terminate('test done');

  const refused = await http('GET', '/api/v3/messages', { token: t.token, headers: { 'X-Request-Id': 'two words' } });
  assert.match(refused.headers.get('x-request-id') ?? '', /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  const unknown = await http('GET', '/no/such/path');
  assert.equal(unknown.status, 404);
  assert.ok(unknown.headers.get('x-request-id'), 'errors carry an id too');
});

test('/metrics counts requests by route template and status, behind the operator token on a shared listener', async () => {
  assert.equal((await http('GET', '/metrics')).status, 401);
  assert.equal((await http('GET', '/metrics', { token: 'wrong' })).status, 401);
  const t = await newTenant();
  const labels = { method: 'GET', route: '/api/v3/sms/{uid}', status: '404' };
  const before = sample((await http('GET', '/metrics', { token: OPERATOR_TOKEN })).text, 'http_requests_total', labels);
  const rawUid = `msg_nosuch${crypto.randomUUID().slice(0, 8)}`;
  assert.equal((await http('GET', `/api/v3/sms/${rawUid}`, { token: t.token })).status, 404);
  const scrape = await http('GET', '/metrics', { token: OPERATOR_TOKEN });
  assert.equal(scrape.status, 200);
  assert.match(scrape.headers.get('content-type') ?? '', /^text\/plain/);
  assert.ok(sample(scrape.text, 'http_requests_total', labels) >= before + 1, 'the 404 is counted under its template');
  assert.equal(scrape.text.includes(rawUid), false, 'the raw URL never becomes a label');
  assert.ok(sample(scrape.text, 'http_request_duration_seconds_count', { method: 'GET', route: '/api/v3/sms/{uid}' }) >= 1);
  assert.match(scrape.text, /^process_cpu_user_seconds_total \d/m, "Node's process metrics");
  assert.match(scrape.text, /^svc_messages_total\{status="queued"\} \d+/m, 'the send of the first test was counted as queued');
});

test('provider ingress, answered ahead of Koa, carries the request id and is counted like every route', async () => {
  const labels = { method: 'POST', route: '/providers/sms/inbound' };
  const scrape = async () => (await http('GET', '/metrics', { token: OPERATOR_TOKEN })).text;
  const before = sample(await scrape(), 'http_request_duration_seconds_count', labels);
  // Unsigned: refused, and still answered with the caller's id.
  const refused = await http('POST', '/providers/sms/inbound', { headers: { 'X-Request-Id': 'ingress-trace-1' }, body: { to: 'x' } });
  assert.ok(refused.status >= 400 && refused.status < 500, refused.text);
  assert.equal(refused.headers.get('x-request-id'), 'ingress-trace-1');
  const after = await scrape();
  assert.ok(sample(after, 'http_request_duration_seconds_count', labels) >= before + 1);
  assert.ok(sample(after, 'http_requests_total', { ...labels, status: String(refused.status) }) >= 1);
});

test('split listeners: /metrics only on the operator port, without a token; the worker serves its own with the SDK metrics; its SDK lines are pino JSON', async () => {
  const operatorPort = await freePort();
  const workerMetricsPort = await freePort();
  const stack = await privateStack({
    OPERATOR_PORT: String(operatorPort),
    WORKER_METRICS_PORT: String(workerMetricsPort),
    LOG_LEVEL: 'info',
  });
  const dir = process.env.TEST_DATA_DIR;
  assert.ok(dir, 'scripts/test.ts keeps the private stack logs in TEST_DATA_DIR');
  const workerLog = () => path.join(dir, `private-${new URL(stack.apiUrl).port}-worker.log`);
  try {
    assert.equal((await http('GET', `${stack.apiUrl}/metrics`, { token: OPERATOR_TOKEN })).status, 404, 'not on the public port');
    const op = await http('GET', `http://127.0.0.1:${operatorPort}/metrics`);
    assert.equal(op.status, 200);
    assert.match(op.text, /^# TYPE http_requests_total counter/m);

    const worker = await eventually(
      () => http('GET', `http://127.0.0.1:${workerMetricsPort}/metrics`).catch(() => null),
      (r) => r?.status === 200 && /^temporal_\w+/m.test(r.text),
      60_000,
      500,
    );
    assert.equal(worker?.status, 200);
    assert.match(worker!.text, /^# TYPE svc_webhook_deliveries_total counter/m, "the worker's own counters");
    assert.match(worker!.text, /^process_resident_memory_bytes \d/m, "Node's process metrics");
    assert.match(worker!.text, /^temporal_\w+\{[^}]*task_queue="[^"]+"/m, 'the SDK core worker metrics, per task queue');
    assert.equal((await http('GET', `http://127.0.0.1:${workerMetricsPort}/other`)).status, 404);
    // The SDK's metrics exist as soon as the workers are created; the worker is running (and has
    // written its lifecycle lines) only once it says so. Stopped before that, under a loaded
    // machine, it was killed while still registering its dispatchers, with nothing more logged.
    await eventually(
      async () => fs.readFileSync(workerLog(), 'utf8'),
      (text) => text.includes('"msg":"worker started"'),
      60_000,
      500,
    );

    // A long job says where it is: its start and its finish with the figures, at info (issue 25, point 4).
    const t = await newTenant();
    const g = (await http('POST', `${stack.apiUrl}/api/v3/contact-groups`, { token: t.token, body: { name: 'Logged' } })).body.data;
    const started = await http('POST', `${stack.apiUrl}/api/v3/contact-groups/${g.id}/imports`, {
      token: t.token,
      body: { contacts: [{ phone_number: uniquePhone('2557'), name: 'Ann' }, { name: 'no phone' }] },
    });
    assert.equal(started.status, 202, started.text);
    const importId = started.body.data.id;
    const jobLines = await eventually(
      async () =>
        fs
          .readFileSync(workerLog(), 'utf8')
          .split('\n')
          .filter((l) => l.includes(`"importId":${importId}`))
          .map((l) => JSON.parse(l) as Record<string, unknown>),
      (lines) => lines.some((l) => l.msg === 'contact import finished'),
      60_000,
      500,
      `the worker logs import ${importId} finished`,
    );
    assert.ok(
      jobLines.some((l) => l.msg === 'contact import started' && l.level === 30),
      'its start, at info',
    );
    const done = jobLines.find((l) => l.msg === 'contact import finished')!;
    assert.equal(done.level, 30, 'its finish, at info');
    assert.deepEqual([done.total, done.created, done.failed], [2, 1, 1], 'with its figures');
    assert.equal(typeof done.ms, 'number');
  } finally {
    await stack.stop();
  }

  // The API's start and stop too: the MCP SDK's console.warn was its one plain-text line (logger.ts, takeConsole).
  const apiLines = fs
    .readFileSync(path.join(dir, `private-${new URL(stack.apiUrl).port}-api.log`), 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '');
  assert.deepEqual(
    apiLines.filter((l) => !l.startsWith('{')),
    [],
    'every API line is JSON',
  );
  assert.ok(apiLines.some((l) => /"msg":"api listening"/.test(l)));
  const lines = fs
    .readFileSync(workerLog(), 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '');
  // Every line of the worker's start-up and stop is pino JSON (child processes and the SDK's core included).
  assert.deepEqual(
    lines.filter((l) => !l.startsWith('{')),
    [],
    'every line is JSON',
  );
  const json = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
  assert.ok(json.length > 0);
  // Activity-only task queues are by design (worker/create-worker.ts): no warning about them.
  assert.deepEqual(
    json.filter((l) => l.level === 40 && /not polling for/.test(String(l.msg))).map((l) => [l.msg, l.taskQueue]),
    [],
  );
  for (const l of json) {
    assert.equal(typeof l.pid, 'number', JSON.stringify(l));
    assert.equal(l.role, 'worker', JSON.stringify(l));
  }
  assert.ok(
    json.some((l) => l.temporal === true && l.sdkComponent === 'worker'),
    'the SDK worker lifecycle lines come through pino',
  );
  // The SDK's DefaultLogger writes `2026-…T… [INFO] message {…}`.
  assert.deepEqual(
    lines.filter((l) => /^\d{4}-\d\d-\d\dT\S+ \[(TRACE|DEBUG|INFO|WARN|ERROR)\]/.test(l)),
    [],
  );
});

test('a worker stopped while it is still starting stops gracefully: its workers shut down, nothing is killed mid-activity', async () => {
  // Temporal through a front this test controls. The worker's first connection is its client's, which
  // makes the rest of the start (dispatchers, schedules); it is held from the moment the workers
  // connect, so the start cannot finish and the stop surely lands inside it, whatever the timing.
  const [temporalHost, temporalPort] = process.env.TEMPORAL_ADDRESS!.split(':');
  const sockets: net.Socket[] = [];
  const front = net.createServer((worker) => {
    const upstream = net.connect(Number(temporalPort), temporalHost);
    sockets.push(worker, upstream);
    worker.on('error', () => {});
    upstream.on('error', () => {});
    worker.pipe(upstream).pipe(worker);
    if (sockets.length === 4) sockets[0].unpipe(sockets[1]); // the workers' own connection: hold the client's
  });
  await new Promise<void>((resolve) => front.listen(0, '127.0.0.1', resolve));
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', 'worker/main.ts'], {
    env: {
      ...process.env,
      TEMPORAL_ADDRESS: `127.0.0.1:${(front.address() as net.AddressInfo).port}`,
      TEMPORAL_TASK_QUEUE: `starting-${process.pid}-${port}`,
      LOG_LEVEL: 'info',
      PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const guard = setTimeout(() => child.kill('SIGKILL'), 60_000);
  let out = '';
  let signalled = false;
  // The SDK's first lines come once the workers run, after the stop handler is installed.
  child.stdout.on('data', (b: Buffer) => {
    out += b;
    if (!signalled && /"temporal":true/.test(out)) {
      signalled = true;
      child.kill('SIGTERM');
    }
  });
  child.stderr.on('data', (b: Buffer) => (out += b));
  try {
    const exit = await new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      child.once('exit', (code, signal) => resolve({ code, signal })),
    );
    assert.ok(signalled, out);
    assert.doesNotMatch(out, /"msg":"worker started"/, 'the start was still under way when the stop came');
    assert.deepEqual(exit, { code: 0, signal: null }, out);
    assert.match(out, /"msg":"workers stopped"/);
    assert.match(out, /"msg":"worker stopped"/);
  } finally {
    clearTimeout(guard);
    for (const s of sockets) s.destroy();
    front.close();
  }
});
