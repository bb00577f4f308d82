// The chat-groups family as other families see it: subscribed to the provider webhook ingress where
// the API wires it (the group changes and group messages of each verified webhook); the reconciler
// repairs creations whose workflow start was lost.
export { receiveGroupWebhook } from './webhooks.js';
export { startOwedGroupCreations } from './groups.js';
