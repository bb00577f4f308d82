// Background work (receipt timelines, webhook retries, hanging `timeout` faults) must stop on
// /_sim/reset and on close, otherwise one test's late callbacks land in the next test's receiver and
// the process cannot exit. Every delay goes through here so a single abort cancels all of it.
import type { Logger } from 'pino';

export class Lifecycle {
  private controller = new AbortController();
  private readonly pending = new Set<Promise<void>>();

  constructor(private readonly log: Logger) {}

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** Resolves true after `ms`, or false as soon as the lifecycle is aborted. */
  sleep(ms: number, signal: AbortSignal = this.signal): Promise<boolean> {
    if (signal.aborted) return Promise.resolve(false);
    return new Promise((resolve) => {
      const onAbort = (): void => {
        clearTimeout(timer);
        resolve(false);
      };
      const timer = setTimeout(() => {
        signal.removeEventListener('abort', onAbort);
        resolve(true);
      }, ms);
      signal.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** Runs a task detached from the request that started it, bound to the current generation. */
  spawn(name: string, task: (signal: AbortSignal) => Promise<void>): void {
    const signal = this.signal;
    const p: Promise<void> = task(signal)
      .catch((err: unknown) => {
        if (!signal.aborted) this.log.error({ err, task: name }, 'background task failed');
      })
      .finally(() => this.pending.delete(p));
    this.pending.add(p);
  }

  /** Waits until no background task is left (tests use it to wait for the last receipt). */
  async idle(): Promise<void> {
    while (this.pending.size > 0) await Promise.allSettled([...this.pending]);
  }

  restart(): void {
    this.controller.abort();
    this.controller = new AbortController();
  }

  stop(): void {
    this.controller.abort();
  }
}
