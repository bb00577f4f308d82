import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ApplicationFailure } from '@temporalio/activity';
import { MockActivityEnvironment } from '@temporalio/testing';
import { callProvider, providerOf, type MessageDeps } from '../../../activities/messaging/messages.js';
import { outboundRow, providerDoubles, providerFailure, providerOk } from '../../support/provider-doubles.js';

// The provider half of the send path, shared by the per-message send (dispatchMessage) and the batch
// dispatch (sendMessageBatch, dispatchQueuedMessages): which adapter a message goes to, what it is
// handed, and which problems are refusals no retry can change (non-retryable ApplicationFailures).
// The rest of those activities is database statements (loading the row, moving its status): they
// are tested against the real database in test/integration, never with a mocked one.

/** The deps the provider half reads: the provider port only (no statement runs on this path). */
const depsWith = (registry: MessageDeps['providers']) =>
  ({ providers: registry, countProviderCall: () => undefined }) as unknown as MessageDeps;

/** Runs `fn` in an activity context, as the activities call it. */
const quiet = { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error() {} };
const inActivity = <R>(fn: () => Promise<R>) => new MockActivityEnvironment(undefined, { logger: quiet }).run(fn);

function assertNonRetryable(err: unknown, type: string, message: RegExp) {
  assert.ok(err instanceof ApplicationFailure, `not an ApplicationFailure: ${String(err)}`);
  assert.equal(err.nonRetryable, true);
  assert.equal(err.type, type);
  assert.match(err.message, message);
  return true;
}

test('an SMS goes to its channel adapter with the uid as the idempotency key', async () => {
  const p = providerDoubles([providerOk('SM900')]);
  const result = await inActivity(() => callProvider(depsWith(p.registry), outboundRow({ media_url: 'https://cdn.example/a.png' })));
  assert.deepEqual(result, { ok: true, value: { providerMessageId: 'SM900' } });
  assert.deepEqual(p.sent, [
    {
      provider: 'sms',
      request: { uid: 'msg_unit', to: '+447700900123', from: 'ACME', body: 'Your code is 1234', mediaUrl: 'https://cdn.example/a.png' },
      key: 'msg_unit',
    },
  ]);
});

test('a chat message sends its stored provider request, keyed by the uid', async () => {
  const p = providerDoubles([providerOk('wamid.1')]);
  const request = { messaging_product: 'whatsapp', to: '447700900123', type: 'text', text: { body: 'hi' } };
  const row = outboundRow({ channel_type: 'whatsapp', provider: 'whatsapp-cloud', provider_request: request, uid: 'msg_chat' });
  await inActivity(() => callProvider(depsWith(p.registry), row));
  assert.deepEqual(p.sent, [{ provider: 'chat', request, key: 'msg_chat' }]);
});

test('provider failures come back as results, retryable or not as the adapter said: the caller decides', async () => {
  const transient = providerFailure(false, '503', 'gateway unavailable', 30);
  const permanent = providerFailure(true, '21211', 'invalid number');
  const p = providerDoubles([transient, permanent]);
  const deps = depsWith(p.registry);
  assert.deepEqual(await inActivity(() => callProvider(deps, outboundRow())), transient);
  assert.deepEqual(await inActivity(() => callProvider(deps, outboundRow())), permanent);
  assert.equal(p.sent.length, 2);
});

test('a chat message without its provider request is malformed: non-retryable, nothing is sent', async () => {
  const p = providerDoubles();
  const row = outboundRow({ channel_type: 'whatsapp', provider_request: null, uid: 'msg_bare' });
  await assert.rejects(
    inActivity(() => callProvider(depsWith(p.registry), row)),
    (err) => assertNonRetryable(err, 'MessageMalformed', /msg_bare has no provider request/),
  );
  assert.equal(p.sent.length, 0);
});

test('a channel whose stored provider is unknown, or sends another channel type, is refused for good', async () => {
  const p = providerDoubles();
  const deps = depsWith(p.registry);
  await assert.rejects(
    inActivity(() => callProvider(deps, outboundRow({ provider: 'carrier-pigeon', uid: 'msg_pigeon' }))),
    (err) => assertNonRetryable(err, 'UnknownProvider', /^message msg_pigeon: No provider adapter is registered as "carrier-pigeon"/),
  );
  assert.throws(
    () => providerOf(deps, { uid: 'msg_cross', channel_type: 'sms', provider: 'whatsapp-cloud' }),
    (err) => assertNonRetryable(err, 'UnknownProvider', /msg_cross: Provider "whatsapp-cloud" does not send sms messages/),
  );
  assert.equal(p.sent.length, 0);
});

test("a channel with no stored provider uses its type's default adapter", () => {
  const p = providerDoubles();
  const deps = depsWith(p.registry);
  assert.equal(providerOf(deps, { uid: 'm', channel_type: 'sms', provider: null }), p.sms);
  assert.equal(providerOf(deps, { uid: 'm', channel_type: 'whatsapp', provider: null }), p.chat);
});

test('an adapter that throws instead of answering (a bug, a crash) leaves the error retryable as thrown', async () => {
  const p = providerDoubles([new TypeError('Cannot read properties of undefined')]);
  await assert.rejects(
    inActivity(() => callProvider(depsWith(p.registry), outboundRow())),
    (err) => err instanceof TypeError && !(err instanceof ApplicationFailure),
  );
  // A registry failing some other way is not mistaken for an unknown provider either.
  const broken = {
    ...p.registry,
    forChannel: () => {
      throw new RangeError('registry not ready');
    },
  };
  assert.throws(() => providerOf(depsWith(broken), outboundRow()), RangeError);
});
