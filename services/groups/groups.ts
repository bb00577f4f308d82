import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import type { FromSchema } from 'json-schema-to-ts';
import type { Config } from '../../config.js';
import type { Logger } from '../../logger.js';
import { GROUP_LIMITS, GROUP_STATUSES, JOIN_APPROVAL_MODES } from '../../domain/groups/index.js';
import { toE164 } from '../platform/phones.js';
import { startWorkflow, type StarterDeps } from '../../temporal/starters.js';
import { chatGroupChangeStarter, chatGroupStarter } from '../../workflows/groups/chat-group.starter.js';
import type { RequestContext } from '../platform/context.js';
import { providerCallWithin } from '../platform/provider-call.js';
import { DomainError, conflict, validationFailed, type FieldErrors } from '../platform/errors.js';
import { pageAnswer, pageOf, pageQueryProperties } from '../platform/pagination.js';
import { NOT_BLANK } from '../../domain/platform/text-patterns.js';
import { groupView, loadGroup, type GroupRow } from './group-row.js';
import { groupsPage, insertGroup, owedGroupCreations, setGroupDeleting } from './store.js';
import { markGroupDeleted, type GroupChange, type GroupChangeResult } from './lifecycle.js';
import { whatsappSenders, type WhatsAppNumber } from '../messaging/index.js';

// A chat group's own operations (Endpoints > Chat-channel groups: create, list, read, PATCH,
// DELETE). Creation answers at once with the group in `creating`; the chat-group workflow
// (workflows/groups/chat-group.ts) does the provider's part. PATCH and DELETE reach the provider
// the way the catalogue family does: a short workflow the API call waits for, a bounded time.

export interface GroupServiceDeps {
  temporal: Client;
  config: Pick<Config, 'taskQueue' | 'groupConfirmationSeconds'>;
  log?: Logger;
}

/** How long PATCH and DELETE wait for the provider's answer before they answer with the group as it stands. */
export const CHANGE_WAIT_MS = 15_000;

/** Cloud API template names: lower-case letters, digits and underscores. */
const TEMPLATE_NAME = '^[a-z0-9_]+$';

export const groupCreateBody = {
  type: 'object',
  required: ['subject'],
  properties: {
    sender_id: {
      type: 'string',
      maxLength: 64,
      description: 'a provider phone-number id of one of the account’s WhatsApp numbers; absent: the account’s first WhatsApp number',
    },
    subject: { type: 'string', maxLength: GROUP_LIMITS.subject, pattern: NOT_BLANK, description: 'required; trimmed; 1 to 128 characters' },
    description: { type: 'string', maxLength: GROUP_LIMITS.description },
    join_approval_mode: { enum: JOIN_APPROVAL_MODES, default: 'auto_approve' },
    invite_template: {
      type: 'string',
      minLength: 1,
      maxLength: 191,
      pattern: TEMPLATE_NAME,
      description:
        'the name of an approved Cloud API group-invite template (there is no local template store yet): each invitee gets it with ' +
        'the group id as its body parameter; absent: a text message with the invite link (delivered only inside the 24-hour window)',
    },
    invitees: {
      type: 'array',
      maxItems: GROUP_LIMITS.initialInvitees,
      items: { type: 'string', minLength: 1, maxLength: 191 },
      description: 'at most 7 distinct phone numbers (international format); invited once the provider confirms the group',
    },
  },
  additionalProperties: false,
} as const;

export const groupListQuery = {
  type: 'object',
  properties: {
    status: {
      enum: ['all', ...GROUP_STATUSES],
      description: 'one state, or all; default: every state but deleted',
    },
    sender_id: { type: 'string', maxLength: 64, description: 'the provider phone-number id the group runs on' },
    ...pageQueryProperties,
  },
} as const;

export const groupUpdateBody = {
  type: 'object',
  properties: {
    subject: { type: 'string', maxLength: GROUP_LIMITS.subject, pattern: NOT_BLANK, description: 'trimmed; 1 to 128 characters' },
    description: { type: 'string', maxLength: GROUP_LIMITS.description, description: 'an empty string clears it' },
  },
  minProperties: 1,
  additionalProperties: false,
} as const;

export type GroupCreateInput = FromSchema<typeof groupCreateBody>;
export type GroupListQuery = FromSchema<typeof groupListQuery>;
export type GroupUpdateInput = FromSchema<typeof groupUpdateBody>;

