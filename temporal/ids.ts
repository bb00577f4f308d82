// Workflow ids are business keys an operator can read: one process per resource, never reused.
// Each is declared in its workflow's starter (workflows/<family>/*.starter.ts); they are gathered
// here for code that only needs a handle (signals, queries, tests).
export { messageWorkflowId } from '../workflows/messaging/message.starter.js';
export { dispatcherWorkflowId } from '../workflows/messaging/outbound-dispatcher.starter.js';
export { contactImportWorkflowId } from '../workflows/contacts/contact-import.starter.js';
export { webhookDeliveryWorkflowId, automationCallbackWorkflowId } from '../workflows/webhooks/webhook-delivery.starter.js';
export { operationRunWorkflowId } from '../workflows/automations/operation-run.starter.js';
export { campaignWorkflowId } from '../workflows/campaigns/campaign.starter.js';
export { catalogueSyncWorkflowId } from '../workflows/catalogues/catalogue-sync.starter.js';
export { catalogueSetupWorkflowId } from '../workflows/catalogues/catalogue-setup.starter.js';
export { productPushWorkflowId } from '../workflows/catalogues/product-push.starter.js';
export { productsPushWorkflowId } from '../workflows/catalogues/products-push.starter.js';
export { cartAbandonmentWorkflowId } from '../workflows/shop/cart-abandonment.starter.js';
export { orderHoldWorkflowId } from '../workflows/orders/order-hold.starter.js';
export { paymentWorkflowId } from '../workflows/payments/payment.starter.js';
export { refundWorkflowId } from '../workflows/payments/refund.starter.js';
export { paymentReconciliationWorkflowId } from '../workflows/payments/reconciliation.starter.js';
/** The Temporal Schedule of one occasion of one account, and the id its runs start with. */
export { occasionWorkflowId as occasionScheduleId } from '../workflows/occasions/occasion.starter.js';
/** The Temporal Schedule behind an automation schedule (same uuid). */
export const automationScheduleId = (accountId: number, scheduleId: string) => `schedule/${accountId}/${scheduleId}`;
export { templateReviewWorkflowId } from '../workflows/templates/template-review.starter.js';
export { templateCallWorkflowId } from '../workflows/templates/template-call.starter.js';
