// The WhatsApp Cloud API's Groups API (notes §2.2): creating a group on a business number (the
// answer is only a request id; the group id and invite link come later in the `group_create`
// webhook, read by ./webhook.ts), reading and changing it, its invite link, join requests,
// participants, and sends and pins to a group through the ordinary messages endpoint.
// Failures are ProviderResults like every other Graph call: permanent refusals keep Meta's code
// (131215 not eligible, 131041 unknown group, …), throttles and outages are retryable.
import { isRecord, type HttpReply, type ProviderFailure, type ProviderResult } from '../http.js';
import { graphFailure, graphRequest, type WhatsAppCloudOptions } from './client.js';
import type {
  GroupCreateInput,
  GroupItemFailure,
  GroupItemResults,
  GroupMediaKind,
  GroupMessageContent,
  GroupPinInput,
  JoinApprovalMode,
} from '../types.js';

export type { GroupCreateInput, GroupItemFailure, GroupItemResults, GroupMessageContent, GroupPinInput, JoinApprovalMode };

export interface GroupSummary {
  groupId: string;
  subject: string;
  createdAt: Date | null;
}

export interface GroupInfo {
  groupId: string;
  subject: string | null;
  description: string | null;
  /** wa_ids of the users in the group (the business is not listed). */
  participants: string[];
  joinApprovalMode: JoinApprovalMode | null;
  suspended: boolean | null;
  createdAt: Date | null;
  totalParticipantCount: number | null;
}

export interface GroupJoinRequest {
  joinRequestId: string;
  waId: string;
  createdAt: Date | null;
}

export interface Page<T> {
  items: T[];
  /** Cursor of the next page, null when the answer named none. */
  after: string | null;
}

/** Codes a per-item call answers with when every item failed for the same reason. */
const PER_ITEM_CODES = new Set([131204, 131212, 131213, 131202]);
const NO_CAPTION = new Set<GroupMediaKind>(['audio', 'sticker']);

const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);
const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const seconds = (v: unknown): Date | null => {
  const n = typeof v === 'number' ? v : typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : NaN;
  return Number.isFinite(n) ? new Date(n * 1000) : null;
};
const mode = (v: unknown): JoinApprovalMode | null => (v === 'auto_approve' || v === 'approval_required' ? v : null);

function invalidResponse(reply: HttpReply): ProviderFailure {
  return { ok: false, permanent: false, code: 'invalid_response', message: reply.text.slice(0, 200), httpStatus: reply.status };
}

/** The body of a group send (`recipient_type: 'group'`, `to` the group id). */
export function groupMessagePayload(groupId: string, content: GroupMessageContent): Record<string, unknown> {
  const payload: Record<string, unknown> = { messaging_product: 'whatsapp', recipient_type: 'group', to: groupId, type: content.kind };
  switch (content.kind) {
    case 'text':
      payload.text = { body: content.body, preview_url: content.previewUrl ?? false };
      break;
    case 'template':
      payload.template = {
        name: content.name,
        language: { code: content.language },
        ...(content.components && content.components.length > 0 ? { components: content.components } : {}),
      };
      break;
    default: {
      const media: Record<string, unknown> = { link: content.link };
      if (content.caption && !NO_CAPTION.has(content.kind)) media.caption = content.caption;
      if (content.kind === 'document' && content.filename) media.filename = content.filename;
      payload[content.kind] = media;
    }
  }
  return payload;
}

/** The body of a pin or unpin (`type: 'pin'`); Meta requires expiration_days to pin. */
export function groupPinPayload(groupId: string, p: GroupPinInput): Record<string, unknown> {
  const pin: Record<string, unknown> = { type: p.pin ? 'pin' : 'unpin', message_id: p.messageId };
  if (p.pin && p.expirationDays !== undefined) pin.expiration_days = p.expirationDays;
  return { messaging_product: 'whatsapp', recipient_type: 'group', to: groupId, type: 'pin', pin };
}

/**
 * The template component that names the group in Meta's ready-made group-invite templates (notes
 * §2.1): a body parameter of type group_id. The invite itself is a 1:1 template send.
 */
