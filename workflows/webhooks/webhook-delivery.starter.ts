import type { WorkflowStarter } from '../starter.js';
import type { WebhookDeliveryInput } from './webhook-delivery.js';

export interface WebhookDeliveryKey {
  accountId: number;
  eventId: string;
  target: WebhookDeliveryInput['target'];
  /** An operator's redelivery of an endpoint event: 1, 2, … (0 or absent: the first delivery). */
  redelivery?: number;
}

/** One delivery of an event to a webhook endpoint; a redelivery appends `/redeliver-<n>`. */
export const webhookDeliveryWorkflowId = (accountId: number, eventId: string, endpointId: number, redelivery = 0) =>
  `webhook/${accountId}/${eventId}/${endpointId}${redelivery > 0 ? `/redeliver-${redelivery}` : ''}`;
/** One business event to one automation subscription. */
export const automationCallbackWorkflowId = (accountId: number, eventId: string, subscriptionId: number) =>
  `automation/${accountId}/${eventId}/${subscriptionId}`;

/** One event to one target, started once: a repeated start of the same id fails (the relay treats that as done). */
export const webhookDeliveryStarter: WorkflowStarter<'webhookDeliveryWorkflow', WebhookDeliveryKey, 'webhookTaskQueue'> = {
  workflowType: 'webhookDeliveryWorkflow',
  taskQueue: 'webhookTaskQueue',
  workflowId: (k) =>
    k.target.type === 'endpoint'
      ? webhookDeliveryWorkflowId(k.accountId, k.eventId, k.target.id, k.redelivery)
      : automationCallbackWorkflowId(k.accountId, k.eventId, k.target.id),
  searchAttributes: (k) => ({
    AccountId: String(k.accountId),
    ResourceId: k.eventId,
    ResourceType: k.target.type === 'endpoint' ? 'webhook_delivery' : 'automation_callback',
  }),
  workflowIdReusePolicy: 'REJECT_DUPLICATE',
  workflowIdConflictPolicy: 'FAIL',
};
