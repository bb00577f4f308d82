import type { WorkflowStarter } from '../starter.js';
import type { firstOutcomeUpdate, receiptSignal } from './message.js';

export interface MessageKey {
  accountId: number;
  messageId: number;
  uid: string;
  channelType: 'sms' | 'whatsapp';
}

/** `message/<account>/<message uid>`: one process per message, ever. */
export const messageWorkflowId = (accountId: number, uid: string) => `message/${accountId}/${uid}`;

/** A message's workflow: started once (a second start of the id fails, even after it closed). */
export const messageStarter: WorkflowStarter<
  'messageWorkflow',
  MessageKey,
  'taskQueue',
  { firstOutcome: typeof firstOutcomeUpdate },
  { receipt: typeof receiptSignal }
> = {
  workflowType: 'messageWorkflow',
  taskQueue: 'taskQueue',
  workflowId: (k) => messageWorkflowId(k.accountId, k.uid),
  searchAttributes: (k) => ({ AccountId: String(k.accountId), ResourceId: k.uid, ResourceType: 'message' }),
  memo: (k) => ({ messageId: k.messageId, channelType: k.channelType }),
  workflowIdReusePolicy: 'REJECT_DUPLICATE',
  workflowIdConflictPolicy: 'FAIL',
  updates: { firstOutcome: 'firstOutcome' },
  signals: { receipt: 'receipt' },
};

/**
 * The same start with the first-outcome update (the send endpoint waits for the provider's answer):
 * an id already running is joined, so the update reaches it instead of the start failing.
 */
export const messageWithOutcomeStarter: typeof messageStarter = { ...messageStarter, workflowIdConflictPolicy: 'USE_EXISTING' };
