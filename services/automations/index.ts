// The automations family as other families see it: business events, their outbox and the subscriptions they go to.
export { businessEnvelope, emitBusinessEvent } from './business-events.js';
export { startOperationWorkflow } from './operations.js';
export { queuedRunsLeftBehind } from './store.js';
// Business events to automation subscriptions, over the webhooks family's deliveries.
export { relayBusinessEvents, subscriptionDeliveries } from './subscription-deliveries.js';
