import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rateMeter } from '../../services/platform/load.js';

test('the send meter counts the events of the last second, including the one being marked', () => {
  let now = 1_000_000;
  const mark = rateMeter(() => now);
  assert.deepEqual([mark(), mark(), mark()], [1, 2, 3]);
  now += 500;
  assert.equal(mark(), 4, 'half a second later the earlier ones still count');
  now += 550;
  assert.equal(mark(), 2, 'the first three fell out of the window');
  now += 5_000;
  assert.equal(mark(), 1, 'after a quiet spell only the new one counts');
});

test('a steady 300 per second reads as about 300', () => {
  let now = 2_000_000;
  const mark = rateMeter(() => now);
  let last = 0;
  for (let i = 0; i < 900; i++) {
    now += 1000 / 300;
    last = mark();
  }
  assert.ok(last >= 290 && last <= 310, String(last));
});