export function groupInviteComponents(groupId: string): unknown[] {
  return [{ type: 'body', parameters: [{ type: 'group_id', group_id: groupId }] }];
}

export class WhatsAppGroupsClient {
  constructor(private readonly o: WhatsAppCloudOptions) {}

  private call(method: 'GET' | 'POST' | 'DELETE', path: string, body?: object, headers: Record<string, string> = {}) {
    return graphRequest(this.o, method, path, body, headers);
  }

  /** Asks for a group; its id and invite link arrive in the `group_create` webhook carrying this request id. */
  async createGroup(phoneNumberId: string, input: GroupCreateInput): Promise<ProviderResult<{ requestId: string }>> {
    const body: Record<string, unknown> = { messaging_product: 'whatsapp', subject: input.subject };
    if (input.description !== undefined) body.description = input.description;
    if (input.joinApprovalMode !== undefined) body.join_approval_mode = input.joinApprovalMode;
    const res = await this.call('POST', `/${encodeURIComponent(phoneNumberId)}/groups`, body);
    if (!res.ok) return res.failure;
    const { reply } = res;
    if (reply.status < 200 || reply.status >= 300) return graphFailure(reply);
    const j = isRecord(reply.json) ? reply.json : {};
    // Meta's sync body is not documented beyond the webhook's request_id; one client reads `id`.
    const requestId = str(j.request_id) ?? str(j.id);
    return requestId ? { ok: true, value: { requestId } } : invalidResponse(reply);
  }

  async listGroups(phoneNumberId: string, opts: { limit?: number; after?: string } = {}): Promise<ProviderResult<Page<GroupSummary>>> {
    const q = new URLSearchParams();
    if (opts.limit !== undefined) q.set('limit', String(opts.limit));
    if (opts.after) q.set('after', opts.after);
    const res = await this.call('GET', `/${encodeURIComponent(phoneNumberId)}/groups${q.size > 0 ? `?${q}` : ''}`);
    if (!res.ok) return res.failure;
    const { reply } = res;
    if (reply.status < 200 || reply.status >= 300) return graphFailure(reply);
    const j = isRecord(reply.json) ? reply.json : {};
    const data = isRecord(j.data) ? j.data : {};
    const items: GroupSummary[] = [];
    for (const g of list(data.groups)) {
      if (!isRecord(g) || typeof g.id !== 'string') continue;
      items.push({ groupId: g.id, subject: str(g.subject) ?? '', createdAt: seconds(g.created_at) });
    }
    return { ok: true, value: { items, after: afterCursor(j) } };
  }

  async getGroup(groupId: string): Promise<ProviderResult<GroupInfo>> {
    const fields = 'subject,description,participants,join_approval_mode,suspended,creation_timestamp,total_participant_count';
    const res = await this.call('GET', `/${encodeURIComponent(groupId)}?fields=${fields}`);
    if (!res.ok) return res.failure;
    const { reply } = res;
    if (reply.status < 200 || reply.status >= 300) return graphFailure(reply);
    if (!isRecord(reply.json)) return invalidResponse(reply);
    const j = reply.json;
    const participants = list(j.participants)
      .map((p) => (isRecord(p) ? str(p.wa_id) : str(p)))
      .filter((p): p is string => p !== null);
    return {
      ok: true,
      value: {
        groupId: str(j.id) ?? groupId,
        subject: str(j.subject),
        description: str(j.description),
        participants,
        joinApprovalMode: mode(j.join_approval_mode),
        suspended: typeof j.suspended === 'boolean' ? j.suspended : null,
        createdAt: seconds(j.creation_timestamp),
        totalParticipantCount: typeof j.total_participant_count === 'number' ? j.total_participant_count : null,
      },
    };
  }

  /** The change is confirmed later by a `group_settings_update` webhook. */
  async updateGroup(groupId: string, change: { subject?: string; description?: string }): Promise<ProviderResult<{ accepted: true }>> {
    const body: Record<string, unknown> = { messaging_product: 'whatsapp' };
    if (change.subject !== undefined) body.subject = change.subject;
    if (change.description !== undefined) body.description = change.description;
    return this.accepted(await this.call('POST', `/${encodeURIComponent(groupId)}`, body));
  }

