import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { http, eventually, uniquePhone } from '../support/stack.js';
import { ownStack } from '../support/own-stack.js';

// Issue 25, point 2: a dependency that is down or hung is an answer, not a hang. The API here runs on
// a PostgreSQL and a Temporal of this file's own, which it stops and freezes (SIGSTOP: the process is
// there, its sockets accept, nothing answers), with small bounds so each case takes seconds:
// statement 1.5 s (the driver's read deadline 2.5 s), pool acquire/connect 1.5 s, Temporal calls 1.5 s.

const BOUNDS = {
  DATABASE_STATEMENT_TIMEOUT_MS: '1500',
  DATABASE_ACQUIRE_TIMEOUT_MS: '1500',
  TEMPORAL_CALL_TIMEOUT_MS: '1500',
  FIRST_OUTCOME_WAIT_MS: '500',
  API_DRAIN_SECONDS: '0',
};
/** The documented bound for these settings: the driver's read deadline (statement + 1 s), with room for a loaded machine. */
const DATABASE_BOUND_MS = 1500 + 1000 + 2000;
/** A send's Temporal call: the call deadline plus the first-outcome wait, with the same room. */
const TEMPORAL_BOUND_MS = 1500 + 500 + 2000;

let stack: Awaited<ReturnType<typeof ownStack>>;
let token: string;

before(async () => {
  stack = await ownStack(BOUNDS);
  const operator = process.env.OPERATOR_TOKEN!;
  const as = (p: string, body: unknown) => http('POST', `${stack.url}/admin/v1${p}`, { token: operator, body });
  const acc = await as('/accounts', { name: `Dependencies ${process.pid}`, wallet_balance: 100, currency: 'USD' });
  assert.equal(acc.status, 201, acc.text);
  const user = await as(`/accounts/${acc.body.data.id}/users`, {
    email: `dep-${process.pid}@example.com`,
    name: 'Dep',
    permissions: ['*'],
  });
  const key = await as(`/accounts/${acc.body.data.id}/keys`, { name: 'dep key', user_id: user.body.data.id });
  token = key.body.data.token;
});
after(() => stack?.teardown());

const me = () => http('GET', `${stack.url}/api/v3/me`, { token });
const timed = async <T>(fn: () => Promise<T>) => {
  const t0 = performance.now();
  const value = await fn();
  return { value, ms: Math.round(performance.now() - t0) };
};

function assertTemporaryFailure(r: Awaited<ReturnType<typeof me>>) {
  assert.equal(r.status, 503, r.text);
  assert.deepEqual(r.body, {
    status: 'error',
    message: 'The service is temporarily unable to complete this request. Retry later.',
    reason: 'temporary_failure',
  });
  // The whole body is the envelope above: no stack, no driver message.
  assert.equal(r.headers.get('retry-after'), '5');
}

test('PostgreSQL stopped: an authenticated request answers 503 temporary_failure with Retry-After; started again, the API serves', async (t) => {
  assert.equal((await me()).status, 200);
  await stack.stopPostgres();
  try {
    for (let i = 0; i < 3; i++) {
      // The first meets the pool's dropped connections, the next ones a refused connect.
      const { value, ms } = await timed(me);
      assertTemporaryFailure(value);
      assert.ok(ms < DATABASE_BOUND_MS, `answered in ${ms} ms`);
      t.diagnostic(`stopped PostgreSQL: 503 in ${ms} ms`);
    }
    // The data family's own envelope says the same in its words.
    const data = await http('GET', `${stack.url}/api/v3/data/tables/anything/records`, { token });
    assert.equal(data.status, 503, data.text);
    assert.equal(data.body.error.code, 'temporary_failure');
    assert.equal(data.body.error.retryable, true);
    assert.equal(data.body.error.details.retry_after_seconds, 5);
    assert.equal(data.headers.get('retry-after'), '5');
    const ready = await fetch(`${stack.url}/readyz`);
    assert.equal(ready.status, 503);
    assert.equal((await ready.json()).checks.database.ok, false);
    assert.equal((await fetch(`${stack.url}/healthz`)).status, 200, 'alive: an outage must not get replicas restarted');
  } finally {
    await stack.startPostgres();
  }
  await eventually(me, (r) => r.status === 200, 20_000, 200, 'GET /me answers 200 again once PostgreSQL is back');
});

test('PostgreSQL frozen (SIGSTOP): a request is answered 503 within the statement bound, and the API recovers when it resumes', async (t) => {
  assert.equal((await me()).status, 200);
  stack.freezePostgres();
  try {
    // Concurrently, so some find a pooled connection (read deadline) and some must open one (connect timeout).
    const answers = await Promise.all(Array.from({ length: 4 }, () => timed(me)));
    for (const { value, ms } of answers) {
      assertTemporaryFailure(value);
      assert.ok(ms < DATABASE_BOUND_MS, `answered in ${ms} ms`);
    }
    t.diagnostic(`frozen PostgreSQL: 503 in ${answers.map((a) => a.ms).join(', ')} ms`);
    const ready = await timed(() => fetch(`${stack.url}/readyz`));
    assert.equal(ready.value.status, 503);
    assert.ok(ready.ms < 4000, `/readyz answered in ${ready.ms} ms`);
  } finally {
    stack.thawPostgres();
  }
  await eventually(me, (r) => r.status === 200, 20_000, 200, 'GET /me answers 200 again once PostgreSQL resumes');
});

test('Temporal frozen (SIGSTOP): an SMS send is answered 201 queued within the call bound, left for the reconciler', async (t) => {
  stack.freezeTemporal();
  try {
    const { value, ms } = await timed(() =>
      http('POST', `${stack.url}/api/v3/sms/send`, {
        token,
        body: { recipients: [uniquePhone(), uniquePhone()], message: 'Temporal is hung' },
      }),
    );
    // Committed (and paid for) before Temporal was asked: the reconciler starts its workflow once
    // Temporal answers again, so the send is accepted, not refused.
    assert.equal(value.status, 201, value.text);
    assert.equal(value.body.data.messages.length, 2);
    for (const m of value.body.data.messages) assert.equal(m.status, 'queued');
    assert.ok(ms < TEMPORAL_BOUND_MS, `answered in ${ms} ms`);
    t.diagnostic(`frozen Temporal: SMS send 201 queued in ${ms} ms`);
    const ready = await timed(() => fetch(`${stack.url}/readyz`));
    assert.equal(ready.value.status, 503);
    assert.equal((await ready.value.json()).checks.temporal.ok, false);
    assert.ok(ready.ms < 4000, `/readyz answered in ${ready.ms} ms`);
  } finally {
    stack.thawTemporal();
  }
});
