import { test } from 'node:test';
import assert from 'node:assert/strict';
import { eventually } from '../support/stack.js';

// The integration tests' wait: a wait that times out fails there, saying what it waited for, not
// later in an assertion about the value it handed back.
test('a wait that holds answers the value that made it hold', async () => {
  let calls = 0;
  const got = await eventually(
    async () => ++calls,
    (n) => n === 3,
    60_000,
    1,
  );
  assert.equal(got, 3);
});

test('a wait that times out fails with what it awaited, how long, and the last value, cut short', async () => {
  const long = { status: 'queued', text: 'x'.repeat(5_000) };
  await assert.rejects(
    eventually(
      async () => long,
      (r) => r.status === 'delivered',
      30,
      5,
      'the message delivered',
    ),
    (err: Error) => {
      assert.match(err.message, /^eventually: the message delivered did not hold within 30 ms; last value: \{ status: 'queued', text: 'x+/);
      assert.ok(err.message.length < 1_200, `the last value is cut short (${err.message.length} characters)`);
      return true;
    },
  );
  await assert.rejects(
    eventually(
      async () => 1,
      (n) => n === 2,
      30,
      5,
    ),
    // The source as it runs (tsx may respace it).
    /^Error: eventually: \(?n\)? ?=> ?n ?=== ?2 did not hold within 30 ms; last value: 1$/,
    'without a label, the condition names the wait',
  );
});
