import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rateBudget } from '../../services/load.js';

test('the first-outcome budget allows a second of burst, then refills at its rate', () => {
  let now = 1_000_000;
  const take = rateBudget(5, () => now);
  assert.deepEqual(Array.from({ length: 7 }, () => take()), [true, true, true, true, true, false, false]);
  now += 200; // one token back
  assert.deepEqual([take(), take()], [true, false]);
  now += 10_000; // never more than one second's worth saved up
  assert.equal(Array.from({ length: 10 }, () => take()).filter(Boolean).length, 5);
});

test('a budget of zero never admits', () => {
  const take = rateBudget(0);
  assert.equal(take(), false);
});
