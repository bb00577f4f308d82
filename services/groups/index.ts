// The chat-groups family as other families see it: the WhatsApp webhook ingress hands it the group
// fields and group messages; the reconciler repairs creations whose workflow start was lost.
export { receiveGroupWebhook } from './webhooks.js';
export { startOwedGroupCreations } from './groups.js';
