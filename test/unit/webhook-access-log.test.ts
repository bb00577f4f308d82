import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import pino from 'pino';
import { webhookAccessLog } from '../../api/http/ingress.js';

/** A pino logger at `level` whose JSON lines land in `lines`. */
function capture(level: string) {
  const lines: Array<Record<string, unknown>> = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const l of chunk.toString().split('\n')) if (l) lines.push(JSON.parse(l) as Record<string, unknown>);
      done();
    },
  });
  return { log: pino({ level }, sink), lines };
}
const settle = () => new Promise((r) => setImmediate(r));
const receipt = (i: number, status = 200) => ({ requestId: `r${i}`, route: 'POST /providers/sms/status', method: 'POST', status, ms: 0.4 });

test('18,000 messages of receipts (36,000 webhooks) write one info line, not one per receipt', async () => {
  const { log, lines } = capture('info');
  const access = webhookAccessLog(log, 60_000);
  for (let i = 0; i < 36_000; i++) access.record(receipt(i));
  access.flush();
  await settle();
  assert.equal(lines.length, 1);
  assert.equal(lines[0].msg, 'provider webhooks answered');
  assert.deepEqual(lines[0].answered, { 'POST /providers/sms/status 200': 36_000 });
  access.flush();
  await settle();
  assert.equal(lines.length, 1, 'nothing answered since: no line');
});

test('a refused webhook keeps its own info line; accepted ones are debug lines', async () => {
  const { log, lines } = capture('debug');
  const access = webhookAccessLog(log, 60_000);
  access.record(receipt(1));
  access.record(receipt(2, 401));
  access.record(receipt(3, 503));
  access.flush();
  await settle();
  const levels = lines.map((l) => [l.level, l.msg, l.status ?? null]);
  assert.deepEqual(levels, [
    [20, 'request', 200],
    [30, 'request', 401],
    [30, 'request', 503],
    [30, 'provider webhooks answered', null],
  ]);
  assert.deepEqual(lines[3].answered, {
    'POST /providers/sms/status 200': 1,
    'POST /providers/sms/status 401': 1,
    'POST /providers/sms/status 503': 1,
  });
});

test('the count is written once its window has passed, without a flush', async () => {
  const { log, lines } = capture('info');
  const access = webhookAccessLog(log, 50);
  for (let i = 0; i < 10; i++) access.record(receipt(i));
  assert.equal(lines.length, 0);
  await new Promise((r) => setTimeout(r, 120));
  assert.equal(lines.length, 1);
  assert.deepEqual(lines[0].answered, { 'POST /providers/sms/status 200': 10 });
});
