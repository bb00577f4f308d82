import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MockActivityEnvironment } from '@temporalio/testing';
import { throttledHeartbeat } from '../../../activities/heartbeat.js';
import { providerBudgetBucket } from '../../../activities/messaging/dispatch.js';

// The batch dispatch activities (activities/messaging/dispatch.ts) claim, load and move messages
// with SQL from their first line, so under the project's rule (never mock our own database) their
// behaviour is tested against the real database in test/integration (dispatch-claims,
// provider-budget, sms-end-to-end). What runs without it is tested here: the heartbeat throttle
// their send loops report progress through, in an activity context; the provider half of each send
// (callProvider, providerOf) is in messages.test.ts.

const quiet = { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error() {} };

/** An activity context whose heartbeats are collected. */
function activityEnv() {
  const env = new MockActivityEnvironment(undefined, { logger: quiet });
  const beats: unknown[] = [];
  env.on('heartbeat', (d: unknown) => beats.push(d));
  return { env, beats };
}

test('the send loops heartbeat at most once a second, with the details of the moment', async (t) => {
  t.mock.timers.enable({ apis: ['Date'], now: 1_800_000_000_000 });
  const { env, beats } = activityEnv();
  await env.run(async () => {
    const beat = throttledHeartbeat();
    beat({ sent: 1 });
    beat({ sent: 2 });
    t.mock.timers.tick(999);
    beat({ sent: 3 });
    t.mock.timers.tick(1);
    beat({ sent: 4 });
    t.mock.timers.tick(5000);
    beat({ sent: 5 });
    beat({ sent: 6 });
  });
  assert.deepEqual(beats, [{ sent: 1 }, { sent: 4 }, { sent: 5 }]);
});

test('each activity run throttles on its own; the interval can be set', async (t) => {
  t.mock.timers.enable({ apis: ['Date'], now: 1_800_000_000_000 });
  const { env, beats } = activityEnv();
  await env.run(async () => {
    const a = throttledHeartbeat();
    const b = throttledHeartbeat(100);
    a('a1');
    b('b1');
    t.mock.timers.tick(100);
    a('a2');
    b('b2');
    b('b3');
  });
  assert.deepEqual(beats, ['a1', 'b1', 'b2']);
});

test('each provider task queue has a budget bucket of its own', () => {
  assert.equal(providerBudgetBucket('svc-sms-provider'), 'provider:svc-sms-provider');
  assert.notEqual(providerBudgetBucket('a-sms'), providerBudgetBucket('b-sms'), 'deployments on their own queues share no budget');
});
