// How busy this API process is right now. Admission control reads it: under load an immediate
// send is queued for the batch dispatcher instead of waiting for its provider's first answer.
let inFlight = 0;

export const requestStarted = () => {
  inFlight++;
};
export const requestEnded = () => {
  inFlight--;
};
export const requestsInFlight = () => inFlight;

/**
 * How many events happened in the last second (ten 100 ms buckets), counting the one being marked.
 * Admission control meters the immediate sends of this process with it: a send waits for its first
 * outcome (a workflow of its own) only under light load. Each such send costs the engine a workflow
 * start and several tasks; measured at 300 sends/s open loop, letting even 5/s through raised every
 * other send's median latency from 10 ms to 80 ms.
 */
export function rateMeter(now: () => number = Date.now) {
  const buckets = new Array<number>(10).fill(0);
  let current = Math.floor(now() / 100);
  return () => {
    const slot = Math.floor(now() / 100);
    if (slot - current >= 10) buckets.fill(0);
    else for (let s = current + 1; s <= slot; s++) buckets[s % 10] = 0;
    current = Math.max(current, slot);
    buckets[current % 10] += 1;
    return buckets.reduce((a, b) => a + b, 0);
  };
}
