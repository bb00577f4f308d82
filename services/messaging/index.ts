// The messaging family as other families see it: routes, scheduling rules and the one way to create outbound messages.
export { resolveSmsRoute, type ResolvedRoute } from './channels.js';
export { parseScheduleTime } from './messages.js';
export { createOutboundMessages } from './outbound.js';
export { sendChatInteractive, sendChatText, type ChatInteractiveSend } from './interactive-send.js';
export { receiveInbound, type InboundMessage } from './inbound.js';
// A note another family's reading of an inbound message leaves on it (a chat order's outcome).
export { noteOnMessage } from './store/messages.js';
export type { ChatOrderHook, CustomerReply, ReplyHook } from './ingress.js';
// Chat conversations: whether the customer's 24-hour window is open, and the numbers a chat goes out from.
export { windowOpen, chatOfMessage, messageRef, messageOfOperationRun, messageOfSourceKey } from './store/messages.js';
// A chat message (text or template) another family sends as the account would (flow sessions).
export { sendWhatsApp, resolveWhatsAppSender, type TemplateSendCheck } from './whatsapp.js';
export { whatsappSenders, chatSenderOf, type WhatsAppNumber } from './store/routes.js';
// The message record's presentation, which a group message carries too (api/groups/messages.ts).
export { messageSchema } from './message-view.js';
// What a campaign needs of messaging: its page's records, the blacklist, its route and its counts.
export { queueCampaignPage, type RecipientDraft, type BulkSource } from './campaign-pages.js';
export { blockedNumbers, smsChannelActive } from './store/routes.js';
export { campaignCounts } from './store/messages.js';
// The operator's side of the sending identities and routes (api/account/settings.ts).
export { listIdentities, addIdentity, updateIdentity, removeIdentity, type IdentityKind } from './identities.js';
