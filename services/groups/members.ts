import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { ApplicationFailure, WorkflowFailedError, type Client } from '@temporalio/client';
import type { FromSchema } from 'json-schema-to-ts';
import type { Config } from '../../config.js';
import { hasPermission } from '../../domain/account/index.js';
import { GROUP_LIMITS, type GroupStatus } from '../../domain/groups/index.js';
import { startWorkflow } from '../../temporal/starters.js';
import { chatGroupChangeStarter } from '../../workflows/groups/chat-group.starter.js';
import type { RequestContext } from '../platform/context.js';
import { DomainError, forbidden, type DomainErrorDetail } from '../platform/errors.js';
import { groupView, loadGroup, type GroupRow } from './group-row.js';
import { inviteToGroup } from './invitations.js';
import {
  participantsAmong,
  pendingJoinRequests,
  pendingJoinRequestsAmong,
  setInviteLink,
  settleJoinRequests,
  withdrawInvitations,
} from './store.js';
import { moveParticipant, waIdOf } from './participants.js';
import type { PreparedWhatsAppMessage } from '../../domain/messaging/index.js';
import type { ChatGroupProvider, ChatRequest, GroupMessageContent } from '../../providers/index.js';

// Who may be in a group and how they get there (Endpoints > Chat-channel groups: invites,
// invite-link reset, join requests, participants). People join only through the invite link
// (Notes §2.1), so an invite is a message carrying it; the 8-participant limit counts the business,
// members and pending invitations. Provider calls (reset, approve/reject, removal, and pins in
// group-messages.ts) run in the chat-group change workflow, the way PATCH and DELETE do: the request
// starts it and waits CHANGE_WAIT_MS for its answer; its activity calls the provider and applies the
// answer to our tables in one transaction (so a late answer still lands), outages are retried by the
// activity's policy, and a refusal is 502 with nothing changed. Per-item answers come back per item,
// unknown ids included, never as a 500.

export interface MemberServiceDeps {
  temporal: Client;
  config: Config;
}

/** How long a member call waits for the change workflow's answer (as PATCH and DELETE do). */
export const MEMBER_CHANGE_WAIT_MS = 15_000;

/** One per-item refusal of the provider, with its code. */
export interface ProviderItemFailure {
  id: string;
  code: string;
  message: string;
}

/** A change of who is in a group, or of its pins, made at the provider by the change workflow. */
export type GroupMemberChange =
  | { kind: 'invite_link_reset' }
  | { kind: 'join_requests'; decision: 'approve' | 'reject'; joinRequestIds: string[] }
  /** members: wa ids removed at the provider; invitations: pending invitations withdrawn in the same transaction. */
  | { kind: 'participants_removal'; members: string[]; invitations: string[] }
  | { kind: 'pin'; pin: boolean; messageId: string; expirationDays: number | null };

/** The change's answer as it was applied here, and the group's status after it. */
export type GroupMemberChangeResult = { status: GroupStatus } & (
  | { kind: 'invite_link_reset'; inviteLink: string }
  | { kind: 'join_requests'; done: string[]; failed: ProviderItemFailure[] }
  | { kind: 'participants_removal'; removed: string[]; withdrawn: string[]; failed: ProviderItemFailure[] }
  | { kind: 'pin' }
);

/** The request of a group message the message workflow sends (stored on the record, sent by the chat provider). */
export function groupMessageRequest(
  groups: ChatGroupProvider,
  phoneNumberId: string,
  groupId: string,
  m: PreparedWhatsAppMessage,
): ChatRequest {
  const content: GroupMessageContent =
    m.kind === 'template' && m.templateParams
      ? { kind: 'template', name: m.templateParams.name, language: m.templateParams.language, components: m.templateParams.components }
      : m.mediaType && m.mediaUrl
        ? { kind: m.mediaType, link: m.mediaUrl, ...(m.caption ? { caption: m.caption } : {}) }
        : { kind: 'text', body: m.previewBody };
  return groups.messageRequest({ providerPhoneNumberId: phoneNumberId }, groupId, content);
}

// ---- what the change workflow's activities write once the provider answered ------------------------

/** The new invite link replaces the stored one; null when the group is gone meanwhile. */
export async function applyInviteLinkReset(em: EntityManager, accountId: number, groupId: number, inviteLink: string) {
  return setInviteLink(em, accountId, groupId, inviteLink);
}

/** The requests the provider decided leave `pending` (a webhook that settled one first wins). */
export async function applyJoinRequestDecisions(em: EntityManager, g: GroupRow, decision: 'approve' | 'reject', done: string[]) {
  if (!done.length) return;
  await settleJoinRequests(em, g.id, g.account_id, done, decision === 'approve' ? 'approved' : 'rejected');
}

