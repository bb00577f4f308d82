import type { WorkflowStarter } from '../starter.js';
import type { cancelSignal, replySignal } from './form-session.js';

export interface FormSessionKey {
  accountId: number;
  sessionUid: string;
  formUid: string;
}

/** `form-session/<account>/<session uid>`: one workflow per recipient of a form send. */
export const formSessionWorkflowId = (accountId: number, sessionUid: string) => `form-session/${accountId}/${sessionUid}`;

/**
 * Started once per session, after its row is written (a session is never started twice); the chat
 * ingress signals `reply`, the API `cancel`. The memo names the form, for an operator in the UI.
 */
export const formSessionStarter: WorkflowStarter<
  'formSessionWorkflow',
  FormSessionKey,
  'taskQueue',
  Record<never, never>,
  { reply: typeof replySignal; cancel: typeof cancelSignal }
> = {
  workflowType: 'formSessionWorkflow',
  taskQueue: 'taskQueue',
  workflowId: (k) => formSessionWorkflowId(k.accountId, k.sessionUid),
  searchAttributes: (k) => ({ AccountId: String(k.accountId), ResourceId: k.sessionUid, ResourceType: 'form_session' }),
  memo: (k) => ({ form_id: k.formUid }),
  workflowIdReusePolicy: 'REJECT_DUPLICATE',
  workflowIdConflictPolicy: 'FAIL',
  signals: { reply: 'reply', cancel: 'cancel' },
};
