import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { acceptedRequestId, currentRequestId, requestIdFor, withRequestId } from '../../observability/request-id.js';
import { routeLabel } from '../../observability/metrics.js';
import { PinoSdkLogger } from '../../observability/temporal-runtime.js';
import { scheduleAction, startOptions } from '../../temporal/starters.js';
import { messageStarter } from '../../workflows/messaging/message.starter.js';
import { contactImportStarter } from '../../workflows/contacts/contact-import.starter.js';
import { scheduledOperationRunStarter } from '../../workflows/automations/operation-run.starter.js';
import type { MessageWorkflowInput } from '../../workflows/messaging/message.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

test('a caller X-Request-Id is kept only when it is a sane token', () => {
  for (const ok of [
    '0f8fad5b-d9cb-469f-a165-70867728950e',
    '01ARZ3NDEKTSV4RRFFQ69G5FAV',
    'Root=1-5759e988-bd862e3fe1be46a994272793',
    'req_abc.def:42',
    'x'.repeat(128),
  ])
    assert.equal(acceptedRequestId(ok), ok, ok);
  for (const bad of [
    '',
    ' ',
    'two words',
    'a\nb',
    'a\r\nSet-Cookie: x',
    '<script>',
    '"quoted"',
    'tab\tbed',
    'é',
    'x'.repeat(129),
    'a,b',
    'a;b',
  ])
    assert.equal(acceptedRequestId(bad), null, JSON.stringify(bad));
  assert.equal(acceptedRequestId(undefined), null);
  assert.equal(acceptedRequestId(['first-id', 'second']), 'first-id');
});

test('a missing or refused id is replaced by a fresh UUID; a sane one is echoed as sent', () => {
  const a = requestIdFor('has spaces');
  const b = requestIdFor(undefined);
  assert.match(a, UUID);
  assert.match(b, UUID);
  assert.notEqual(a, b);
  assert.equal(requestIdFor('abc-123'), 'abc-123');
});

test('the request id follows awaits and timers inside its scope, and nothing outside it', async () => {
  assert.equal(currentRequestId(), undefined);
  const seen = await withRequestId('req-1', async () => {
    await new Promise((r) => setTimeout(r, 5));
    return currentRequestId();
  });
  assert.equal(seen, 'req-1');
  const [x, y] = await Promise.all([
    withRequestId('req-x', async () => (await Promise.resolve(), currentRequestId())),
    withRequestId('req-y', async () => (await Promise.resolve(), currentRequestId())),
  ]);
  assert.deepEqual([x, y], ['req-x', 'req-y']);
  assert.equal(currentRequestId(), undefined);
});

test('a workflow started within a request carries request_id in its memo, next to the starter memo', () => {
  const config = { taskQueue: 'svc-main', webhookTaskQueue: 'svc-webhooks' };
  const input = { accountId: 7, messageId: 11, uid: 'msg_a', channelType: 'sms' } as MessageWorkflowInput;
  const key = { accountId: 7, messageId: 11, uid: 'msg_a', channelType: 'sms' as const };
  assert.deepEqual(startOptions(config, messageStarter, key, [input]).memo, { messageId: 11, channelType: 'sms' });
  const inRequest = withRequestId('req-42', () => startOptions(config, messageStarter, key, [input]));
  assert.deepEqual(inRequest.memo, { messageId: 11, channelType: 'sms', request_id: 'req-42' });
  // A starter without a memo of its own gets one holding the request id alone.
  const importKey = { accountId: 2, importId: 9 };
  assert.equal('memo' in startOptions(config, contactImportStarter, importKey, [importKey as never]), false);
  assert.deepEqual(withRequestId('req-43', () => startOptions(config, contactImportStarter, importKey, [importKey as never])).memo, {
    request_id: 'req-43',
  });
  // A schedule's later runs were not started by the request that created the schedule.
  const args = { accountId: 2, operationName: 'otp', input: {}, source: 'schedule:s-1' };
  const action = withRequestId('req-44', () =>
    scheduleAction(config, scheduledOperationRunStarter, { accountId: 2, scheduleId: 's-1' }, [args]),
  );
  assert.equal(JSON.stringify(action).includes('req-44'), false);
});

test('the metrics route label is the path template, never the raw URL', () => {
  assert.equal(routeLabel('GET /api/v3/sms/{uid}', '/api/v3/sms/:uid'), '/api/v3/sms/{uid}');
  assert.equal(routeLabel(undefined, '/api/v3/sms/:uid'), '/api/v3/sms/{uid}');
  assert.equal(routeLabel(undefined, undefined), 'unmatched');
});

test('the Temporal SDK logger writes pino JSON lines with the SDK metadata and the error under err', () => {
  const lines: Array<Record<string, unknown>> = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      lines.push(JSON.parse(String(chunk)));
      done();
    },
  });
  const log = pino({ level: 'debug', base: { pid: process.pid, role: 'worker' } }, sink);
  const sdk = new PinoSdkLogger(log);
  sdk.info('Worker state changed', { sdkComponent: 'worker', state: 'RUNNING', taskQueue: 'q' });
  sdk.log('WARN', 'Activity failed', { sdkComponent: 'activity', error: new Error('boom') });
  sdk.trace('too fine for debug');
  assert.equal(lines.length, 2);
  assert.deepEqual(
    { ...lines[0], time: undefined },
    {
      level: 30,
      time: undefined,
      pid: process.pid,
      role: 'worker',
      sdkComponent: 'worker',
      state: 'RUNNING',
      taskQueue: 'q',
      msg: 'Worker state changed',
    },
  );
  assert.equal(lines[1].level, 40);
  assert.equal((lines[1].err as { message: string }).message, 'boom');
  assert.equal('error' in lines[1], false);
});
