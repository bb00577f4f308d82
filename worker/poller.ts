import type { Logger } from '../logger.js';

/**
 * Runs `pass` every `everyMs`, never two at once (a slow pass makes the next tick a no-op), and logs
 * a failed pass instead of throwing: what it did not finish is picked up by the next one. Shared by
 * the worker's background loops (outbox relay, start-gap reconciler).
 */
export function startPoller(opts: { name: string; everyMs: number; log: Logger; pass: () => Promise<void> }) {
  let running = false;
  const tick = async () => {
    if (running) return;
    running = true;
    try {
      await opts.pass();
    } catch (err) {
      opts.log.warn({ err, poller: opts.name }, `${opts.name} pass failed; what it did not finish is retried on the next one`);
    } finally {
      running = false;
    }
  };
  const timer = setInterval(tick, opts.everyMs);
  timer.unref();
  return { stop: () => clearInterval(timer), tick };
}
