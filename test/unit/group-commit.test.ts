import { test } from 'node:test';
import assert from 'node:assert/strict';
import { groupCommit, lingeringWriter } from '../../services/platform/group-commit.js';

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
  const add = groupCommit<string>(
    async () => {
      if (calls++ === 0) throw new Error('database away');
    },
    { maxBatch: 2 },
  );
  const results = await Promise.allSettled(['a', 'b', 'c'].map((x) => add(x)));
  assert.equal(results[0].status, 'rejected');
  assert.deepEqual(
    results.slice(1).map((r) => r.status),
    ['fulfilled', 'fulfilled'],
  );
});

test('with a linger, a small group waits for more before its write; a full one goes at once', async () => {
  const writes: number[][] = [];
  const add = groupCommit<number>(
    async (items) => {
      writes.push(items);
    },
    { lingerMs: 400, lingerBelow: 3 },
  );
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms, 'slept'));
  const first = add(1);
  await sleep(5);
  const second = add(2);
  assert.equal(await Promise.race([first, sleep(100)]), 'slept', 'fewer than lingerBelow: the write lingers');
  assert.deepEqual(writes, []);
  await Promise.all([first, second]);
  assert.deepEqual(writes, [[1, 2]]);
  const full = Promise.all([3, 4, 5].map((n) => add(n)));
  assert.notEqual(await Promise.race([full, sleep(200)]), 'slept', 'lingerBelow items in one turn: written without the linger');
  assert.deepEqual(writes.at(-1), [3, 4, 5]);
});

test('lingering writer: one write at a time takes all gathered meanwhile; a small batch waits briefly first', async () => {
  const writes: number[][] = [];
  let release!: () => void;
  const w = lingeringWriter<number>(
    async (items) => {
      writes.push(items);
      if (writes.length === 1)
        await new Promise<void>((r) => {
          release = r;
        });
    },
    { lingerBelow: 3, lingerMs: 20 },
  );
  w.add(1);
  await new Promise((r) => setTimeout(r, 5));
  w.add(2);
  assert.deepEqual(writes, [], 'fewer than lingerBelow: the first write lingers');
  await new Promise((r) => setTimeout(r, 40));
  assert.deepEqual(writes, [[1, 2]]);
  for (const n of [3, 4, 5, 6]) w.add(n);
  release();
  await w.drain();
  assert.deepEqual(
    writes,
    [
      [1, 2],
      [3, 4, 5, 6],
    ],
    'items added during a write go together in the next one',
  );
});

test('lingering writer: the first failed write stops it and drain throws that failure', async () => {
  const writes: number[][] = [];
  const w = lingeringWriter<number>(
    async (items) => {
      writes.push(items);
      throw new Error(`write of ${items.join(',')} failed`);
    },
    { lingerBelow: 1, lingerMs: 0 },
  );
  w.add(1);
  await assert.rejects(w.drain(), /write of 1 failed/);
  w.add(2);
  await assert.rejects(w.drain(), /write of 1 failed/);
  assert.deepEqual(writes, [[1]], 'nothing is written after a failure');
});
