export { messageWorkflow } from './message.js';
export { outboundDispatcherWorkflow } from './outbound-dispatcher.js';
export { webhookDeliveryWorkflow } from './webhook-delivery.js';
export { operationRunWorkflow } from './operation-run.js';
export { contactImportWorkflow } from './contact-import.js';
export { campaignWorkflow } from './campaign.js';
