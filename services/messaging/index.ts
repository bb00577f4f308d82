// The messaging family as other families see it: routes, scheduling rules and the one way to create outbound messages.
export { resolveSmsRoute, type ResolvedRoute } from './channels.js';
export { parseScheduleTime } from './messages.js';
export { createOutboundMessages } from './outbound.js';
