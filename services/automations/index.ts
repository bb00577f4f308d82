// The automations family as other families see it: business events, their outbox and the subscriptions they go to.
export { businessEnvelope, emitBusinessEvent } from './business-events.js';
export { startOperationWorkflow } from './operations.js';
export {
  activeSubscriptionsOf,
  businessEventById,
  claimUndispatchedBusinessEvents,
  markBusinessEventsDispatched,
  queuedRunsLeftBehind,
  subscriptionTarget,
} from './store.js';
