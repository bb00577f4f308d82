// The automations family as other families see it: business events.
export { businessEnvelope, emitBusinessEvent, type BusinessEventRow } from './business-events.js';
