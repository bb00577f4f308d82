import type { EntitySchema } from '@mikro-orm/core';
import { Account, ApiKey, User } from './account.js';
import { BlacklistEntry, Channel, PhoneNumber, SenderId, ShortCode } from './messaging.js';
import { Message, PendingReceipt, ConversationWindow } from './messaging.js';

export { Account, ApiKey, User, BlacklistEntry, Channel, PhoneNumber, SenderId, ShortCode, Message, PendingReceipt, ConversationWindow };
// Typed loosely so each feature can append its entities below without widening this list by hand.
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a heterogeneous list of schemas has no narrower common type
export const entities: EntitySchema<any, any>[] = [
  Account,
  ApiKey,
  User,
  BlacklistEntry,
  Channel,
  PhoneNumber,
  SenderId,
  ShortCode,
  Message,
  PendingReceipt,
  ConversationWindow,
];
import { WebhookEndpoint, OutboxEvent, WebhookDelivery, DeliveryAttempt } from './webhooks.js';
import { BusinessEvent, AutomationSubscription, OperationDefinition, OperationRun, AutomationSchedule } from './automations.js';

export {
  WebhookEndpoint,
  OutboxEvent,
  WebhookDelivery,
  DeliveryAttempt,
  BusinessEvent,
  AutomationSubscription,
  OperationDefinition,
  OperationRun,
  AutomationSchedule,
};
entities.push(
  WebhookEndpoint,
  OutboxEvent,
  WebhookDelivery,
  DeliveryAttempt,
  BusinessEvent,
  AutomationSubscription,
  OperationDefinition,
  OperationRun,
  AutomationSchedule,
);
import { ContactGroup, Contact, ContactImport, ContactImportRow } from './contacts.js';

export { ContactGroup, Contact, ContactImport, ContactImportRow };
entities.push(ContactGroup, Contact, ContactImport, ContactImportRow);
import { Campaign } from './campaigns.js';

export { Campaign };
entities.push(Campaign);
