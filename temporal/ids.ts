// Workflow ids are business keys an operator can read: one process per resource, never reused.
export const messageWorkflowId = (accountId: number, uid: string) => `message/${accountId}/${uid}`;
export const contactImportWorkflowId = (accountId: number, importId: number) => `contact-import/${accountId}/${importId}`;
/** One delivery of an event to a webhook endpoint; a redelivery appends `/redeliver-<n>`. */
export const webhookDeliveryWorkflowId = (accountId: number, eventId: string, endpointId: number, redelivery = 0) =>
  `webhook/${accountId}/${eventId}/${endpointId}${redelivery > 0 ? `/redeliver-${redelivery}` : ''}`;
/** One business event to one automation subscription. */
export const automationCallbackWorkflowId = (accountId: number, eventId: string, subscriptionId: number) =>
  `automation/${accountId}/${eventId}/${subscriptionId}`;
export const operationRunWorkflowId = (accountId: number, runId: string) => `operation/${accountId}/${runId}`;
/** The Temporal Schedule behind an automation schedule (same uuid). */
export const automationScheduleId = (accountId: number, scheduleId: string) => `schedule/${accountId}/${scheduleId}`;
export const campaignWorkflowId = (accountId: number, uid: string) => `campaign/${accountId}/${uid}`;
