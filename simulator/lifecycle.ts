// Background work (receipt timelines, webhook retries, hanging `timeout` faults) must stop on
// /_sim/reset and on close, otherwise one test's late callbacks land in the next test's receiver and
// the process cannot exit. Every delay goes through here so a single abort cancels all of it.
//
// This sits on the per-message hot path (each SMS spawns a timeline with two sleeps), so a
// generation is a plain object with a timer registry rather than an AbortSignal: a sleep costs one
// timer and one Map entry, not an AbortController/EventTarget listener, and ending a generation
// clears every registered timer at once.
import type { Logger } from 'pino';

type Wake = (value: boolean) => void;

/** One run of background work, from construction (or the last restart) until restart/stop. */
export class Generation {
  /** Set once by end(); tasks check it between steps. */
  aborted = false;
  private readonly timers = new Map<NodeJS.Timeout, Wake>();
  private readonly onEnd: Array<() => void> = [];

  /** Resolves true after `ms`, or false at once (or as soon as this generation ends). */
  sleep(ms: number): Promise<boolean> {
    if (this.aborted) return Promise.resolve(false);
    return new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => {
        this.timers.delete(timer);
        resolve(true);
      }, ms);
      this.timers.set(timer, resolve);
    });
  }

  /** Runs `fn` when the generation ends (at once if it already has), e.g. to close sockets. */
  whenEnded(fn: () => void): void {
    if (this.aborted) fn();
    else this.onEnd.push(fn);
  }

  end(): void {
    if (this.aborted) return;
    this.aborted = true;
    for (const [timer, wake] of this.timers) {
      clearTimeout(timer);
      wake(false);
    }
    this.timers.clear();
    for (const fn of this.onEnd.splice(0)) fn();
  }
}

export class Lifecycle {
  private current = new Generation();
  private running = 0;
  private idleWaiters: Array<() => void> = [];

  constructor(private readonly log: Logger) {}

  /** The generation new work is bound to; it ends on restart() or stop(). */
  get generation(): Generation {
    return this.current;
  }

  /** Resolves true after `ms`, or false as soon as `gen` (by default the current one) ends. */
  sleep(ms: number, gen: Generation = this.current): Promise<boolean> {
    return gen.sleep(ms);
  }

  /** Runs a task detached from the request that started it, bound to the current generation. */
  spawn(name: string, task: (gen: Generation) => Promise<void>): void {
    const gen = this.current;
    this.running += 1;
    const done = (): void => {
      this.running -= 1;
      if (this.running === 0 && this.idleWaiters.length > 0) for (const wake of this.idleWaiters.splice(0)) wake();
    };
    let p: Promise<void>;
    try {
      p = task(gen);
    } catch (err) {
      p = Promise.reject(err);
    }
    p.then(done, (err: unknown) => {
      if (!gen.aborted) this.log.error({ err, task: name }, 'background task failed');
      done();
    });
  }

  /** Waits until no background task is left (tests use it to wait for the last receipt). */
  idle(): Promise<void> {
    if (this.running === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  restart(): void {
    const ended = this.current;
    this.current = new Generation();
    ended.end();
  }

  stop(): void {
    this.current.end();
  }
}
