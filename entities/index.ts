import { Account, ApiKey, User } from './account.js';
import { BlacklistEntry, Channel, PhoneNumber, SenderId, ShortCode } from './sender.js';
import { Message } from './message.js';

export { Account, ApiKey, User, BlacklistEntry, Channel, PhoneNumber, SenderId, ShortCode, Message };
export const entities = [Account, ApiKey, User, BlacklistEntry, Channel, PhoneNumber, SenderId, ShortCode, Message];