/**
 * Members the provider removed become `removed` (group.participant_removed once: the provider's
 * participants webhook that follows finds the row moved), pending invitations are withdrawn (their
 * place is freed). Answers the invitations actually withdrawn. Run inside the caller's transaction.
 */
export async function applyParticipantRemovals(tx: EntityManager, g: GroupRow, removed: string[], invitations: string[]) {
  for (const waId of removed) await moveParticipant(tx, g, waId, 'removed', { initiated_by: 'business' });
  if (!invitations.length) return [];
  return withdrawInvitations(tx, g.id, g.account_id, invitations);
}

// ---- waiting for the change workflow -----------------------------------------------------------------

/**
 * Runs one change of a group in the chat-group change workflow and waits for its answer a bounded
 * time. The provider's refusal is 502 with its words (nothing changed); an answer slower than the
 * wait is 502 `provider_pending` (the change still lands when the provider answers).
 */
export async function awaitGroupChange<K extends GroupMemberChange['kind']>(
  deps: MemberServiceDeps,
  g: GroupRow,
  change: Extract<GroupMemberChange, { kind: K }>,
  what: string,
): Promise<Extract<GroupMemberChangeResult, { kind: K }>> {
  const accountId = g.account_id;
  const groupId = Number(g.id);
  const handle = await startWorkflow(deps, chatGroupChangeStarter, { accountId, groupId, requestId: randomUUID() }, [
    { accountId, groupId, change },
  ]);
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<null>((resolve) => {
    timer = setTimeout(() => resolve(null), MEMBER_CHANGE_WAIT_MS);
  });
  const result = handle.result();
  result.catch(() => undefined);
  try {
    const r = await Promise.race([result, late]);
    if (r === null)
      throw new DomainError('provider_failure', `The chat provider has not answered yet; the request to ${what} completes when it does.`, {
        reason: 'provider_pending',
        details: { workflow_id: handle.workflowId },
      });
    if (!('kind' in r) || r.kind !== change.kind) throw new Error(`change ${change.kind} answered ${JSON.stringify(r)}`);
    return r as Extract<GroupMemberChangeResult, { kind: K }>;
  } catch (err) {
    const refused = refusalOf(err);
    if (refused) throw refusedBy(what, refused);
    if (err instanceof WorkflowFailedError)
      throw new DomainError('provider_failure', `The chat provider could not ${what}.`, { reason: 'provider_failed' });
    throw err;
  } finally {
    clearTimeout(timer);
  }
}

/** The provider's refusal when the workflow failed with a ProviderRefused failure (in its cause chain). */
function refusalOf(err: unknown): { code: string; message: string } | null {
  for (let e = err as Error | undefined, i = 0; e && i < 8; e = e.cause as Error | undefined, i++) {
    if (e instanceof ApplicationFailure && e.type === 'ProviderRefused') {
      const d = (e.details?.[0] ?? {}) as { code?: unknown; message?: unknown };
      return { code: String(d.code ?? ''), message: typeof d.message === 'string' ? d.message : (e.message ?? '') };
    }
  }
  return null;
}

/** Beside the route's manage permission, whatever sends a message needs this one (Authentication: group permissions). */
export const SEND_PERMISSION = 'communications.send';

export function requireSendPermission(rc: RequestContext): void {
  const a = rc.actor;
  if (a.kind === 'system' || a.kind === 'operator') return;
  if (!a.issuer || !hasPermission(a.issuer.permissions, SEND_PERMISSION)) {
    throw forbidden(`This action requires the ${SEND_PERMISSION} permission.`, 'permission_denied');
  }
}

/** Every member operation but the join-request list needs a live group at the provider. */
export function requireActive(g: GroupRow, action: string): asserts g is GroupRow & { provider_group_id: string } {
  if (g.status === 'active' && g.provider_group_id) return;
  throw new DomainError(
    'conflict',
    g.status === 'creating'
      ? `The group is still being created; it can be ${action} once it is active.`
      : `A group in status ${g.status} cannot be ${action}.`,
    { reason: `group_${g.status}` },
  );
}

/** A provider's refusal of the whole call: 502 in the v3 envelope, nothing changed here. */
export function refusedBy(what: string, r: { code: string; message: string }): DomainError {
  const detail: DomainErrorDetail = { reason: 'provider_refused', details: { provider_code: r.code, provider_message: r.message } };
  return new DomainError('provider_failure', `The chat provider refused to ${what}: ${r.message}${r.code ? ` (${r.code})` : ''}`, detail);
}

