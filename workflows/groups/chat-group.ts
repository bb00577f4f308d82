import { condition, defineQuery, defineSignal, proxyActivities, setHandler } from '@temporalio/workflow';
import type {
  ChatGroupActivities,
  GroupChangeOutcome,
  GroupChangeRequest,
  GroupMemberChange,
  InvitationTally,
} from '../../activities/groups/chat-group.js';

// A chat group's creation (States > Chat-channel group: creating → active | failed). The provider
// answers a create with a request id only; the group id and invite link arrive a moment later in a
// signed lifecycle webhook, which services/groups/lifecycle.ts hands to this workflow as a signal.
// The wait is a durable timer: a worker killed meanwhile resumes it, and the signal is kept in the
// history until a worker reads it. Every write is a guarded activity (creating → one other status),
// so a repeat after a retry or a replay is a no-op.

export interface ChatGroupInput {
  accountId: number;
  groupId: number;
  /** How long the provider's confirmation is awaited (GROUP_CONFIRMATION_SECONDS, fixed at the start). */
  confirmationSeconds: number;
}

/** The provider's word on the create request, as its lifecycle webhook carried it. */
export type GroupConfirmation = { ok: true; providerGroupId: string; inviteLink: string | null } | { ok: false; reason: string };

export interface ChatGroupState {
  groupId: number;
  /** requesting: the create call; waiting: for the lifecycle webhook; inviting: the initial invitees; then active or failed. */
  phase: 'requesting' | 'waiting' | 'inviting' | 'active' | 'failed';
  requestId: string | null;
  providerGroupId: string | null;
  inviteLink: string | null;
  failureReason: string | null;
  invitations: InvitationTally | null;
}

/** The lifecycle webhook of the create request (group_create, with the group or the errors). */
export const groupConfirmedSignal = defineSignal<[GroupConfirmation]>('groupConfirmed');
/** The creation as this workflow sees it. */
export const chatGroupQuery = defineQuery<ChatGroupState>('group');

// The create call: a refusal comes back as a value, an outage is retried a while (the group waits
// in `creating`), then the workflow gives up and fails the group.
const provider = proxyActivities<ChatGroupActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds', maximumAttempts: 10 },
});
// Short local transactions (and the invitation sends): retried until they land.
const local = proxyActivities<ChatGroupActivities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' },
});

export async function chatGroupWorkflow(input: ChatGroupInput): Promise<ChatGroupState> {
  const { accountId, groupId } = input;
  const state: ChatGroupState = {
    groupId,
    phase: 'requesting',
    requestId: null,
    providerGroupId: null,
    inviteLink: null,
    failureReason: null,
    invitations: null,
  };
  // Held in an object: TypeScript does not see a signal handler assign a plain variable.
  const got: { confirmation: GroupConfirmation | null } = { confirmation: null };
  setHandler(chatGroupQuery, () => state);
  // Only the first word counts: a redelivered webhook changes nothing.
  setHandler(groupConfirmedSignal, (c) => {
    got.confirmation ??= c;
  });

  const fail = async (reason: string) => {
    state.failureReason = reason;
    await local.failGroup({ accountId, groupId, reason });
    state.phase = 'failed';
    return state;
  };

  let requested: Awaited<ReturnType<ChatGroupActivities['requestGroupCreation']>>;
  try {
    requested = await provider.requestGroupCreation({ accountId, groupId });
  } catch {
    // Retries exhausted: the provider stayed unreachable.
    return fail('The chat provider could not be reached to create the group.');
  }
  if (!requested.ok) return fail(requested.reason);
  state.requestId = requested.requestId;
  state.phase = 'waiting';

  const answered = await condition(() => got.confirmation !== null, input.confirmationSeconds * 1000);
  const c = got.confirmation;
  // A confirmation after this point finds the group failed and the workflow closed: it never revives it.
  if (!answered || !c) return fail(`The chat provider did not confirm the group within ${input.confirmationSeconds} seconds.`);
  if (!c.ok) return fail(c.reason);

  state.providerGroupId = c.providerGroupId;
  state.inviteLink = c.inviteLink;
  const activated = await local.activateGroup({ accountId, groupId, providerGroupId: c.providerGroupId, inviteLink: c.inviteLink });
  if (!activated) {
    // The row was no longer `creating` (failed by someone else): nothing to invite to.
    state.phase = 'failed';
    state.failureReason = 'The group was no longer being created when the provider confirmed it.';
    return state;
  }
  state.phase = 'inviting';
  state.invitations = await local.sendInitialInvitations({ accountId, groupId });
  state.phase = 'active';
  return state;
}

// ---- one change of an existing group at the provider ----------------------------------------------

export interface ChatGroupChangeInput {
  accountId: number;
  groupId: number;
  change: GroupChangeRequest;
}

const isMemberChange = (c: GroupChangeRequest): c is GroupMemberChange => c.kind !== 'update' && c.kind !== 'delete';

/**
 * One change of a group at the provider, run for an API call that waits for its answer
 * (`chat-group-change/<account>/<group>/<request>`): update subject/description, delete (PATCH,
 * DELETE), and the member and pin calls (invite-link reset, join requests, participants removal,
 * pin). Each is one activity that calls the provider and applies its answer to our tables, so an
 * answer that comes after the API stopped waiting still lands; outages are retried by the
 * activity's policy, a refusal fails the workflow with a ProviderRefused failure.
 */
export async function chatGroupChangeWorkflow(input: ChatGroupChangeInput): Promise<GroupChangeOutcome> {
  const { accountId, groupId, change } = input;
  // The member kinds came after histories of update and delete were recorded: those keep their one
  // activity (changeGroupAtProvider), the new kinds each schedule their own.
  if (isMemberChange(change)) {
    switch (change.kind) {
      case 'invite_link_reset':
        return provider.resetGroupInviteLink({ accountId, groupId, change });
      case 'join_requests':
        return provider.decideGroupJoinRequests({ accountId, groupId, change });
      case 'participants_removal':
        return provider.removeGroupParticipants({ accountId, groupId, change });
      case 'pin':
        return provider.pinGroupMessageAtProvider({ accountId, groupId, change });
    }
  }
  try {
    return await provider.changeGroupAtProvider({ accountId, groupId, change });
  } catch (err) {
    // A deletion left `deleting` by an unreachable provider goes back (a refusal did so already).
    if (change.kind === 'delete')
      await local.abandonGroupDelete({ accountId: input.accountId, groupId: input.groupId, previousStatus: change.previousStatus });
    throw err;
  }
}
