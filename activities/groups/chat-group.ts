import { ApplicationFailure, Context } from '@temporalio/activity';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { Config } from '../../config.js';
import type { Logger } from '../../logger.js';
import type { RequestContext } from '../../services/platform/context.js';
import { accountForContext } from '../../services/account/index.js';
import type { GroupRow } from '../../services/groups/group-row.js';
import { groupOfAccount } from '../../services/groups/store.js';
import {
  activateGroup,
  applyGroupSettings,
  creationFailureReason,
  failGroup,
  markGroupDeleted,
  recordCreateRequest,
  restoreAfterRefusedDelete,
  type GroupChange,
  type GroupChangeResult,
} from '../../services/groups/lifecycle.js';
import { sendInitialInvitations } from '../../services/groups/invitations.js';
import {
  applyInviteLinkReset,
  applyJoinRequestDecisions,
  applyParticipantRemovals,
  type GroupMemberChange,
  type GroupMemberChangeResult,
  type ProviderItemFailure,
} from '../../services/groups/members.js';
import { waIdOf } from '../../services/groups/participants.js';
import type { ChatGroupProvider, GroupItemResults, ProviderFailure, ProviderResult } from '../../providers/index.js';

export type { GroupChange, GroupChangeResult, GroupMemberChange, GroupMemberChangeResult };

/** Every change of an existing group the change workflow makes: PATCH, DELETE, members and pins. */
export type GroupChangeRequest = GroupChange | GroupMemberChange;
/** Its answer; each carries the group's status after the change. */
export type GroupChangeOutcome = GroupChangeResult | GroupMemberChangeResult;

/** The provider's group calls these activities make (the registry's chat-group adapter). */
export type GroupCalls = Pick<
  ChatGroupProvider,
  | 'createGroup'
  | 'updateGroup'
  | 'deleteGroup'
  | 'resetInviteLink'
  | 'approveJoinRequests'
  | 'rejectJoinRequests'
  | 'removeParticipants'
  | 'pin'
>;

export interface ChatGroupDeps {
  orm: MikroORM;
  config: Config;
  log: Logger;
  groups: () => GroupCalls;
}

/** How many initial invitees were sent their invitation, and how many could not be. */
export interface InvitationTally {
  sent: number;
  failed: number;
}

/** The provider's "this group is unknown" (131041): a deletion finds nothing left to delete. */
const GROUP_UNKNOWN = '131041';

/** A permanent refusal: not retried; the waiting API call answers 502 with the provider's code and words. */
function refused(f: { code: string; message: string }): ApplicationFailure {
  return ApplicationFailure.nonRetryable(`${f.message}${f.code ? ` (${f.code})` : ''}`, 'ProviderRefused', {
    code: f.code,
    message: f.message,
  });
}

/** The provider's answer, or the failure a retry decides on: refusals are final, outages retried. */
function settled<T>(r: ProviderResult<T>, what: string): T {
  if (r.ok) return r.value;
  throw r.permanent ? refused(r) : transient(r, what);
}

const itemFailures = (r: GroupItemResults, key: (s: string) => string = (s) => s): ProviderItemFailure[] =>
  r.failed.map((f) => ({ id: key(f.item), code: f.code, message: f.message }));

function transient(f: ProviderFailure, what: string): ApplicationFailure {
  return ApplicationFailure.create({
    message: `${what}: ${f.message} (provider code ${f.code})`,
    type: 'ProviderTransient',
    nextRetryDelay: f.retryAfterSeconds ? `${f.retryAfterSeconds} seconds` : undefined,
  });
}