const providerId = { type: 'string', minLength: 1, maxLength: 128 } as const;

export const invitesBody = {
  type: 'object',
  required: ['recipients'],
  properties: {
    recipients: {
      type: 'array',
      minItems: 1,
      maxItems: GROUP_LIMITS.invitesPerCall,
      uniqueItems: true,
      items: { type: 'string', minLength: 1, maxLength: 191 },
      description:
        'phone numbers in international format; recipients beyond the places left (8 including the business, members and ' +
        'pending invitations) are per-recipient failures',
    },
    template: {
      type: 'string',
      minLength: 1,
      maxLength: 191,
      pattern: '^[a-z0-9_]+$',
      description: 'an approved group-invite template; absent: the group’s invite_template, else a text with the invite link',
    },
  },
  additionalProperties: false,
} as const;

export const joinRequestsBody = {
  type: 'object',
  required: ['join_requests'],
  properties: {
    join_requests: {
      type: 'array',
      minItems: 1,
      maxItems: 100,
      items: providerId,
      description: 'provider join request ids (GET …/join-requests); unknown ones are per-item failures',
    },
  },
  additionalProperties: false,
} as const;

export const participantsBody = {
  type: 'object',
  required: ['participants'],
  properties: {
    participants: {
      type: 'array',
      minItems: 1,
      maxItems: GROUP_LIMITS.removalsPerCall,
      items: { type: 'string', minLength: 1, maxLength: 32 },
      description: 'WhatsApp ids or phone numbers of participants',
    },
  },
  additionalProperties: false,
} as const;

export type InvitesInput = FromSchema<typeof invitesBody>;
export type JoinRequestsInput = FromSchema<typeof joinRequestsBody>;
export type ParticipantsInput = FromSchema<typeof participantsBody>;

/** POST {id}/invites: per-recipient successes and failures (see inviteToGroup). */
export async function inviteMembers(rc: RequestContext, deps: MemberServiceDeps, id: string, input: InvitesInput) {
  requireSendPermission(rc);
  const group = await loadGroup(rc, id);
  requireActive(group, 'invited to');
  const result = await inviteToGroup(rc, deps, group, input.recipients, input.template ?? null);
  return { group_id: Number(group.id), ...result };
}

/** POST {id}/invite-link/reset: the provider's new link replaces the stored one; the old one stops working there. */
export async function resetInviteLink(rc: RequestContext, deps: MemberServiceDeps, id: string) {
  const group = await loadGroup(rc, id);
  requireActive(group, 'given a new invite link');
  await awaitGroupChange(deps, group, { kind: 'invite_link_reset' }, 'reset the invite link');
  return groupView(await loadGroup(rc, id));
}

const joinRequestView = (r: Awaited<ReturnType<typeof pendingJoinRequests>>[number]) => ({
  join_request_id: r.join_request_id,
  wa_id: r.wa_id,
  phone: `+${r.wa_id}`,
  status: r.status,
  created_at: new Date(r.created_at).toISOString(),
});

/** GET {id}/join-requests: the pending requests as the provider's webhooks reported them, oldest first. */
export async function listJoinRequests(rc: RequestContext, id: string) {
  const group = await loadGroup(rc, id);
  const rows = await pendingJoinRequests(rc.em, group.id, rc.account.id);
  return { group_id: Number(group.id), join_requests: rows.map(joinRequestView) };
}

export type ItemFailure = {
  reason: string;
  provider_code?: string;
};

/**
 * POST {id}/join-requests/approve and /reject. Only the group's pending requests go to the provider;
 * any other id is a failure of its own. An approved person becomes a participant when the provider's
 * participants webhook says they joined.
 */
