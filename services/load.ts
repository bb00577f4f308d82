// How busy this API process is right now. Admission control reads it: under load an immediate
// send is queued for the batch dispatcher instead of waiting for its provider's first answer.
let inFlight = 0;

export const requestStarted = () => { inFlight++; };
export const requestEnded = () => { inFlight--; };
export const requestsInFlight = () => inFlight;
