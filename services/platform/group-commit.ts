/**
 * Group commit for many small writes arriving at once (provider receipts): the first item is written
 * at once; items arriving while a write is in flight wait and go together in the next one. Each
 * caller's promise settles only after the write that holds its item committed, so an answer given
 * after `await add(…)` never reports unsaved work.
 */
export function groupCommit<T>(write: (items: T[]) => Promise<void>, maxBatch = 500) {
  let queue: Array<{ item: T; resolve: () => void; reject: (e: unknown) => void }> = [];
  let writing = false;
  const run = async () => {
    writing = true;
    while (queue.length) {
      const batch = queue.slice(0, maxBatch);
      queue = queue.slice(batch.length);
      try {
        await write(batch.map((b) => b.item));
        for (const b of batch) b.resolve();
      } catch (err) {
        for (const b of batch) b.reject(err);
      }
    }
    writing = false;
  };
  return (item: T) =>
    new Promise<void>((resolve, reject) => {
      queue.push({ item, resolve, reject });
      if (!writing) void run();
    });
}
