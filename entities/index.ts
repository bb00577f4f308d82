import { Account, ApiKey, User } from './account.js';
import { BlacklistEntry, Channel, PhoneNumber, SenderId, ShortCode } from './sender.js';
import { Message, PendingReceipt, ConversationWindow } from './message.js';

export { Account, ApiKey, User, BlacklistEntry, Channel, PhoneNumber, SenderId, ShortCode, Message, PendingReceipt, ConversationWindow };
export const entities = [Account, ApiKey, User, BlacklistEntry, Channel, PhoneNumber, SenderId, ShortCode, Message, PendingReceipt, ConversationWindow];