export async function decideJoinRequests(
  rc: RequestContext,
  deps: MemberServiceDeps,
  id: string,
  input: JoinRequestsInput,
  decision: 'approve' | 'reject',
) {
  const group = await loadGroup(rc, id);
  requireActive(group, decision === 'approve' ? 'joined' : 'managed');
  const asked = [...new Set(input.join_requests.map((s) => s.trim()))];
  const pending = await pendingJoinRequestsAmong(rc.em, group.id, rc.account.id, asked);
  const known = new Set(pending.map((p) => p.join_request_id));
  const failures: ({ join_request_id: string } & ItemFailure)[] = asked
    .filter((r) => !known.has(r))
    .map((r) => ({ join_request_id: r, reason: 'No pending join request of this group has this id.' }));
  const successes: { join_request_id: string; wa_id: string; status: 'approved' | 'rejected' }[] = [];
  const ids = asked.filter((r) => known.has(r));
  if (ids.length) {
    const r = await awaitGroupChange(
      deps,
      group,
      { kind: 'join_requests', decision, joinRequestIds: ids },
      `${decision} the join requests`,
    );
    const to = decision === 'approve' ? 'approved' : 'rejected';
    const waIdOfRequest = new Map(pending.map((p) => [p.join_request_id, p.wa_id]));
    const refused = new Map(r.failed.map((f) => [f.id, f]));
    for (const jr of ids) {
      const f = refused.get(jr);
      if (f || !r.done.includes(jr))
        failures.push({
          join_request_id: jr,
          reason: f?.message ?? 'The provider did not confirm this request.',
          ...(f?.code ? { provider_code: f.code } : {}),
        });
      else successes.push({ join_request_id: jr, wa_id: waIdOfRequest.get(jr)!, status: to });
    }
  }
  const at = (x: string) => asked.indexOf(x);
  failures.sort((a, b) => at(a.join_request_id) - at(b.join_request_id));
  return { group_id: Number(group.id), successes, failures };
}

/**
 * DELETE {id}/participants. A member is removed at the provider (removed people cannot rejoin
 * through the link); a pending invitation is withdrawn here (its place is freed; the link it
 * carried works until the link is reset). Anyone else is a failure of their own.
 */
export async function removeParticipants(rc: RequestContext, deps: MemberServiceDeps, id: string, input: ParticipantsInput) {
  const group = await loadGroup(rc, id);
  requireActive(group, 'changed');
  const failures: ({ participant: string } & ItemFailure)[] = [];
  const successes: { participant: string; wa_id: string; status: 'removed' | 'invitation_withdrawn' }[] = [];
  const wanted: { participant: string; waId: string }[] = [];
  for (const p of input.participants) {
    const waId = waIdOf(p);
    if (waId.length < 6 || waId.length > 15) failures.push({ participant: p, reason: 'Not a WhatsApp id or phone number.' });
    else if (wanted.some((w) => w.waId === waId)) failures.push({ participant: p, reason: 'The participant is listed twice.' });
    else wanted.push({ participant: p, waId });
  }
  const rows = await participantsAmong(
    rc.em,
    group.id,
    rc.account.id,
    wanted.map((w) => w.waId),
  );
  const statusOf = new Map(rows.map((r) => [r.wa_id, r.status]));
  const members: typeof wanted = [];
  const invited: typeof wanted = [];
  for (const w of wanted) {
    const s = statusOf.get(w.waId);
    if (s === 'joined') members.push(w);
    else if (s === 'invited') invited.push(w);
    else failures.push({ participant: w.participant, reason: 'The participant is not in the group.' });
  }
  let removed = new Set<string>();
  let withdrawn: Set<string>;
  const refused = new Map<string, ProviderItemFailure>();
  if (members.length) {
    // Invitations are withdrawn in the same transaction as the removals: a refusal changes nothing.
    const r = await awaitGroupChange(
      deps,
      group,
      { kind: 'participants_removal', members: members.map((m) => m.waId), invitations: invited.map((w) => w.waId) },
      'remove the participants',
    );
    removed = new Set(r.removed);
    withdrawn = new Set(r.withdrawn);
    for (const f of r.failed) refused.set(waIdOf(f.id), f);
  } else {
    // Only invitations: nothing to ask the provider.
    const gone = await rc.em.transactional((tx) =>
      applyParticipantRemovals(
        tx,
        group,
        [],
        invited.map((w) => w.waId),
      ),
    );
    withdrawn = new Set(gone);
  }
  for (const w of invited) {
    if (withdrawn.has(w.waId)) successes.push({ participant: w.participant, wa_id: w.waId, status: 'invitation_withdrawn' });
    else failures.push({ participant: w.participant, reason: 'The participant is not in the group.' });
  }
  for (const m of members) {
    const f = refused.get(m.waId);
    if (f || !removed.has(m.waId))
      failures.push({
        participant: m.participant,
        reason: f?.message ?? 'The provider did not confirm the removal.',
        ...(f?.code ? { provider_code: f.code } : {}),
      });
    else successes.push({ participant: m.participant, wa_id: m.waId, status: 'removed' });
  }
  const at = (x: string) => input.participants.indexOf(x);
  successes.sort((a, b) => at(a.participant) - at(b.participant));
  failures.sort((a, b) => at(a.participant) - at(b.participant));
  return { group_id: Number(group.id), successes, failures };
}