  /** Deletes the group and removes everyone, the business included. */
  async deleteGroup(groupId: string): Promise<ProviderResult<{ accepted: true }>> {
    return this.accepted(await this.call('DELETE', `/${encodeURIComponent(groupId)}`));
  }

  async getInviteLink(groupId: string): Promise<ProviderResult<{ inviteLink: string }>> {
    return this.inviteLink(await this.call('GET', `/${encodeURIComponent(groupId)}/invite_link`));
  }

  /** A new link; the old one stops working. */
  async resetInviteLink(groupId: string): Promise<ProviderResult<{ inviteLink: string }>> {
    return this.inviteLink(await this.call('POST', `/${encodeURIComponent(groupId)}/invite_link`, { messaging_product: 'whatsapp' }));
  }

  async listJoinRequests(groupId: string, opts: { limit?: number; after?: string } = {}): Promise<ProviderResult<Page<GroupJoinRequest>>> {
    const q = new URLSearchParams();
    if (opts.limit !== undefined) q.set('limit', String(opts.limit));
    if (opts.after) q.set('after', opts.after);
    const res = await this.call('GET', `/${encodeURIComponent(groupId)}/join_requests${q.size > 0 ? `?${q}` : ''}`);
    if (!res.ok) return res.failure;
    const { reply } = res;
    if (reply.status < 200 || reply.status >= 300) return graphFailure(reply);
    const j = isRecord(reply.json) ? reply.json : {};
    const items: GroupJoinRequest[] = [];
    for (const r of list(j.data)) {
      if (!isRecord(r) || typeof r.join_request_id !== 'string' || typeof r.wa_id !== 'string') continue;
      items.push({ joinRequestId: r.join_request_id, waId: r.wa_id, createdAt: seconds(r.creation_timestamp) });
    }
    return { ok: true, value: { items, after: afterCursor(j) } };
  }

  async approveJoinRequests(groupId: string, joinRequestIds: string[]): Promise<ProviderResult<GroupItemResults>> {
    const res = await this.call('POST', `/${encodeURIComponent(groupId)}/join_requests`, {
      messaging_product: 'whatsapp',
      join_requests: joinRequestIds,
    });
    return perItem(res, joinRequestIds, 'approved_join_requests', 'failed_join_requests', 'join_request_id');
  }

  async rejectJoinRequests(groupId: string, joinRequestIds: string[]): Promise<ProviderResult<GroupItemResults>> {
    const res = await this.call('DELETE', `/${encodeURIComponent(groupId)}/join_requests`, {
      messaging_product: 'whatsapp',
      join_requests: joinRequestIds,
    });
    return perItem(res, joinRequestIds, 'rejected_join_requests', 'failed_join_requests', 'join_request_id');
  }

  /** 1 to 8 users (phone numbers or wa_ids); a removed user cannot rejoin through the invite link. */
  async removeParticipants(groupId: string, users: string[]): Promise<ProviderResult<GroupItemResults>> {
    const res = await this.call('DELETE', `/${encodeURIComponent(groupId)}/participants`, {
      messaging_product: 'whatsapp',
      participants: users.map((user) => ({ user })),
    });
    return perItem(res, users, 'removed_participants', 'failed_participants', 'input');
  }

  async sendMessage(
    phoneNumberId: string,
    groupId: string,
    content: GroupMessageContent,
    idempotencyKey: string,
  ): Promise<ProviderResult<{ providerMessageId: string }>> {
    return this.message(phoneNumberId, groupMessagePayload(groupId, content), idempotencyKey);
  }

  async pin(
    phoneNumberId: string,
    groupId: string,
    p: GroupPinInput,
    idempotencyKey: string,
  ): Promise<ProviderResult<{ providerMessageId: string }>> {
    return this.message(phoneNumberId, groupPinPayload(groupId, p), idempotencyKey);
  }

