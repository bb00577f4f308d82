import { test } from 'node:test';
import assert from 'node:assert/strict';
import { groupCommit } from '../../services/platform/group-commit.js';

test('items arriving during a write go together in the next one; each settles after its own write', async () => {
  const writes: number[][] = [];
  let release!: () => void;
  const add = groupCommit<number>(async (items) => {
    writes.push(items);
    if (writes.length === 1)
      await new Promise<void>((r) => {
        release = r;
      });
  });
  const settled: number[] = [];
  const first = add(1).then(() => settled.push(1));
  const rest = [2, 3, 4].map((n) => add(n).then(() => settled.push(n)));
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(writes, [[1]]);
  assert.deepEqual(settled, [], 'nobody is answered before the write that holds the item finished');
  release();
  await Promise.all([first, ...rest]);
  assert.deepEqual(writes, [[1], [2, 3, 4]]);
  assert.deepEqual(settled, [1, 2, 3, 4]);
});

test('a failed write rejects the items it held and the next group still goes', async () => {
  let calls = 0;
  const add = groupCommit<string>(async () => {
    if (calls++ === 0) throw new Error('database away');
  }, 2);
  const results = await Promise.allSettled(['a', 'b', 'c'].map((x) => add(x)));
  assert.equal(results[0].status, 'rejected');
  assert.deepEqual(
    results.slice(1).map((r) => r.status),
    ['fulfilled', 'fulfilled'],
  );
});
