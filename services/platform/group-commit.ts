/**
 * Group commit for many small writes arriving at once (provider receipts): the first item is written
 * at once; items arriving while a write is in flight wait and go together in the next one. Each
 * caller's promise settles only after the write that holds its item committed, so an answer given
 * after `await add(…)` never reports unsaved work. With `lingerMs`, a write that would hold fewer
 * than `lingerBelow` items waits that long first, for callers who can wait a few milliseconds and
 * whose statement's fixed cost (planning, commit) dwarfs its cost per item.
 */
export function groupCommit<T>(
  write: (items: T[]) => Promise<void>,
  opts: { maxBatch?: number; lingerMs?: number; lingerBelow?: number } = {},
) {
  const { maxBatch = 500, lingerMs = 0, lingerBelow = maxBatch } = opts;
  let queue: Array<{ item: T; resolve: () => void; reject: (e: unknown) => void }> = [];
  let writing = false;
  const run = async () => {
    writing = true;
    while (queue.length) {
      if (lingerMs > 0) {
        // Items added in the same turn as the one that started the run count towards lingerBelow.
        await Promise.resolve();
        if (queue.length < lingerBelow) await new Promise((r) => setTimeout(r, lingerMs));
      }
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

/**
 * Group commit for a stream of outcomes nobody waits on one by one (a dispatcher's sends): `add`
 * returns at once; one write runs at a time and takes everything gathered meanwhile. When fewer than
 * `lingerBelow` items are in, it waits `lingerMs` first: a statement carries a fixed cost (planning,
 * commit), and at campaign rates 15 ms gathers two to three times as many items into it. The first
 * failed write stops the writer; `drain` waits for the writes and throws that failure, so the
 * caller's activity fails and its retry re-reads what is still owed.
 */
export function lingeringWriter<T>(write: (items: T[]) => Promise<void>, opts: { lingerBelow?: number; lingerMs?: number } = {}) {
  const lingerBelow = opts.lingerBelow ?? 100;
  const lingerMs = opts.lingerMs ?? 15;
  let buffer: T[] = [];
  let writing: Promise<void> | null = null;
  let failure: unknown = null;
  const run = async () => {
    while (buffer.length && !failure) {
      if (buffer.length < lingerBelow) await new Promise((r) => setTimeout(r, lingerMs));
      const items = buffer;
      buffer = [];
      try {
        await write(items);
      } catch (err) {
        failure = err;
      }
    }
    writing = null;
  };
  return {
    add(item: T): void {
      buffer.push(item);
      // After a failure nothing more is written (drain reports it). Started only with an item to
      // write, a run always awaits before it clears `writing`, so it cannot clear it before it is set.
      if (!writing && !failure) writing = run();
    },
    async drain(): Promise<void> {
      while (writing) await writing;
      if (failure) throw failure;
    },
  };
}
