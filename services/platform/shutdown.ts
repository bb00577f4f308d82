/**
 * Aborted when this process begins its graceful stop (worker/main.ts on SIGTERM or SIGINT).
 *
 * The Temporal SDK tells a running activity about a worker shutdown only once the shutdown grace is
 * over, by cancelling it. Long-running loops (the batch dispatchers' streaming activities) can read
 * this instead to stop claiming new work at once and return what they finished, so a stop waits for
 * the work in flight, not for an idle timeout or the whole grace.
 */
const controller = new AbortController();

export const processStopping: AbortSignal = controller.signal;

export function beginStopping(): void {
  controller.abort(new Error('process stopping'));
}