  private async message(
    phoneNumberId: string,
    payload: object,
    idempotencyKey: string,
  ): Promise<ProviderResult<{ providerMessageId: string }>> {
    // Graph ignores the key; it lets the simulator and our logs spot a retried activity's second send.
    const res = await this.call('POST', `/${encodeURIComponent(phoneNumberId)}/messages`, payload, { 'x-idempotency-key': idempotencyKey });
    if (!res.ok) return res.failure;
    const { reply } = res;
    if (reply.status < 200 || reply.status >= 300) return graphFailure(reply);
    const first: unknown = isRecord(reply.json) ? list(reply.json.messages)[0] : undefined;
    return isRecord(first) && typeof first.id === 'string' ? { ok: true, value: { providerMessageId: first.id } } : invalidResponse(reply);
  }

  private accepted(res: Awaited<ReturnType<WhatsAppGroupsClient['call']>>): ProviderResult<{ accepted: true }> {
    if (!res.ok) return res.failure;
    const { reply } = res;
    if (reply.status < 200 || reply.status >= 300) return graphFailure(reply);
    return { ok: true, value: { accepted: true } };
  }

  private inviteLink(res: Awaited<ReturnType<WhatsAppGroupsClient['call']>>): ProviderResult<{ inviteLink: string }> {
    if (!res.ok) return res.failure;
    const { reply } = res;
    if (reply.status < 200 || reply.status >= 300) return graphFailure(reply);
    const link = isRecord(reply.json) ? str(reply.json.invite_link) : null;
    return link ? { ok: true, value: { inviteLink: link } } : invalidResponse(reply);
  }
}

function afterCursor(j: Record<string, unknown>): string | null {
  const paging = isRecord(j.paging) ? j.paging : {};
  const cursors = isRecord(paging.cursors) ? paging.cursors : {};
  // Graph gives `next` only when another page exists.
  return typeof paging.next === 'string' ? str(cursors.after) : null;
}

function firstError(errors: unknown): { code: string; message: string } {
  const e: unknown = list(errors)[0];
  if (!isRecord(e)) return { code: 'unknown', message: 'failed' };
  const details = isRecord(e.error_data) ? str(e.error_data.details) : null;
  return { code: typeof e.code === 'number' ? String(e.code) : 'unknown', message: details ?? str(e.message) ?? str(e.title) ?? 'failed' };
}

/**
 * Per-item answers: 200 (all done), 206 with 131201 (some done) and, when every item failed for one
 * reason, an error naming it (131213 unknown join request, 131212 not a participant, 131204 full)
 * with or without the per-item list. Anything else is a failure of the whole call.
 */
function perItem(
  res: Awaited<ReturnType<WhatsAppGroupsClient['call']>>,
  sent: string[],
  okKey: string,
  failedKey: string,
  itemKey: string,
): ProviderResult<GroupItemResults> {
  if (!res.ok) return res.failure;
  const { reply } = res;
  const j = isRecord(reply.json) ? reply.json : {};
  const hasLists = Array.isArray(j[okKey]) || Array.isArray(j[failedKey]);
  const graphCode = isRecord(j.error) && typeof j.error.code === 'number' ? j.error.code : null;
  const success = reply.status >= 200 && reply.status < 300;
  if (!success && !(graphCode !== null && PER_ITEM_CODES.has(graphCode))) return graphFailure(reply);
  if (!success && !hasLists) {
    const f = graphFailure(reply);
    return { ok: true, value: { succeeded: [], failed: sent.map((item) => ({ item, code: f.code, message: f.message })) } };
  }
  const succeeded: string[] = [];
  for (const x of list(j[okKey])) {
    const id = isRecord(x) ? (str(x.input) ?? str(x.wa_id) ?? str(x[itemKey])) : str(x);
    if (id !== null) succeeded.push(id);
  }
  const failed: GroupItemFailure[] = [];
  for (const x of list(j[failedKey])) {
    if (!isRecord(x)) continue;
    const item = str(x[itemKey]) ?? str(x.user) ?? str(x.input) ?? str(x.wa_id);
    if (item !== null) failed.push({ item, ...firstError(x.errors) });
  }
  return { ok: true, value: { succeeded, failed } };
}
