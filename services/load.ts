// How busy this API process is right now. Admission control reads it: under load an immediate
// send is queued for the batch dispatcher instead of waiting for its provider's first answer.
let inFlight = 0;

export const requestStarted = () => { inFlight++; };
export const requestEnded = () => { inFlight--; };
export const requestsInFlight = () => inFlight;

/**
 * A token bucket (one second's worth of burst) for the sends of this process that get a workflow of
 * their own and wait for their first outcome. Each costs the engine a workflow start and several
 * tasks; the budget keeps that cost a small, fixed share of the engine's capacity however many sends
 * arrive, the rest going to the batch dispatcher.
 */
export function rateBudget(perSecond: number, now: () => number = Date.now) {
  let tokens = perSecond;
  let last = now();
  return () => {
    const t = now();
    tokens = Math.min(perSecond, tokens + ((t - last) / 1000) * perSecond);
    last = t;
    if (tokens < 1) return false;
    tokens -= 1;
    return true;
  };
}
