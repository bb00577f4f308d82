import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { Logger } from '../../logger.js';
import { NOT_ELIGIBLE_CODE, type GroupStatus } from '../../domain/groups/index.js';
import { signalWorkflow } from '../../temporal/starters.js';
import { chatGroupStarter, chatGroupWorkflowId } from '../../workflows/groups/chat-group.starter.js';
import { emitEvent } from '../webhooks/index.js';
import type { GroupRow } from './group-row.js';
import {
  groupByCreateRequestId,
  groupByProviderGroupId,
  restoreGroupStatus,
  setCreateRequestId,
  setGroupActive,
  setGroupDeleted,
  setGroupFailed,
  setGroupSettings,
  setGroupSuspended,
} from './store.js';

// A group's moves after its creation was asked for: the guarded writes the chat-group workflow's
// activities make (creating → active | failed, the provider's answer to a change) and what the
// provider's lifecycle, settings and status webhooks change. Every move is one guarded UPDATE (the
// status it leaves is in its WHERE) with its event in the same transaction, so a repeat, a
// redelivered webhook or a race with the workflow moves the group once and emits once.

/** One change of an existing group at the provider (PATCH, DELETE). */
export type GroupChange =
  { kind: 'update'; subject?: string; description?: string } | { kind: 'delete'; previousStatus: 'active' | 'suspended' };

export interface GroupChangeResult {
  status: GroupStatus;
}

/** A group event's fields (Events: group.*): the group's ids, subject, status and the reason of a failure. */
export function groupEventFields(g: GroupRow, reason: string | null = null) {
  return {
    group_id: Number(g.id),
    provider_group_id: g.provider_group_id,
    sender_id: g.sender_phone_number_id,
    subject: g.subject,
    status: g.status,
    reason,
  };
}

/** The words a failed creation keeps: 131215 in our words, any other refusal in the provider's. */
export function creationFailureReason(code: number | string | null | undefined, message: string | null | undefined): string {
  if (Number(code) === NOT_ELIGIBLE_CODE) return `not eligible for groups (${NOT_ELIGIBLE_CODE})`;
  const words = message?.trim() || 'the chat provider refused to create the group';
  return code !== undefined && code !== null && code !== '' ? `${words} (${code})` : words;
}

// ---- the creation workflow's writes ------------------------------------------------------------------

/** Keeps the provider's id of the create request, which its lifecycle webhook names. */
export async function recordCreateRequest(em: EntityManager, accountId: number, groupId: number, requestId: string) {
  await setCreateRequestId(em, accountId, groupId, requestId);
}

/** creating → active with the provider's group id and invite link, and group.created; false when the group was not creating. */
export async function activateGroup(
  em: EntityManager,
  a: { accountId: number; groupId: number; providerGroupId: string; inviteLink: string | null },
): Promise<boolean> {
  return em.transactional(async (tx) => {
    const g = await setGroupActive(tx, a.accountId, a.groupId, a.providerGroupId, a.inviteLink);
    if (!g) return false;
    await emitEvent(tx, a.accountId, 'group.created', { ...groupEventFields(g), invite_link: g.invite_link });
    return true;
  });
}

/** creating → failed with the reason, and group.failed; false when the group was not creating. */
export async function failGroup(em: EntityManager, a: { accountId: number; groupId: number; reason: string }): Promise<boolean> {
  return em.transactional(async (tx) => {
    const g = await setGroupFailed(tx, a.accountId, a.groupId, a.reason);
    if (!g) return false;
    await emitEvent(tx, a.accountId, 'group.failed', groupEventFields(g, a.reason));
    return true;
  });
}

/** Any state but deleted → deleted, and group.deleted; false when it was deleted already. */
export async function markGroupDeleted(em: EntityManager, accountId: number, groupId: number): Promise<boolean> {
  return em.transactional(async (tx) => {
    const g = await setGroupDeleted(tx, accountId, groupId);
    if (!g) return false;
    await emitEvent(tx, accountId, 'group.deleted', groupEventFields(g));
    return true;
  });
}

/** A deletion the provider refused: the group goes back to the state it was deleted from. */
export async function restoreAfterRefusedDelete(em: EntityManager, accountId: number, groupId: number, previous: GroupStatus) {
  await restoreGroupStatus(em, accountId, groupId, previous);
}

/**
 * Subject and/or description as the provider now has them, and group.updated when either changed
 * (our own PATCH and the settings webhook that follows it change the row, and emit, once).
 */
export async function applyGroupSettings(
  em: EntityManager,
  accountId: number,
  groupId: number,
  s: { subject?: string; description?: string | null },
): Promise<boolean> {
  return em.transactional(async (tx) => {
    const description = s.description === undefined ? undefined : s.description === null || s.description === '' ? null : s.description;
    const g = await setGroupSettings(tx, accountId, groupId, { subject: s.subject, description });
    if (!g) return false;
    await emitEvent(tx, accountId, 'group.updated', groupEventFields(g));
    return true;
  });
}