/** The business number a group runs on: sender_id names one of the account's WhatsApp phone-number ids; absent, its first. */
async function groupSender(rc: RequestContext, senderId: string | undefined): Promise<WhatsAppNumber> {
  const numbers = await whatsappSenders(rc.em, rc.account.id);
  const wanted = senderId?.trim();
  if (!wanted) {
    if (!numbers.length) throw validationFailed({ sender_id: ['No WhatsApp business number is configured for this account.'] });
    return numbers[0];
  }
  const found = numbers.find((n) => n.provider_phone_number_id === wanted);
  if (!found) throw validationFailed({ sender_id: ['The sender id must be a WhatsApp phone number id of this account.'] });
  return found;
}

/** The subject as the provider stores it (trimmed), or the field's problem. */
function subjectOf(raw: string, errors: FieldErrors): string {
  const s = raw.trim();
  if (!s) errors.subject = ['The subject field is required.'];
  else if ([...s].length > GROUP_LIMITS.subject)
    errors.subject = [`The subject may not be greater than ${GROUP_LIMITS.subject} characters.`];
  return s;
}

/** Invitees in E.164, distinct; the business's own number is no invitee. */
function inviteesOf(raw: readonly string[] | undefined, business: string, errors: FieldErrors): string[] {
  const out: string[] = [];
  (raw ?? []).forEach((r, i) => {
    const e164 = toE164(r);
    if (!e164) errors[`invitees.${i}`] = ['The invitee must be a phone number in international format.'];
    else if (out.includes(e164)) errors[`invitees.${i}`] = ['The invitee is listed twice.'];
    else if (e164 === toE164(business)) errors[`invitees.${i}`] = ['The group’s own business number cannot be invited.'];
    else out.push(e164);
  });
  if (out.length > GROUP_LIMITS.initialInvitees) errors.invitees = [`At most ${GROUP_LIMITS.initialInvitees} invitees may be named.`];
  return out;
}

/**
 * POST /whatsapp/groups: the group in `creating` (201). The creation workflow is started once the
 * row committed; a start that fails leaves the group to the reconciler (startOwedGroupCreations).
 */
export async function createGroup(rc: RequestContext, deps: GroupServiceDeps, input: GroupCreateInput) {
  const errors: FieldErrors = {};
  const subject = subjectOf(input.subject, errors);
  if (Object.keys(errors).length) throw validationFailed(errors);
  const sender = await groupSender(rc, input.sender_id);
  const invitees = inviteesOf(input.invitees, sender.number, errors);
  if (Object.keys(errors).length) throw validationFailed(errors);
  const description = input.description?.trim() ? input.description : null;
  const group = await insertGroup(rc.em, {
    accountId: rc.account.id,
    senderPhoneNumberId: sender.provider_phone_number_id,
    channelId: sender.channel_id,
    subject,
    description,
    joinApprovalMode: input.join_approval_mode ?? 'auto_approve',
    inviteTemplate: input.invite_template ?? null,
    invitees,
  });
  try {
    await startGroupCreation(deps, rc.account.id, Number(group.id));
  } catch (err) {
    rc.log.warn({ err, group: Number(group.id) }, 'chat-group workflow not started; the reconciler will start it');
  }
  return groupView(group);
}

async function startGroupCreation(deps: StarterDeps<'taskQueue'> & GroupServiceDeps, accountId: number, groupId: number) {
  try {
    await startWorkflow(deps, chatGroupStarter, { accountId, groupId }, [
      { accountId, groupId, confirmationSeconds: deps.config.groupConfirmationSeconds },
    ]);
  } catch (err) {
    if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
  }
}

/**
 * One reconciler pass: starts the creation workflow of groups still `creating` with no provider
 * request recorded, created more than `olderThanSeconds` ago (their start was lost between the
 * commit and Temporal). A group whose workflow runs is refused by its id policy and left alone.
 */
export async function startOwedGroupCreations(em: EntityManager, deps: GroupServiceDeps, olderThanSeconds = 30, limit = 200) {
  const rows = await owedGroupCreations(em, olderThanSeconds, limit);
  let started = 0;
  for (const r of rows) {
    try {
      await startWorkflow(deps, chatGroupStarter, { accountId: r.account_id, groupId: Number(r.id) }, [
        { accountId: r.account_id, groupId: Number(r.id), confirmationSeconds: deps.config.groupConfirmationSeconds },
      ]);
      started++;
    } catch (err) {
      if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
    }
  }
  return started;
}

