// The webhooks family as other families see it: recording events for delivery, and their payloads.
export {
  emitEvent,
  messageEventFields,
  orderedPayload,
  MESSAGE_STATUS_EVENTS,
  dispatchedAtOnRecord,
  messageEventsInsertSql,
  type MessageEventRow,
} from './events.js';