/** The provider suspended the group (active → suspended) or lifted it (suspended → active), with group.updated. */
export async function applyGroupSuspension(em: EntityManager, accountId: number, groupId: number, suspended: boolean) {
  return em.transactional(async (tx) => {
    const g = await setGroupSuspended(tx, accountId, groupId, suspended);
    if (!g) return false;
    await emitEvent(tx, accountId, 'group.updated', groupEventFields(g, suspended ? 'suspended by the provider' : null));
    return true;
  });
}

// ---- the provider's webhooks ------------------------------------------------------------------------

export interface LifecycleDeps {
  orm: MikroORM;
  temporal: Client;
  log?: Logger;
}

/** A group_lifecycle_update, in our words. */
export interface GroupLifecycleNotice {
  action: 'group_create' | 'group_delete';
  /** The business number the webhook came for (metadata.phone_number_id), when it says. */
  phoneNumberId?: string | null;
  groupId?: string | null;
  requestId?: string | null;
  inviteLink?: string | null;
  /** The provider's errors: a failed create. */
  errors?: { code?: number | string | null; message?: string | null }[];
}

/** A group_settings_update: each field present only when it changed, with whether the change held. */
export interface GroupSettingsNotice {
  groupId: string;
  subject?: { text: string | null; ok: boolean } | null;
  description?: { text: string | null; ok: boolean } | null;
}

/** A group_status_update. */
export interface GroupStatusNotice {
  groupId: string;
  action: 'group_suspend' | 'group_suspend_cleared';
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** How long a create confirmation waits for its request id to be stored (the provider may answer faster than our write). */
const REQUEST_ID_WAIT_MS = 5_000;

async function groupByRequestId(em: EntityManager, requestId: string): Promise<GroupRow | null> {
  const deadline = Date.now() + REQUEST_ID_WAIT_MS;
  for (;;) {
    const g = await groupByCreateRequestId(em.fork(), requestId);
    if (g || Date.now() > deadline) return g;
    await sleep(200);
  }
}

const groupByProviderId = (em: EntityManager, providerGroupId: string) => groupByProviderGroupId(em.fork(), providerGroupId);

/**
 * group_create: the creation workflow is told (signal) and decides: it writes active or failed.
 * A confirmation for a group no longer `creating` (failed after the confirmation wait, say) changes
 * nothing: a timed-out group is never revived, and the group left at the provider is only logged.
 * group_delete: the group is deleted (from any state), with group.deleted once.
 */
export async function applyGroupLifecycle(deps: LifecycleDeps, n: GroupLifecycleNotice): Promise<void> {
  const em = deps.orm.em.fork();
  if (n.action === 'group_delete') {
    const g = n.groupId ? await groupByProviderId(em, n.groupId) : null;
    if (g) await markGroupDeleted(em, g.account_id, Number(g.id));
    else deps.log?.info({ providerGroupId: n.groupId }, 'group_delete for a group we do not know');
    return;
  }
  const g = n.requestId ? await groupByRequestId(em, n.requestId) : n.groupId ? await groupByProviderId(em, n.groupId) : null;
  if (!g) {
    deps.log?.warn({ requestId: n.requestId, providerGroupId: n.groupId }, 'group_create for a request we do not know');
    return;
  }
  if (n.phoneNumberId && n.phoneNumberId !== g.sender_phone_number_id) {
    deps.log?.warn({ group: Number(g.id), phoneNumberId: n.phoneNumberId }, 'group_create from another business number; ignored');
    return;
  }
  if (g.status !== 'creating') {
    deps.log?.info({ group: Number(g.id), status: g.status }, 'group_create for a group no longer being created; ignored');
    return;
  }
  const failure = n.errors?.[0];
  const confirmation =
    failure || !n.groupId
      ? { ok: false as const, reason: creationFailureReason(failure?.code, failure?.message ?? 'the provider sent no group id') }
      : { ok: true as const, providerGroupId: n.groupId, inviteLink: n.inviteLink ?? null };
  try {
    await signalWorkflow(deps.temporal, chatGroupStarter, chatGroupWorkflowId(g.account_id, Number(g.id)), 'groupConfirmed', confirmation);
  } catch (err) {
    if (!(err instanceof WorkflowNotFoundError)) throw err;
    deps.log?.info({ group: Number(g.id) }, 'group_create after the creation workflow ended; ignored');
  }
}

/** group_settings_update: the subject and description the provider accepted. */
export async function applyGroupSettingsNotice(deps: LifecycleDeps, n: GroupSettingsNotice): Promise<void> {
  const em = deps.orm.em.fork();
  const g = await groupByProviderId(em, n.groupId);
  if (!g) return;
  const s: { subject?: string; description?: string | null } = {};
  if (n.subject?.ok && n.subject.text) s.subject = n.subject.text;
  if (n.description?.ok) s.description = n.description.text ?? null;
  if (s.subject === undefined && s.description === undefined) return;
  await applyGroupSettings(em, g.account_id, Number(g.id), s);
}

/** group_status_update: suspended by the provider, or the suspension lifted. */
export async function applyGroupStatusNotice(deps: LifecycleDeps, n: GroupStatusNotice): Promise<void> {
  const em = deps.orm.em.fork();
  const g = await groupByProviderId(em, n.groupId);
  if (!g) return;
  await applyGroupSuspension(em, g.account_id, Number(g.id), n.action === 'group_suspend');
}