/** GET /whatsapp/groups: newest first; default every state but deleted; page-number pagination (default 20, cap 100). */
export async function listGroups(rc: RequestContext, q: GroupListQuery) {
  const { page, perPage, offset } = pageOf(q);
  const { total, rows } = await groupsPage(
    rc.em,
    rc.account.id,
    { status: q.status, senderId: q.sender_id?.trim() },
    { limit: perPage, offset },
  );
  return pageAnswer('groups', rows.map(groupView), { page, perPage }, total);
}

/** GET /whatsapp/groups/{id}: the group and its state; another account's is 404. */
export async function getGroup(rc: RequestContext, id: string) {
  return groupView(await loadGroup(rc, id));
}

const stateConflict = (g: GroupRow, action: string) =>
  new DomainError(
    'conflict',
    g.status === 'creating'
      ? `The group is still being created; it can be ${action} once it is active.`
      : `A group in status ${g.status} cannot be ${action}.`,
    { reason: `group_${g.status}` },
  );

/**
 * PATCH /whatsapp/groups/{id}: subject and/or description of an active group, at the provider first.
 * The provider's refusal is 502 and changes nothing; an answer slower than CHANGE_WAIT_MS answers
 * with the group as it stands and the change lands when the provider accepts it.
 */
export async function updateGroup(rc: RequestContext, deps: GroupServiceDeps, id: string, input: GroupUpdateInput) {
  const errors: FieldErrors = {};
  if (input.subject === undefined && input.description === undefined)
    throw validationFailed({ subject: ['Send a subject, a description or both.'] });
  const subject = input.subject === undefined ? undefined : subjectOf(input.subject, errors);
  if (Object.keys(errors).length) throw validationFailed(errors);
  const group = await loadGroup(rc, id);
  if (group.status !== 'active') throw stateConflict(group, 'changed');
  const change: GroupChange = {
    kind: 'update',
    ...(subject !== undefined ? { subject } : {}),
    ...(input.description !== undefined ? { description: input.description } : {}),
  };
  await changeAtProvider(deps, rc.account.id, Number(group.id), change, 'update the group');
  return groupView(await loadGroup(rc, id));
}

/**
 * DELETE /whatsapp/groups/{id}: an active or suspended group is marked `deleting` and deleted at the
 * provider; the answer is the group's state (deleted, or deleting while the provider has not
 * answered). A failed group has no group at the provider and is deleted here at once. Deleting a
 * group already `deleting` answers its state again; `creating` and `deleted` are 409.
 */
export async function deleteGroup(rc: RequestContext, deps: GroupServiceDeps, id: string) {
  const group = await loadGroup(rc, id);
  if (group.status === 'deleting') return groupView(group);
  if (group.status === 'failed') {
    await markGroupDeleted(rc.em, rc.account.id, Number(group.id));
    return groupView(await loadGroup(rc, id));
  }
  if (group.status !== 'active' && group.status !== 'suspended') throw stateConflict(group, 'deleted');
  const marked = await setGroupDeleting(rc.em, rc.account.id, Number(group.id), group.status);
  if (!marked) throw conflict('The group changed meanwhile; read it and try again.');
  await changeAtProvider(deps, rc.account.id, Number(group.id), { kind: 'delete', previousStatus: group.status }, 'delete the group');
  return groupView(await loadGroup(rc, id));
}

/** Runs one change at the provider and waits for it a bounded time; a refusal is 502 with the provider's words. */
async function changeAtProvider(
  deps: GroupServiceDeps,
  accountId: number,
  groupId: number,
  change: GroupChange,
  what: string,
): Promise<GroupChangeResult | null> {
  const key = { accountId, groupId, requestId: randomUUID() };
  const handle = await startWorkflow(deps, chatGroupChangeStarter, key, [{ accountId, groupId, change }]);
  return providerCallWithin(handle, CHANGE_WAIT_MS, {
    refused: `The chat provider refused to ${what}`,
    unreachable: `The chat provider could not ${what}.`,
  });
}
