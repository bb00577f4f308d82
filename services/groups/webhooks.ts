import type { MikroORM } from '@mikro-orm/postgresql';
import type { Client } from '@temporalio/client';
import type { Logger } from '../../logger.js';
import {
  providerRegistry,
  type ChatGroupEvent,
  type ProviderKey,
  type ProviderSettings,
  type WebhookRequest,
} from '../../providers/index.js';
import { applyGroupLifecycle, applyGroupSettingsNotice, applyGroupStatusNotice } from './lifecycle.js';
import { applyGroupParticipantsEvent } from './participants.js';
import { receiveGroupInbound } from './group-inbound.js';

// The one door of the provider webhook ingress into this family: subscribed to the messaging
// family's ingress where the API wires it (api/http/ingress.ts, InboundWebhookHook), so messaging
// names nothing of ours. After the statuses and one-to-one messages of a verified webhook were applied, its group changes
// (created, deleted, settings, suspension, participants, join requests) and the messages
// participants wrote into groups come here, read by the registry's chat-group adapter.

export interface GroupWebhookDeps {
  orm: MikroORM;
  temporal: Client;
  config: ProviderSettings;
  log?: Logger;
}

/** Applies every group event of a verified webhook of the chat-group provider, in the order it listed them. */
export async function receiveGroupWebhook(deps: GroupWebhookDeps, provider: ProviderKey, req: WebhookRequest): Promise<void> {
  const groups = providerRegistry(deps.config).chatGroups();
  if (provider !== groups.key) return;
  for (const e of groups.parseWebhook(req)) await receiveGroupWebhookEvent(deps, e);
}

/** Applies one group event; resolves once its effects are stored (or the creation workflow was told). */
export async function receiveGroupWebhookEvent(deps: Omit<GroupWebhookDeps, 'config'>, e: ChatGroupEvent): Promise<void> {
  const phoneNumberId = e.phoneNumberId ?? null;
  switch (e.type) {
    case 'group_created':
      return applyGroupLifecycle(deps, {
        action: 'group_create',
        phoneNumberId,
        requestId: e.requestId,
        groupId: e.groupId,
        inviteLink: e.inviteLink,
      });
    case 'group_create_failed':
      return applyGroupLifecycle(deps, { action: 'group_create', phoneNumberId, requestId: e.requestId, errors: e.errors });
    case 'group_deleted':
      // A deletion the provider reports as failed leaves the group as it is.
      if (e.errors.length) {
        deps.log?.warn({ providerGroupId: e.groupId, errors: e.errors }, 'group_delete reported errors; nothing changed');
        return;
      }
      return applyGroupLifecycle(deps, { action: 'group_delete', phoneNumberId, groupId: e.groupId });
    case 'settings_updated':
      return applyGroupSettingsNotice(deps, {
        groupId: e.groupId,
        subject: e.subject ? { text: e.subject.text, ok: e.subject.ok } : null,
        description: e.description ? { text: e.description.text, ok: e.description.ok } : null,
      });
    case 'group_suspended':
    case 'group_suspend_cleared':
      return applyGroupStatusNotice(deps, {
        groupId: e.groupId,
        action: e.type === 'group_suspended' ? 'group_suspend' : 'group_suspend_cleared',
      });
    case 'participants_added':
      return applyGroupParticipantsEvent(deps, {
        action: 'group_participants_add',
        phoneNumberId,
        groupId: e.groupId,
        participants: e.participants.map((p) => p.waId),
      });
    case 'participants_removed':
      return applyGroupParticipantsEvent(deps, {
        action: 'group_participants_remove',
        phoneNumberId,
        groupId: e.groupId,
        participants: e.participants.map((p) => p.waId),
        initiatedBy: e.initiatedBy === 'business' || e.initiatedBy === 'participant' ? e.initiatedBy : null,
      });
    case 'join_request_created':
    case 'join_request_revoked':
      return applyGroupParticipantsEvent(deps, {
        action: e.type === 'join_request_created' ? 'group_join_request_created' : 'group_join_request_revoked',
        phoneNumberId,
        groupId: e.groupId,
        joinRequestId: e.joinRequestId,
        waId: e.waId,
      });
    case 'group_message':
      await receiveGroupInbound(deps, { ...e.message, groupId: e.groupId });
      return;
  }
}
