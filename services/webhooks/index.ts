// The webhooks family as other families see it: recording events for delivery, and their payloads.
export {
  emitEvent,
  messageEventFields,
  orderedPayload,
  MESSAGE_STATUS_EVENTS,
  messageEventsInsertSql,
  type MessageEventRow,
  type EventKind,
} from './events.js';
// The delivery machinery automation subscriptions share (services/automations/subscription-deliveries.ts).
export { startDelivery, inPool, type DispatchDeps } from './dispatch.js';
export { matchesFilter } from './events.js';
export { automationHeaders } from './signing.js';
export type { SubscriptionDeliveries, SignedRequest } from './subscriptions.js';
