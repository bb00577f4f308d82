export { messageWorkflow } from './messaging/message.js';
export { outboundDispatcherWorkflow } from './messaging/outbound-dispatcher.js';
export { webhookDeliveryWorkflow } from './webhooks/webhook-delivery.js';
export { operationRunWorkflow } from './automations/operation-run.js';
export { contactImportWorkflow } from './contacts/contact-import.js';
export { campaignWorkflow } from './campaigns/campaign.js';