export function createChatGroupActivities(deps: ChatGroupDeps) {
  const em = () => deps.orm.em.fork();
  const loadGroup = async (accountId: number, groupId: number) => {
    const g = await groupOfAccount(em(), groupId, accountId);
    if (!g) throw ApplicationFailure.nonRetryable(`chat group ${groupId} of account ${accountId} does not exist`, 'GroupMissing');
    return g;
  };
  /** The group a member change needs: active at the provider (it may have moved since the API checked). */
  const liveGroup = async (a: { accountId: number; groupId: number }) => {
    const g = await loadGroup(a.accountId, a.groupId);
    if (g.status !== 'active' || !g.provider_group_id) throw refused({ code: '', message: `The group is ${g.status}.` });
    return g as GroupRow & { provider_group_id: string };
  };

  return {
    /**
     * Asks the provider to create the group: its request id (stored on the group), or the refusal
     * in words the group keeps (131215: not eligible). An outage is thrown, to be retried.
     */
    async requestGroupCreation(a: {
      accountId: number;
      groupId: number;
    }): Promise<{ ok: true; requestId: string } | { ok: false; reason: string }> {
      const g = await loadGroup(a.accountId, a.groupId);
      // A retry after the request was made and recorded asks nothing twice.
      if (g.provider_request_id) return { ok: true, requestId: g.provider_request_id };
      if (g.status !== 'creating') return { ok: false, reason: g.failure_reason ?? `The group is ${g.status}.` };
      const r = await deps.groups().createGroup(g.sender_phone_number_id, {
        subject: g.subject,
        ...(g.description ? { description: g.description } : {}),
        joinApprovalMode: g.join_approval_mode,
      });
      if (!r.ok) {
        if (r.permanent) return { ok: false, reason: creationFailureReason(r.code, r.message) };
        throw transient(r, 'group create');
      }
      await recordCreateRequest(em(), a.accountId, a.groupId, r.value.requestId);
      deps.log.info({ ...a, requestId: r.value.requestId }, 'group create requested');
      return { ok: true, requestId: r.value.requestId };
    },

    /** creating → active (group.created); false when it was no longer creating. */
    async activateGroup(a: { accountId: number; groupId: number; providerGroupId: string; inviteLink: string | null }): Promise<boolean> {
      return activateGroup(em(), a);
    },

    /** creating → failed (group.failed); false when it was no longer creating. */
    async failGroup(a: { accountId: number; groupId: number; reason: string }): Promise<boolean> {
      const moved = await failGroup(em(), a);
      if (moved) deps.log.info(a, 'group creation failed');
      return moved;
    },

    /** The invite link (or template) to each invitee named at creation, through the messaging family. */
    async sendInitialInvitations(a: { accountId: number; groupId: number }): Promise<InvitationTally> {
      const db = em();
      const account = await accountForContext(db, a.accountId);
      if (!account) return { sent: 0, failed: 0 };
      const rc: RequestContext = { account, actor: { kind: 'system', process: `chat-group:${a.groupId}` }, em: db, log: deps.log };
      // No first-outcome wait: the invitations go to the dispatch and their outcomes follow as statuses.
      const out = await sendInitialInvitations(
        rc,
        { temporal: Context.current().client, config: { ...deps.config, firstOutcomeWaitMs: 0 } },
        a.groupId,
      );
      if (out.failures.length) deps.log.info({ ...a, failures: out.failures }, 'some initial invitees were not invited');
      return { sent: out.successes.length, failed: out.failures.length };
    },

    /** A deletion the provider never answered (retries spent): the group goes back to the state it was deleted from. */
    async abandonGroupDelete(a: { accountId: number; groupId: number; previousStatus: 'active' | 'suspended' }): Promise<void> {
      await restoreAfterRefusedDelete(em(), a.accountId, a.groupId, a.previousStatus);
    },

    /**
     * One change at the provider, applied to the local row once accepted (so a late answer still
     * lands). A refusal is a non-retryable ProviderRefused failure carrying the provider's words;
     * a refused deletion puts the group back in the state it was deleted from.
     */
    async changeGroupAtProvider(a: { accountId: number; groupId: number; change: GroupChange }): Promise<GroupChangeResult> {
      const g = await loadGroup(a.accountId, a.groupId);
      const calls = deps.groups();
      if (a.change.kind === 'update') {
        if (!g.provider_group_id || (g.status !== 'active' && g.status !== 'suspended'))
          throw ApplicationFailure.nonRetryable(`The group is ${g.status}.`, 'ProviderRefused');
        const { subject, description } = a.change;
        const r = await calls.updateGroup(g.provider_group_id, {
          ...(subject !== undefined ? { subject } : {}),
          ...(description !== undefined ? { description } : {}),
        });
        if (!r.ok) {
          if (r.permanent) throw ApplicationFailure.nonRetryable(`${r.message} (${r.code})`, 'ProviderRefused', { code: r.code });
          throw transient(r, 'group update');
        }
        await applyGroupSettings(em(), a.accountId, a.groupId, {
          ...(subject !== undefined ? { subject } : {}),
          ...(description !== undefined ? { description } : {}),
        });
        return { status: (await loadGroup(a.accountId, a.groupId)).status };
      }
      if (g.status === 'deleted') return { status: 'deleted' };
      if (!g.provider_group_id) {
        await markGroupDeleted(em(), a.accountId, a.groupId);
        return { status: 'deleted' };
      }
      const r = await calls.deleteGroup(g.provider_group_id);
      if (!r.ok && !(r.permanent && r.code === GROUP_UNKNOWN)) {
        if (r.permanent) {
          await restoreAfterRefusedDelete(em(), a.accountId, a.groupId, a.change.previousStatus);
          throw ApplicationFailure.nonRetryable(`${r.message} (${r.code})`, 'ProviderRefused', { code: r.code });
        }
        throw transient(r, 'group delete');
      }
      await markGroupDeleted(em(), a.accountId, a.groupId);
      return { status: 'deleted' };
    },

    // ---- member and pin changes: the provider's call, then its answer applied in one transaction ----

    /** A new invite link at the provider, stored in place of the old one. */
    async resetGroupInviteLink(a: MemberChangeInput<'invite_link_reset'>): Promise<ResultOf<'invite_link_reset'>> {
      const g = await liveGroup(a);
      const { inviteLink } = settled(await deps.groups().resetInviteLink(g.provider_group_id), 'invite link reset');
      const updated = await em().transactional((tx) => applyInviteLinkReset(tx, a.accountId, a.groupId, inviteLink));
      return { kind: 'invite_link_reset', inviteLink, status: updated?.status ?? g.status };
    },

    /** Join requests approved or rejected at the provider; those it decided leave `pending` here. */
    async decideGroupJoinRequests(a: MemberChangeInput<'join_requests'>): Promise<ResultOf<'join_requests'>> {
      const g = await liveGroup(a);
      const { decision, joinRequestIds } = a.change;
      const calls = deps.groups();
      const answer = settled(
        decision === 'approve'
          ? await calls.approveJoinRequests(g.provider_group_id, joinRequestIds)
          : await calls.rejectJoinRequests(g.provider_group_id, joinRequestIds),
        `join requests ${decision}`,
      );
      const failed = itemFailures(answer);
      const done = answer.succeeded.filter((id) => joinRequestIds.includes(id) && !failed.some((f) => f.id === id));
      await em().transactional((tx) => applyJoinRequestDecisions(tx, g, decision, done));
      return { kind: 'join_requests', done, failed, status: g.status };
    },

    /** Members removed at the provider; they and the withdrawn invitations move here in one transaction. */
    async removeGroupParticipants(a: MemberChangeInput<'participants_removal'>): Promise<ResultOf<'participants_removal'>> {
      const g = await liveGroup(a);
      const { members, invitations } = a.change;
      const answer = settled(await deps.groups().removeParticipants(g.provider_group_id, members), 'participants removal');
      const failed = itemFailures(answer, waIdOf);
      const confirmed = new Set(answer.succeeded.map(waIdOf));
      const removed = members.filter((m) => confirmed.has(m) && !failed.some((f) => f.id === m));
      const withdrawn = await em().transactional((tx) => applyParticipantRemovals(tx, g, removed, invitations));
      return { kind: 'participants_removal', removed, withdrawn, failed, status: g.status };
    },

    /** A pin or unpin at the provider (nothing of ours to write: pins are the provider's). */
    async pinGroupMessageAtProvider(a: MemberChangeInput<'pin'>): Promise<ResultOf<'pin'>> {
      const g = await liveGroup(a);
      const { pin, messageId, expirationDays } = a.change;
      // One key per change workflow: a retried activity is recognisably the same pin.
      const key = `pin:${Context.current().info.workflowExecution?.workflowId ?? `${a.groupId}:${messageId}`}`;
      settled(
        await deps
          .groups()
          .pin(
            g.sender_phone_number_id,
            g.provider_group_id,
            { pin, messageId, ...(expirationDays !== null ? { expirationDays } : {}) },
            key,
          ),
        pin ? 'pin' : 'unpin',
      );
      return { kind: 'pin', status: g.status };
    },
  };
}

type MemberChangeInput<K extends GroupMemberChange['kind']> = {
  accountId: number;
  groupId: number;
  change: Extract<GroupMemberChange, { kind: K }>;
};
type ResultOf<K extends GroupMemberChange['kind']> = Extract<GroupMemberChangeResult, { kind: K }>;

export type ChatGroupActivities = ReturnType<typeof createChatGroupActivities>;
