import fs from 'node:fs';
import v8 from 'node:v8';

/**
 * SVC_MEMORY_LOG=<file>: one JSON line a second with the worker's resident memory and its main V8
 * heap (total, used, young and old generation), in MB. Diagnosis only (how docs/benchmarks.md's
 * worker memory figures were explained); the workflow threads' heaps are in `rss` only.
 */
export function startMemoryLog(file: string): void {
  const t0 = Date.now();
  const mb = (n: number) => Math.round(n / 1048576);
  setInterval(() => {
    const m = process.memoryUsage();
    const spaces = Object.fromEntries(v8.getHeapSpaceStatistics().map((s) => [s.space_name, s.space_size]));
    fs.appendFileSync(
      file,
      `${JSON.stringify({
        t: Math.round((Date.now() - t0) / 1000),
        rss: mb(m.rss),
        heapTotal: mb(m.heapTotal),
        heapUsed: mb(m.heapUsed),
        external: mb(m.external),
        newSpace: mb(spaces.new_space ?? 0),
        oldSpace: mb(spaces.old_space ?? 0),
      })}\n`,
    );
  }, 1000).unref();
}
