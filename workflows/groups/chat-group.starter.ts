import type { WorkflowStarter } from '../starter.js';
import type { groupConfirmedSignal } from './chat-group.js';

export interface ChatGroupKey {
  accountId: number;
  groupId: number;
}

/** `chat-group/<account>/<group>`. */
export const chatGroupWorkflowId = (accountId: number, groupId: number) => `chat-group/${accountId}/${groupId}`;

/**
 * A group's creation, started once per group after its row committed. A repeated start (the
 * reconciler after a lost acknowledgement) is refused: the creation runs or has run.
 */
export const chatGroupStarter: WorkflowStarter<
  'chatGroupWorkflow',
  ChatGroupKey,
  'taskQueue',
  Record<never, never>,
  { groupConfirmed: typeof groupConfirmedSignal }
> = {
  workflowType: 'chatGroupWorkflow',
  taskQueue: 'taskQueue',
  workflowId: (k) => chatGroupWorkflowId(k.accountId, k.groupId),
  searchAttributes: (k) => ({ AccountId: String(k.accountId), ResourceId: String(k.groupId), ResourceType: 'chat_group' }),
  workflowIdReusePolicy: 'REJECT_DUPLICATE',
  workflowIdConflictPolicy: 'FAIL',
  signals: { groupConfirmed: 'groupConfirmed' },
};

export interface ChatGroupChangeKey extends ChatGroupKey {
  /** The request's own id: every change call is a workflow of its own. */
  requestId: string;
}

/** `chat-group-change/<account>/<group>/<request>`. */
export const chatGroupChangeWorkflowId = (k: ChatGroupChangeKey) => `chat-group-change/${k.accountId}/${k.groupId}/${k.requestId}`;

/**
 * One change of a group at the provider (PATCH, DELETE, invite-link reset, join-request decisions,
 * participants removal, pin), awaited by the API call that asked for it.
 */
export const chatGroupChangeStarter: WorkflowStarter<'chatGroupChangeWorkflow', ChatGroupChangeKey> = {
  workflowType: 'chatGroupChangeWorkflow',
  taskQueue: 'taskQueue',
  workflowId: chatGroupChangeWorkflowId,
  searchAttributes: (k) => ({ AccountId: String(k.accountId), ResourceId: String(k.groupId), ResourceType: 'chat_group_change' }),
  workflowIdReusePolicy: 'REJECT_DUPLICATE',
  workflowIdConflictPolicy: 'FAIL',
};
