import type { WorkflowStarter } from '../starter.js';
import type { endUpdate, openedUpdate, replySignal } from './flow-session.js';

export interface FlowSessionKey {
  accountId: number;
  sessionUid: string;
  flowId: number;
}

/** `flow-session/<account>/<session uid>`. */
export const flowSessionWorkflowId = (accountId: number, sessionUid: string) => `flow-session/${accountId}/${sessionUid}`;

/**
 * One customer's session of a flow, started with the `opened` update (executeUpdateWithStart): the
 * API answers once the session's row is written (or refused: the customer has a live one), and a
 * request that dies after the start still has its session opened by the workflow itself.
 */
export const flowSessionStarter: WorkflowStarter<
  'flowSessionWorkflow',
  FlowSessionKey,
  'taskQueue',
  { opened: typeof openedUpdate; end: typeof endUpdate },
  { reply: typeof replySignal }
> = {
  workflowType: 'flowSessionWorkflow',
  taskQueue: 'taskQueue',
  workflowId: (k) => flowSessionWorkflowId(k.accountId, k.sessionUid),
  searchAttributes: (k) => ({ AccountId: String(k.accountId), ResourceId: k.sessionUid, ResourceType: 'flow_session' }),
  memo: (k) => ({ flow_id: k.flowId }),
  workflowIdReusePolicy: 'REJECT_DUPLICATE',
  workflowIdConflictPolicy: 'USE_EXISTING',
  updates: { opened: 'opened', end: 'end' },
  signals: { reply: 'reply' },
};
