// The WhatsApp Cloud API's Groups API (notes §2), under the same /whatsapp/{version} prefix and
// bearer token as the message routes:
//
//   POST   /{phone_number_id}/groups {messaging_product, subject, description?, join_approval_mode?}
//            → {messaging_product, request_id}; a moment later the signed `group_lifecycle_update`
//              webhook `group_create` {request_id, group_id, subject, description, invite_link,
//              join_approval_mode} (or, under a fault, the same type carrying `errors[]`, or nothing)
//   GET    /{phone_number_id}/groups?limit=&after=          → {data: {groups: [{id, subject, created_at}]}, paging}
//   GET    /{group_id}?fields=…                             → {messaging_product, id, …requested fields}
//   POST   /{group_id} {messaging_product, subject?, description?} → {success: true} + group_settings_update
//   DELETE /{group_id}                                      → {success: true} + group_lifecycle_update group_delete
//   GET    /{group_id}/invite_link                          → {messaging_product, invite_link}
//   POST   /{group_id}/invite_link                          → a new invite_link; the old one stops working
//   GET    /{group_id}/join_requests?limit=&after=          → {data: [{join_request_id, wa_id, creation_timestamp}], paging}
//   POST   /{group_id}/join_requests {join_requests: [ids]} → {approved_join_requests, failed_join_requests}
//   DELETE /{group_id}/join_requests {join_requests: [ids]} → {rejected_join_requests, failed_join_requests}
//   DELETE /{group_id}/participants {participants: [{user}]} → {removed_participants, failed_participants}
//   POST   /{phone_number_id}/messages {recipient_type: 'group', to: group_id, type, …} (text, media,
//          template; `type: 'pin'` pins or unpins) → {messaging_product, messages: [{id}]}
//
// Choices where Meta's pages are thin (also in docs/decisions.md, "Chat groups: the provider simulator …"):
// - A group id is opaque base64url of `capi_group:<phone_number_id>:<digits>`, never all digits, so
//   `/{group_id}` routes tell a group from a (numeric) catalogue and leave the latter to meta-catalogue.ts.
// - Per-item calls (join requests, participants): all succeed → 200; some fail → 206 with
//   `errors: [131201]` beside the per-item lists; all fail → the Graph error of the first failure
//   (131213, 131212, 131204) with the per-item list next to `error`.
// - `participants` and `total_participant_count` count the users only; the business is the eighth
//   place (at most 7 users). A removed user cannot rejoin by link, as on WhatsApp.
// - Unknown (or deleted, or another number's) group: 131041. Interactive, reaction, location and
//   contacts sends to a group: 131051. Pins: only messages of that group (sent or received); pinning a
//   fourth unpins the oldest; pins send no status webhooks.
// - Group message statuses: `sent` once for the group, then `delivered` and `read` aggregated, one
//   webhook holding one status per participant (`recipient_type: 'group'`, `recipient_participant_id`).
// - Inbound group messages carry `group_id` on the message itself (notes §1.7), `from` the participant.
// - A number is not eligible (131215) when marked through /_sim/whatsapp/groups/eligibility or when its
//   phone-number id ends in 131215.
import { Router } from '@koa/router';
import { randomBytes, randomInt } from 'node:crypto';
import type { Context as KoaContext } from 'koa';
import { BodyError, readJson } from './body.js';
import type { Fault } from './faults.js';
import { graphEnvelope, graphHttpStatus, isObj } from './graph-errors.js';
import type { Generation } from './lifecycle.js';
import { metaJson } from './signing.js';
import type { CallbackRecord, SimState } from './state.js';
import { digitsOf, headersOfInterest, isHttpUrl, unixSeconds, wamid } from './util.js';
import { validateMessage } from './whatsapp-validate.js';
import { managedTemplate } from './whatsapp-templates.js';
import { deliver } from './webhooks.js';

type Context = KoaContext & { params: Record<string, string> };

export const GROUP_MAX_PARTICIPANTS = 8;
/** Users a group can hold: the business takes one of the 8 places. */
export const GROUP_MAX_USERS = GROUP_MAX_PARTICIPANTS - 1;
export const GROUP_SUBJECT_MAX = 128;
export const GROUP_DESCRIPTION_MAX = 2048;
export const GROUP_MAX_PINS = 3;
export const JOIN_APPROVAL_MODES = ['auto_approve', 'approval_required'] as const;
export type JoinApprovalMode = (typeof JOIN_APPROVAL_MODES)[number];
const INFO_FIELDS = [
  'subject',
  'description',
  'participants',
  'join_approval_mode',
  'suspended',
  'creation_timestamp',
  'total_participant_count',
];
const SENDABLE = new Set(['text', 'image', 'video', 'audio', 'document', 'sticker', 'template']);
const INELIGIBLE_SUFFIX = '131215';
const PAGE_DEFAULT = 25;
const PAGE_MAX = 1024;

/** Meta's wording for the group codes (notes §2.5). */
const GROUP_TITLES: Record<number, string> = {
  131020: 'Bad group',
  131041: 'Group unknown',
  131059: 'Invalid cursor',
  131201: 'Partial success',
  131202: 'Duplicate participant',
  131204: 'Participant over limit',
  131207: 'Group suspended',
  131208: 'Group rate limit hit',
  131211: 'Group creation limit reached',
  131212: 'Participant not in group',
  131213: 'Join request does not exist',
  131214: 'Group creation temporarily disabled',
  131215: 'Number not eligible for Groups API',
  131051: 'Unsupported message type',
};

function groupHttpStatus(code: number): number {
  if (code === 131201) return 206;
  if (code === 131207) return 403;
  if (code === 131208) return 429;
  return graphHttpStatus(code);
}

export interface GroupParticipant {
  waId: string;
  joinedAt: number;
}

export interface GroupJoinRequest {
  seq: number;
  id: string;
  waId: string;
  createdAt: number;
}

export interface GroupPin {
  messageId: string;
  pinnedAt: number;
  expiresAt: number;
}

export interface GroupMessageRecord {
  seq: number;
  id: string;
  direction: 'outbound' | 'inbound';
  /** The participant who wrote (inbound) or null (ours). */
  from: string | null;
  type: string;
  payload: Record<string, unknown>;
  status: string;
  headers: Record<string, string> | null;
  at: string;
}

export interface SimGroup {
  seq: number;
  id: string;
  phoneNumberId: string;
  requestId: string;
  subject: string;
  description: string;
  joinApprovalMode: JoinApprovalMode;
  inviteLink: string;
  revokedLinks: string[];
  participants: Map<string, GroupParticipant>;
  /** Users the business removed: the invite link no longer admits them. */
  removed: Set<string>;
  joinRequests: Map<string, GroupJoinRequest>;
  pins: GroupPin[];
  messages: GroupMessageRecord[];
  suspended: boolean;
  deleted: boolean;
  createdAt: number;
}

export interface GroupCreation {
  requestId: string;
  phoneNumberId: string;
  subject: string;
  description: string;
  joinApprovalMode: JoinApprovalMode;
  /** pending until the webhook goes out; hanging never changes. */
  outcome: 'pending' | 'created' | 'failed' | 'hanging';
  groupId: string | null;
  errorCode: number | null;
  at: string;
}

export interface GroupsState {
  groups: Map<string, SimGroup>;
  /** Current invite links only. */
  byLink: Map<string, string>;
  creations: Map<string, GroupCreation>;
  /** Pending creations by request id, each with the call that ends its createDelayMs wait at once. */
  completeNow: Map<string, () => void>;
  /** Phone-number ids marked not eligible (131215). */
  ineligible: Set<string>;
  /** Pause before the group_create webhook. */
  createDelayMs: number;
  /** Pause before the webhooks that follow other calls (settings, delete, participants). */
  webhookDelayMs: number;
  seq: number;
}

export function createGroupsState(): GroupsState {
  return {
    groups: new Map(),
    byLink: new Map(),
    creations: new Map(),
    completeNow: new Map(),
    ineligible: new Set(),
    createDelayMs: 200,
    webhookDelayMs: 20,
    seq: 0,
  };
}

/** Forgets groups, creations and eligibility marks; the delays survive, like /_sim/config. */
export function resetGroupsState(s: GroupsState): void {
  s.groups.clear();
  s.byLink.clear();
  s.creations.clear();
  s.completeNow.clear();
  s.ineligible.clear();
}

// --- Identifiers -------------------------------------------------------------------------------------

const digits = (n: number): string => Array.from({ length: n }, (_, i) => String(randomInt(i === 0 ? 1 : 0, 10))).join('');
const groupIdFor = (phoneNumberId: string): string => Buffer.from(`capi_group:${phoneNumberId}:${digits(18)}`).toString('base64url');
const inviteLink = (): string => `https://chat.whatsapp.com/${randomBytes(16).toString('base64url').slice(0, 22)}`;
const requestId = (): string => randomBytes(16).toString('hex');
/** Group ids are base64url and never purely numeric (those are catalogues and phone-number ids). */
const looksLikeGroupId = (id: string): boolean => /^[A-Za-z0-9_-]{8,200}$/.test(id) && !/^\d+$/.test(id);

const cursorOf = (seq: number): string => Buffer.from(`seq:${seq}`).toString('base64url');
function seqOf(cursor: string): number | null {
  const m = /^seq:(\d+)$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  return m ? Number(m[1]) : null;
}

export function isIneligible(s: GroupsState, phoneNumberId: string): boolean {
  return s.ineligible.has(phoneNumberId) || phoneNumberId.endsWith(INELIGIBLE_SUFFIX);
}

class GroupProblem extends Error {
  constructor(
    readonly code: number,
    readonly details: string,
    readonly extra: Record<string, unknown> = {},
  ) {
    super(details);
  }
}

// --- Webhooks ----------------------------------------------------------------------------------------

type GroupField = 'group_lifecycle_update' | 'group_participants_update' | 'group_settings_update' | 'group_status_update' | 'messages';

function groupEnvelope(state: SimState, phoneNumberId: string, field: GroupField, value: Record<string, unknown>): Record<string, unknown> {
  return {
    object: 'whatsapp_business_account',
    entry: [
      {
        id: state.options.waBusinessAccountId,
        changes: [
          {
            field,
            value: {
              messaging_product: 'whatsapp',
              metadata: { display_phone_number: state.options.waDisplayPhoneNumber, phone_number_id: phoneNumberId },
              ...value,
            },
          },
        ],
      },
    ],
  };
}

interface Sent {
  url: string | null;
  delivered: boolean;
  statusCode: number | null;
  attempts: number;
}

/** Posts one signed group webhook (`groups: [item]`, or the raw value for `messages`) and waits for its outcome. */
async function postWebhook(
  state: SimState,
  phoneNumberId: string,
  field: GroupField,
  value: Record<string, unknown>,
  messageId: string | null,
  opts: { url?: string | null; kind?: CallbackRecord['kind']; gen?: Generation } = {},
): Promise<Sent> {
  const url = opts.url ?? state.config.waWebhookUrl;
  if (!url || !isHttpUrl(url)) return { url: null, delivered: false, statusCode: null, attempts: 0 };
  const request = metaJson(state.options.waAppSecret, groupEnvelope(state, phoneNumberId, field, value));
  const record = await deliver(state, { provider: 'whatsapp', kind: opts.kind ?? 'whatsapp.group', messageId, url, request }, opts.gen);
  return { url, delivered: record.delivered, statusCode: record.statusCode, attempts: record.attempts.length };
}

function groupItem(type: string, group: SimGroup | null, extra: Record<string, unknown>): Record<string, unknown> {
  return { timestamp: unixSeconds(), ...(group ? { group_id: group.id } : {}), type, ...extra };
}

/** A webhook that follows a Graph call: sent a moment after the answer, in the background. */
function later(state: SimState, group: SimGroup, field: GroupField, item: Record<string, unknown>): void {
  state.life.spawn(`wa-group:${group.id}:${String(item.type)}`, async (gen) => {
    if (!(await gen.sleep(state.groups.webhookDelayMs))) return;
    await postWebhook(state, group.phoneNumberId, field, { groups: [item] }, group.id, { gen });
  });
}

function errorItem(code: number, details: string): Record<string, unknown> {
  const title = GROUP_TITLES[code] ?? 'Something went wrong';
  return { code, title, message: title, error_data: { details } };
}

// --- Group state changes (shared by the Graph routes and the test controls) --------------------------

function addParticipants(group: SimGroup, waIds: string[]): void {
  const now = Date.now();
  for (const waId of waIds) group.participants.set(waId, { waId, joinedAt: now });
}

function setInviteLink(s: GroupsState, group: SimGroup): void {
  if (group.inviteLink) {
    s.byLink.delete(group.inviteLink);
    group.revokedLinks.push(group.inviteLink);
  }
  group.inviteLink = inviteLink();
  s.byLink.set(group.inviteLink, group.id);
}

function livePins(group: SimGroup, now = Date.now()): GroupPin[] {
  group.pins = group.pins.filter((p) => p.expiresAt > now);
  return group.pins;
}

export function groupView(group: SimGroup): Record<string, unknown> {
  return {
    id: group.id,
    phoneNumberId: group.phoneNumberId,
    requestId: group.requestId,
    subject: group.subject,
    description: group.description,
    joinApprovalMode: group.joinApprovalMode,
    inviteLink: group.inviteLink,
    revokedLinks: group.revokedLinks,
    participants: [...group.participants.values()].map((p) => ({ waId: p.waId, joinedAt: new Date(p.joinedAt).toISOString() })),
    removed: [...group.removed],
    joinRequests: [...group.joinRequests.values()].map((r) => ({ id: r.id, waId: r.waId, createdAt: new Date(r.createdAt).toISOString() })),
    pins: livePins(group).map((p) => ({
      messageId: p.messageId,
      pinnedAt: new Date(p.pinnedAt).toISOString(),
      expiresAt: new Date(p.expiresAt).toISOString(),
    })),
    messages: group.messages,
    suspended: group.suspended,
    deleted: group.deleted,
    createdAt: new Date(group.createdAt).toISOString(),
  };
}

// --- Graph routes ------------------------------------------------------------------------------------

export function whatsappGroupsRouter(state: SimState): Router {
  const s = state.groups;
  const r = new Router({ prefix: '/whatsapp/:version' });

  const fail = (
    ctx: Context,
    code: number,
    details: string,
    opts: { fault?: Fault | null; to?: string | null; extra?: Record<string, unknown> } = {},
  ) => {
    const title = GROUP_TITLES[code];
    ctx.status = groupHttpStatus(code);
    ctx.body = { ...graphEnvelope(code, details, title), ...opts.extra };
    if (code === 190) ctx.set('WWW-Authenticate', 'OAuth "Facebook Platform" "invalid_token" "Invalid OAuth access token"');
    state.rejections.push({
      seq: state.nextSeq(),
      provider: 'whatsapp',
      at: new Date().toISOString(),
      to: opts.to ?? null,
      httpStatus: ctx.status,
      code,
      message: details,
      fault: opts.fault?.kind ?? null,
    });
  };
  const authorised = (ctx: Context): boolean => ctx.get('authorization') === `Bearer ${state.options.waAccessToken}`;
  const versionOk = (ctx: Context): boolean => /^v\d+\.\d+$/.test(ctx.params.version ?? '');
  /** Auth and version, as on the messages route; false = already answered. */
  const admitted = (ctx: Context): boolean => {
    if (!authorised(ctx)) {
      fail(ctx, 190, 'Invalid OAuth access token');
      return false;
    }
    if (!versionOk(ctx)) {
      fail(ctx, 100, `Unknown path components: /${ctx.params.version}`);
      return false;
    }
    return true;
  };
  const body = async (ctx: Context): Promise<Record<string, unknown> | null> => {
    try {
      const b = await readJson(ctx);
      if (isObj(b)) return b;
      fail(ctx, 100, 'The request body must be a JSON object.');
    } catch (err) {
      if (!(err instanceof BodyError)) throw err;
      fail(ctx, 100, err.message);
    }
    return null;
  };
  const product = (ctx: Context, b: Record<string, unknown>): boolean => {
    if (b.messaging_product === undefined) fail(ctx, 131008, "Parameter 'messaging_product' is required.");
    else if (b.messaging_product !== 'whatsapp') fail(ctx, 100, "Param messaging_product must be 'whatsapp'.");
    else return true;
    return false;
  };
  /** A sync Graph error armed with the `group_error` fault for this number; true = answered. */
  const syncFault = (ctx: Context, phoneNumberId: string): boolean => {
    const f = state.faults.take('whatsapp', phoneNumberId, ['group_error']);
    if (!f) return false;
    if (f.retryAfter !== null) ctx.set('Retry-After', String(f.retryAfter));
    fail(ctx, f.code ?? 131000, f.message ?? 'Something went wrong', { fault: f, to: phoneNumberId });
    return true;
  };
  const eligible = (ctx: Context, phoneNumberId: string): boolean => {
    if (!isIneligible(s, phoneNumberId)) return true;
    fail(ctx, 131215, `Phone number ${phoneNumberId} is not eligible to use the Groups API.`, { to: phoneNumberId });
    return false;
  };
  /**
   * The group a `/{group_id}…` route names. A numeric id is not a group: `next` hands it on (the
   * catalogue routes answer for it). Null = answered (unknown group, ineligible number, fault).
   */
  const groupOf = async (ctx: Context, next: () => Promise<unknown>): Promise<SimGroup | null> => {
    const id = ctx.params.groupId ?? '';
    if (!looksLikeGroupId(id)) {
      await next();
      return null;
    }
    if (!admitted(ctx)) return null;
    const g = s.groups.get(id);
    if (!g || g.deleted) {
      fail(ctx, 131041, `Group ${id} does not exist or was deleted.`, { to: id });
      return null;
    }
    if (!eligible(ctx, g.phoneNumberId) || syncFault(ctx, g.phoneNumberId)) return null;
    return g;
  };

  /** The group a write names and its Cloud API body; null once a refusal has been answered. */
  const groupWithBody = async (ctx: Context, next: () => Promise<unknown>) => {
    const g = await groupOf(ctx, next);
    if (!g) return null;
    const b = await body(ctx);
    if (!b || !product(ctx, b)) return null;
    return { g, b };
  };
  const limitAndAfter = (ctx: Context): { limit: number; after: number } | null => {
    let limit = PAGE_DEFAULT;
    const q = ctx.query;
    if (typeof q.limit === 'string') {
      if (!/^\d+$/.test(q.limit) || Number(q.limit) < 1 || Number(q.limit) > PAGE_MAX) {
        fail(ctx, 100, `Param limit must be an integer between 1 and ${PAGE_MAX}.`);
        return null;
      }
      limit = Number(q.limit);
    }
    let after = 0;
    if (typeof q.after === 'string' && q.after !== '') {
      const seq = seqOf(q.after);
      if (seq === null) {
        fail(ctx, 131059, `Invalid cursor: ${q.after}`);
        return null;
      }
      after = seq;
    }
    return { limit, after };
  };
  function page<T extends { seq: number }>(
    ctx: Context,
    items: T[],
    p: { limit: number; after: number },
  ): { shown: T[]; paging: Record<string, unknown> } {
    const rest = items.filter((x) => x.seq > p.after).sort((a, b) => a.seq - b.seq);
    const shown = rest.slice(0, p.limit);
    if (shown.length === 0) return { shown, paging: {} };
    const last = cursorOf(shown[shown.length - 1].seq);
    const paging: Record<string, unknown> = { cursors: { before: cursorOf(shown[0].seq), after: last } };
    if (rest.length > shown.length) {
      const next = new URL(`${ctx.protocol}://${ctx.host}${ctx.path}`);
      next.searchParams.set('limit', String(p.limit));
      next.searchParams.set('after', last);
      paging.next = next.toString();
    }
    return { shown, paging };
  }

  r.post('/:phoneNumberId/groups', async (ctx) => {
    if (!admitted(ctx)) return;
    const phoneNumberId = ctx.params.phoneNumberId ?? '';
    if (!/^\d+$/.test(phoneNumberId)) {
      return fail(ctx, 100, `Unsupported post request. Object with ID '${phoneNumberId}' does not exist.`);
    }
    const b = await body(ctx);
    if (!b || !product(ctx, b)) return;
    if (!eligible(ctx, phoneNumberId) || syncFault(ctx, phoneNumberId)) return;
    let subject: string;
    let description: string;
    let mode: JoinApprovalMode;
    try {
      subject = text(b, 'subject', GROUP_SUBJECT_MAX, true) as string;
      description = text(b, 'description', GROUP_DESCRIPTION_MAX, false) ?? '';
      mode = approvalMode(b.join_approval_mode);
    } catch (err) {
      if (!(err instanceof GroupProblem)) throw err;
      return fail(ctx, err.code, err.details, { to: phoneNumberId });
    }

    const fault = state.faults.take('whatsapp', phoneNumberId, ['group_create_hang', 'group_create_fail']);
    const creation: GroupCreation = {
      requestId: requestId(),
      phoneNumberId,
      subject,
      description,
      joinApprovalMode: mode,
      outcome: fault?.kind === 'group_create_hang' ? 'hanging' : 'pending',
      groupId: null,
      errorCode: null,
      at: new Date().toISOString(),
    };
    s.creations.set(creation.requestId, creation);
    state.log.info({ requestId: creation.requestId, phoneNumberId, fault: fault?.kind }, 'whatsapp group creation requested');
    ctx.body = { messaging_product: 'whatsapp', request_id: creation.requestId };
    if (fault?.kind === 'group_create_hang') return;

    state.life.spawn(`wa-group-create:${creation.requestId}`, async (gen) => {
      // A test that must see the creation pending holds it with a long createDelayMs and ends the wait
      // with /creations/{request_id}/complete, instead of racing a short delay.
      const completed = new Promise<boolean>((resolve) => s.completeNow.set(creation.requestId, () => resolve(true)));
      const waited = await Promise.race([gen.sleep(s.createDelayMs), completed]);
      s.completeNow.delete(creation.requestId);
      if (!waited || gen.aborted) return;
      if (fault?.kind === 'group_create_fail') {
        const code = fault.code ?? 131000;
        creation.outcome = 'failed';
        creation.errorCode = code;
        const item = groupItem('group_create', null, {
          request_id: creation.requestId,
          errors: [errorItem(code, fault.message ?? 'The group could not be created.')],
        });
        await postWebhook(state, phoneNumberId, 'group_lifecycle_update', { groups: [item] }, creation.requestId, { gen });
        return;
      }
      const group: SimGroup = {
        seq: ++s.seq,
        id: groupIdFor(phoneNumberId),
        phoneNumberId,
        requestId: creation.requestId,
        subject,
        description,
        joinApprovalMode: mode,
        inviteLink: '',
        revokedLinks: [],
        participants: new Map(),
        removed: new Set(),
        joinRequests: new Map(),
        pins: [],
        messages: [],
        suspended: false,
        deleted: false,
        createdAt: Date.now(),
      };
      setInviteLink(s, group);
      s.groups.set(group.id, group);
      creation.outcome = 'created';
      creation.groupId = group.id;
      const item = groupItem('group_create', group, {
        request_id: creation.requestId,
        subject,
        description,
        invite_link: group.inviteLink,
        join_approval_mode: mode,
      });
      await postWebhook(state, phoneNumberId, 'group_lifecycle_update', { groups: [item] }, group.id, { gen });
    });
  });

  r.get('/:phoneNumberId/groups', (ctx) => {
    if (!admitted(ctx)) return;
    const phoneNumberId = ctx.params.phoneNumberId ?? '';
    if (!eligible(ctx, phoneNumberId) || syncFault(ctx, phoneNumberId)) return;
    const p = limitAndAfter(ctx);
    if (!p) return;
    const mine = [...s.groups.values()].filter((g) => g.phoneNumberId === phoneNumberId && !g.deleted);
    const { shown, paging } = page(ctx, mine, p);
    ctx.body = {
      data: { groups: shown.map((g) => ({ id: g.id, subject: g.subject, created_at: unixSeconds(g.createdAt) })) },
      paging,
    };
  });

  r.get('/:groupId', async (ctx, next) => {
    const g = await groupOf(ctx, next);
    if (!g) return;
    const asked =
      typeof ctx.query.fields === 'string' && ctx.query.fields !== '' ? ctx.query.fields.split(',').map((f) => f.trim()) : INFO_FIELDS;
    const unknown = asked.find((f) => f !== 'id' && !INFO_FIELDS.includes(f));
    if (unknown) return fail(ctx, 100, `(#100) Tried accessing nonexisting field (${unknown}) on node type (WhatsAppGroup)`);
    const all: Record<string, unknown> = {
      subject: g.subject,
      description: g.description,
      participants: [...g.participants.values()].map((p) => ({ wa_id: p.waId })),
      join_approval_mode: g.joinApprovalMode,
      suspended: g.suspended,
      creation_timestamp: unixSeconds(g.createdAt),
      total_participant_count: g.participants.size,
    };
    ctx.body = { messaging_product: 'whatsapp', id: g.id, ...Object.fromEntries(asked.filter((f) => f !== 'id').map((f) => [f, all[f]])) };
  });

  r.post('/:groupId', async (ctx, next) => {
    const found = await groupWithBody(ctx, next);
    if (!found) return;
    const { g, b } = found;
    if (b.profile_picture_file !== undefined) return fail(ctx, 100, 'Param profile_picture_file is not supported by the simulator.');
    let subject: string | undefined;
    let description: string | undefined;
    try {
      subject = text(b, 'subject', GROUP_SUBJECT_MAX, false);
      description = text(b, 'description', GROUP_DESCRIPTION_MAX, false, 0);
    } catch (err) {
      if (!(err instanceof GroupProblem)) throw err;
      return fail(ctx, err.code, err.details, { to: g.id });
    }
    if (subject === undefined && description === undefined) return fail(ctx, 131008, "Parameter 'subject' or 'description' is required.");
    const item = groupItem('group_settings_update', g, {});
    if (subject !== undefined) {
      g.subject = subject;
      item.group_subject = { text: subject, update_successful: true };
    }
    if (description !== undefined) {
      g.description = description;
      item.group_description = { text: description, update_successful: true };
    }
    ctx.body = { success: true };
    later(state, g, 'group_settings_update', item);
  });

  r.delete('/:groupId', async (ctx, next) => {
    const g = await groupOf(ctx, next);
    if (!g) return;
    g.deleted = true;
    s.byLink.delete(g.inviteLink);
    const removed = [...g.participants.keys()];
    g.participants.clear();
    g.joinRequests.clear();
    ctx.body = { success: true };
    state.log.info({ groupId: g.id, removed: removed.length }, 'whatsapp group deleted');
    later(state, g, 'group_lifecycle_update', groupItem('group_delete', g, {}));
  });

  r.get('/:groupId/invite_link', async (ctx, next) => {
    const g = await groupOf(ctx, next);
    if (!g) return;
    ctx.body = { messaging_product: 'whatsapp', invite_link: g.inviteLink };
  });

  r.post('/:groupId/invite_link', async (ctx, next) => {
    const found = await groupWithBody(ctx, next);
    if (!found) return;
    const { g } = found;
    setInviteLink(s, g);
    ctx.body = { messaging_product: 'whatsapp', invite_link: g.inviteLink };
  });

  r.get('/:groupId/join_requests', async (ctx, next) => {
    const g = await groupOf(ctx, next);
    if (!g) return;
    const p = limitAndAfter(ctx);
    if (!p) return;
    const { shown, paging } = page(ctx, [...g.joinRequests.values()], p);
    ctx.body = {
      data: shown.map((jr) => ({ join_request_id: jr.id, wa_id: jr.waId, creation_timestamp: unixSeconds(jr.createdAt) })),
      paging,
    };
  });

  const joinRequestIds = (ctx: Context, b: Record<string, unknown>): string[] | null => {
    const list = b.join_requests;
    if (list === undefined) fail(ctx, 131008, "Parameter 'join_requests' is required.");
    else if (!Array.isArray(list) || list.some((x) => typeof x !== 'string' || x === '')) {
      fail(ctx, 100, 'Param join_requests must be an array of join request ids.');
    } else if (list.length < 1 || list.length > 100) fail(ctx, 131009, 'Param join_requests must have between 1 and 100 elements.');
    else return list as string[];
    return null;
  };
  /** 200 when every item succeeded, 206 + 131201 when some did, the first failure's error when none did. */
  const perItem = (ctx: Context, g: SimGroup, okKey: string, ok: unknown[], failedKey: string, failed: Array<Record<string, unknown>>) => {
    const lists = { [okKey]: ok, [failedKey]: failed };
    if (failed.length === 0) {
      ctx.body = { messaging_product: 'whatsapp', ...lists };
      return;
    }
    if (ok.length === 0) {
      const first = (failed[0].errors as Array<{ code: number; error_data: { details: string } }>)[0];
      return fail(ctx, first.code, first.error_data.details, { to: g.id, extra: { messaging_product: 'whatsapp', ...lists } });
    }
    ctx.status = 206;
    ctx.body = {
      messaging_product: 'whatsapp',
      ...lists,
      errors: [errorItem(131201, `${ok.length} of ${ok.length + failed.length} items succeeded.`)],
    };
  };

  r.post('/:groupId/join_requests', async (ctx, next) => {
    const found = await groupWithBody(ctx, next);
    if (!found) return;
    const { g, b } = found;
    const ids = joinRequestIds(ctx, b);
    if (!ids) return;
    const approved: string[] = [];
    const added: string[] = [];
    const failed: Array<Record<string, unknown>> = [];
    for (const id of ids) {
      const jr = g.joinRequests.get(id);
      if (!jr) {
        failed.push({ join_request_id: id, errors: [errorItem(131213, `Join request ${id} does not exist.`)] });
      } else if (g.participants.size >= GROUP_MAX_USERS) {
        failed.push({ join_request_id: id, errors: [errorItem(131204, `The group already has ${GROUP_MAX_PARTICIPANTS} participants.`)] });
      } else {
        g.joinRequests.delete(id);
        addParticipants(g, [jr.waId]);
        approved.push(id);
        added.push(jr.waId);
      }
    }
    perItem(ctx, g, 'approved_join_requests', approved, 'failed_join_requests', failed);
    if (added.length > 0) {
      later(
        state,
        g,
        'group_participants_update',
        groupItem('group_participants_add', g, { reason: 'invite_link', added_participants: added.map((wa_id) => ({ wa_id })) }),
      );
    }
  });

  r.delete('/:groupId/join_requests', async (ctx, next) => {
    const found = await groupWithBody(ctx, next);
    if (!found) return;
    const { g, b } = found;
    const ids = joinRequestIds(ctx, b);
    if (!ids) return;
    const rejected: string[] = [];
    const failed: Array<Record<string, unknown>> = [];
    for (const id of ids) {
      if (g.joinRequests.delete(id)) rejected.push(id);
      else failed.push({ join_request_id: id, errors: [errorItem(131213, `Join request ${id} does not exist.`)] });
    }
    perItem(ctx, g, 'rejected_join_requests', rejected, 'failed_join_requests', failed);
  });

  r.delete('/:groupId/participants', async (ctx, next) => {
    const found = await groupWithBody(ctx, next);
    if (!found) return;
    const { g, b } = found;
    const list = b.participants;
    if (list === undefined) return fail(ctx, 131008, "Parameter 'participants' is required.");
    if (!Array.isArray(list) || list.some((p) => !isObj(p) || typeof p.user !== 'string' || p.user === '')) {
      return fail(ctx, 100, 'Param participants must be an array of {user: "<phone number or wa_id>"}.');
    }
    if (list.length < 1 || list.length > GROUP_MAX_PARTICIPANTS) {
      return fail(ctx, 131009, `Param participants must have between 1 and ${GROUP_MAX_PARTICIPANTS} elements, got ${list.length}.`);
    }
    const removed: Array<{ input: string; wa_id: string }> = [];
    const failed: Array<Record<string, unknown>> = [];
    for (const p of list as Array<{ user: string }>) {
      const waId = digitsOf(p.user);
      if (removed.some((x) => x.wa_id === waId)) {
        failed.push({ input: p.user, errors: [errorItem(131202, `Participant ${p.user} appears more than once.`)] });
      } else if (!g.participants.delete(waId)) {
        failed.push({ input: p.user, errors: [errorItem(131212, `${p.user} is not a participant of the group.`)] });
      } else {
        g.removed.add(waId);
        removed.push({ input: p.user, wa_id: waId });
      }
    }
    perItem(ctx, g, 'removed_participants', removed, 'failed_participants', failed);
    if (removed.length > 0) {
      later(
        state,
        g,
        'group_participants_update',
        groupItem('group_participants_remove', g, { initiated_by: 'business', removed_participants: removed }),
      );
    }
  });

  // Sends to a group share the 1:1 messages path; anything that is not a group send goes on to whatsapp.ts.
  r.post('/:phoneNumberId/messages', async (ctx, next) => {
    const phoneNumberId = ctx.params.phoneNumberId ?? '';
    if (!authorised(ctx) || !versionOk(ctx) || !/^\d+$/.test(phoneNumberId)) return next();
    let b: unknown;
    try {
      b = await readJson(ctx);
    } catch (err) {
      if (err instanceof BodyError) return fail(ctx, 100, err.message);
      throw err;
    }
    if (!isObj(b) || b.recipient_type !== 'group') return next();
    await sendToGroup(ctx, phoneNumberId, b);
  });

  async function sendToGroup(ctx: Context, phoneNumberId: string, b: Record<string, unknown>): Promise<void> {
    if (!product(ctx, b)) return;
    if (!eligible(ctx, phoneNumberId)) return;
    const to = typeof b.to === 'string' ? b.to : '';
    if (to === '') return fail(ctx, 131008, "Parameter 'to' is required.");
    const g = s.groups.get(to);
    if (!g || g.deleted || g.phoneNumberId !== phoneNumberId) {
      return fail(ctx, 131041, `Group ${to} does not exist for phone number ${phoneNumberId}.`, { to });
    }
    if (syncFault(ctx, phoneNumberId)) return;
    if (g.suspended) return fail(ctx, 131207, `Group ${g.id} is suspended.`, { to });
    const type = typeof b.type === 'string' ? b.type : 'text';
    if (type === 'pin') return pin(ctx, g, b);
    if (!SENDABLE.has(type)) {
      return fail(ctx, 131051, `Messages of type ${type} cannot be sent to a group (text, media and templates only).`, { to });
    }
    // The content rules are the 1:1 ones; only the recipient differs.
    const check = validateMessage(
      { ...b, recipient_type: 'individual', to: '10000000' },
      {
        templates: state.config.templates,
        strictTemplates: state.config.strictTemplates,
        managed: (name, language) => managedTemplate(state, name, language),
      },
    );
    if (!check.ok) return fail(ctx, check.problem.code, check.problem.details, { to });
    if (check.msg.category === 'authentication') {
      return fail(ctx, 131009, 'Authentication templates cannot be sent to a group.', { to });
    }
    const record: GroupMessageRecord = {
      seq: state.nextSeq(),
      id: wamid(phoneNumberId),
      direction: 'outbound',
      from: null,
      type,
      payload: b,
      status: 'accepted',
      headers: headersOfInterest(ctx),
      at: new Date().toISOString(),
    };
    g.messages.push(record);
    state.log.info({ wamid: record.id, groupId: g.id, type }, 'whatsapp group message accepted');
    startGroupTimeline(state, g, record, check.msg.category);
    const message: Record<string, unknown> = { id: record.id };
    if (type === 'template') message.message_status = 'accepted';
    ctx.body = { messaging_product: 'whatsapp', messages: [message] };
  }

  function pin(ctx: Context, g: SimGroup, b: Record<string, unknown>): void {
    const p = b.pin;
    if (p === undefined) return fail(ctx, 131008, "Parameter 'pin' is required.");
    if (!isObj(p)) return fail(ctx, 100, 'Param pin must be a JSON object.');
    if (p.type !== 'pin' && p.type !== 'unpin') return fail(ctx, 131009, "Param pin.type must be 'pin' or 'unpin'.");
    if (typeof p.message_id !== 'string' || p.message_id === '') return fail(ctx, 131008, "Parameter 'pin.message_id' is required.");
    const messageId = p.message_id;
    if (!g.messages.some((m) => m.id === messageId)) {
      return fail(ctx, 131009, `Message ${messageId} is not a message of group ${g.id}.`, { to: g.id });
    }
    const pins = livePins(g);
    const at = pins.findIndex((x) => x.messageId === messageId);
    if (p.type === 'pin') {
      const days = p.expiration_days;
      if (days === undefined) return fail(ctx, 131008, "Parameter 'pin.expiration_days' is required to pin.");
      if (typeof days !== 'number' || !Number.isInteger(days) || days < 1 || days > 30) {
        return fail(ctx, 131009, 'Param pin.expiration_days must be an integer between 1 and 30.');
      }
      const now = Date.now();
      if (at >= 0) pins.splice(at, 1);
      // WhatsApp keeps three pins: a fourth pushes out the oldest.
      while (pins.length >= GROUP_MAX_PINS) pins.shift();
      pins.push({ messageId, pinnedAt: now, expiresAt: now + days * 86_400_000 });
    } else if (at >= 0) {
      pins.splice(at, 1);
    }
    ctx.body = { messaging_product: 'whatsapp', messages: [{ id: wamid(g.phoneNumberId) }] };
  }

  return r;
}

function text(b: Record<string, unknown>, key: string, max: number, required: boolean, min = 1): string | undefined {
  const v = b[key];
  if (v === undefined || v === null) {
    if (required) throw new GroupProblem(131008, `Parameter '${key}' is required.`);
    return undefined;
  }
  if (typeof v !== 'string') throw new GroupProblem(100, `Param ${key} must be a string.`);
  const trimmed = v.trim();
  const len = Array.from(trimmed).length;
  if (len < min || len > max) throw new GroupProblem(131009, `Param ${key} must be between ${min} and ${max} characters long, got ${len}.`);
  return trimmed;
}

function approvalMode(v: unknown): JoinApprovalMode {
  if (v === undefined || v === null) return 'auto_approve';
  if (!JOIN_APPROVAL_MODES.includes(v as JoinApprovalMode)) {
    throw new GroupProblem(131009, `Param join_approval_mode must be one of ${JOIN_APPROVAL_MODES.join(', ')}.`);
  }
  return v as JoinApprovalMode;
}

const PRICING: Record<string, string> = { marketing: 'group_marketing', utility: 'group_utility' };

/** sent once for the group; delivered and read for each participant, aggregated into one webhook per step. */
function startGroupTimeline(state: SimState, g: SimGroup, m: GroupMessageRecord, category: string): void {
  state.life.spawn(`wa-group-msg:${m.id}`, async (gen) => {
    const pricing = { billable: true, pricing_model: 'PMP', category: PRICING[category] ?? 'group_service', type: 'regular' };
    for (const status of ['sent', 'delivered', 'read']) {
      if (!(await gen.sleep(state.config.receiptDelayMs))) return;
      const participants = [...g.participants.keys()];
      if (status !== 'sent' && participants.length === 0) return;
      m.status = status;
      const base = { id: m.id, status, timestamp: unixSeconds(), recipient_id: g.id, recipient_type: 'group' };
      const statuses =
        status === 'sent' ? [{ ...base, pricing }] : participants.map((waId) => ({ ...base, recipient_participant_id: waId, pricing }));
      await postWebhook(state, g.phoneNumberId, 'messages', { statuses }, m.id, { kind: 'whatsapp.status', gen });
    }
  });
}

// --- Test controls (/_sim/whatsapp/groups/…) ---------------------------------------------------------

/**
 * GET  /                      groups {count, groups} (?phone_number_id=)
 * GET  /creations             creation requests {count, creations}: pending, created, failed, hanging
 * POST /creations/:requestId/complete  a pending creation ends its createDelayMs wait now (409 unless pending)
 * GET|POST /config            {createDelayMs, webhookDelayMs}
 * POST /eligibility           {phone_number_id, eligible}: false makes every group call of it 131215
 * POST /join                  {invite_link | group_id, from, name?}: a user opens the invite link
 * POST /join-requests         {invite_link | group_id, from}: a user asks to join (a request in any mode)
 * POST /join-requests/revoke  {group_id, join_request_id | from}: the user withdraws the request
 * POST /leave                 {group_id, from}: a participant leaves
 * POST /inbound               {group_id, from, text | type + <type>: {...}, name?, context?}: a participant writes
 * POST /suspend               {group_id, suspended}: group_status_update group_suspend / group_suspend_cleared
 * GET  /:groupId              one group as stored (participants, requests, pins, messages, links)
 * Controls that post a webhook answer after it was delivered (or its retries ran out): {…, webhook: {url, delivered, statusCode, attempts}}.
 * Faults go through /_sim/faults: {provider: 'whatsapp', kind: group_create_hang | group_create_fail | group_error, to?: phone-number id, code?, message?, count?}.
 */
export function groupsSimRouter(state: SimState): Router {
  const s = state.groups;
  const r = new Router({ prefix: '/_sim/whatsapp/groups' });
  const bad = (ctx: Context, error: string, status = 400, extra: Record<string, unknown> = {}): void => {
    ctx.status = status;
    ctx.body = { error, ...extra };
  };
  const input = async (ctx: Context): Promise<Record<string, unknown> | null> => {
    const b = await readJson(ctx);
    if (isObj(b)) return b;
    bad(ctx, 'body must be a JSON object');
    return null;
  };
  const urlOf = (b: Record<string, unknown>): string | null => (typeof b.url === 'string' ? b.url : null);
  /** The live group named by group_id (or invite_link when `byLink`); null = answered. */
  const target = (ctx: Context, b: Record<string, unknown>, byLink = false): SimGroup | null => {
    let id: string | undefined;
    if (byLink && typeof b.invite_link === 'string') {
      id = s.byLink.get(b.invite_link);
      if (!id) {
        const revoked = [...s.groups.values()].some((g) => g.revokedLinks.includes(b.invite_link as string));
        bad(ctx, revoked ? 'this invite link was reset and no longer works' : 'unknown invite link', revoked ? 410 : 404);
        return null;
      }
    } else if (typeof b.group_id === 'string') id = b.group_id;
    else {
      bad(ctx, byLink ? 'give invite_link or group_id' : 'group_id is required');
      return null;
    }
    const g = s.groups.get(id);
    if (!g || g.deleted) {
      bad(ctx, `no live group ${id}`, 404);
      return null;
    }
    return g;
  };
  const user = (ctx: Context, b: Record<string, unknown>): string | null => {
    const waId = typeof b.from === 'string' ? digitsOf(b.from) : '';
    if (waId.length < 8 || waId.length > 15) {
      bad(ctx, 'from must be a phone number with 8-15 digits');
      return null;
    }
    return waId;
  };
  const full = (ctx: Context, g: SimGroup): boolean => {
    if (g.participants.size < GROUP_MAX_USERS) return false;
    bad(ctx, `the group already has ${GROUP_MAX_PARTICIPANTS} participants (the business included)`, 409, { code: 131204 });
    return true;
  };
  const joinRequest = async (ctx: Context, g: SimGroup, waId: string, url: string | null): Promise<void> => {
    const existing = [...g.joinRequests.values()].find((x) => x.waId === waId);
    const jr = existing ?? { seq: ++s.seq, id: digits(16), waId, createdAt: Date.now() };
    g.joinRequests.set(jr.id, jr);
    const item = groupItem('group_join_request_created', g, { join_request_id: jr.id, wa_id: waId });
    const webhook = await postWebhook(state, g.phoneNumberId, 'group_participants_update', { groups: [item] }, g.id, { url });
    ctx.body = { outcome: 'join_requested', group_id: g.id, join_request_id: jr.id, wa_id: waId, webhook };
  };

  r.get('/', (ctx) => {
    const only = typeof ctx.query.phone_number_id === 'string' ? ctx.query.phone_number_id : null;
    const list = [...s.groups.values()].filter((g) => only === null || g.phoneNumberId === only).sort((a, b) => a.seq - b.seq);
    ctx.body = { count: list.length, groups: list.map(groupView) };
  });

  r.get('/creations', (ctx) => {
    const list = [...s.creations.values()];
    ctx.body = { count: list.length, creations: list };
  });

  r.post('/creations/:requestId/complete', (ctx) => {
    const creation = s.creations.get(ctx.params.requestId ?? '');
    if (!creation) return bad(ctx, `no creation request ${ctx.params.requestId}`, 404);
    const complete = s.completeNow.get(creation.requestId);
    if (creation.outcome !== 'pending' || !complete) return bad(ctx, `the creation is ${creation.outcome}, not pending`, 409);
    complete();
    ctx.status = 202;
    ctx.body = { requestId: creation.requestId, outcome: creation.outcome };
  });

  r.get('/config', (ctx) => {
    ctx.body = { createDelayMs: s.createDelayMs, webhookDelayMs: s.webhookDelayMs };
  });

  r.post('/config', async (ctx) => {
    const b = await input(ctx);
    if (!b) return;
    const errors: string[] = [];
    for (const key of ['createDelayMs', 'webhookDelayMs'] as const) {
      const v = b[key];
      if (v !== undefined && (typeof v !== 'number' || !Number.isFinite(v) || v < 0)) errors.push(`${key} must be a number ≥ 0`);
    }
    if (errors.length > 0) return bad(ctx, errors.join('; '));
    if (typeof b.createDelayMs === 'number') s.createDelayMs = b.createDelayMs;
    if (typeof b.webhookDelayMs === 'number') s.webhookDelayMs = b.webhookDelayMs;
    ctx.body = { createDelayMs: s.createDelayMs, webhookDelayMs: s.webhookDelayMs };
  });

  r.post('/eligibility', async (ctx) => {
    const b = await input(ctx);
    if (!b) return;
    const id = typeof b.phone_number_id === 'string' || typeof b.phone_number_id === 'number' ? String(b.phone_number_id) : '';
    if (!/^\d+$/.test(id)) return bad(ctx, 'phone_number_id must be the numeric phone-number id');
    if (typeof b.eligible !== 'boolean') return bad(ctx, 'eligible must be a boolean');
    if (b.eligible) s.ineligible.delete(id);
    else s.ineligible.add(id);
    ctx.body = { phone_number_id: id, eligible: !isIneligible(s, id) };
  });

  r.post('/join', async (ctx) => {
    const b = await input(ctx);
    if (!b) return;
    const g = target(ctx, b, true);
    if (!g) return;
    const waId = user(ctx, b);
    if (!waId) return;
    if (g.participants.has(waId)) return bad(ctx, `${waId} is already a participant`, 409, { code: 131202 });
    if (g.removed.has(waId)) return bad(ctx, `${waId} was removed by the business and cannot rejoin through the link`, 403);
    if (full(ctx, g)) return;
    if (g.joinApprovalMode === 'approval_required') return joinRequest(ctx, g, waId, urlOf(b));
    addParticipants(g, [waId]);
    const item = groupItem('group_participants_add', g, { reason: 'invite_link', added_participants: [{ wa_id: waId }] });
    const webhook = await postWebhook(state, g.phoneNumberId, 'group_participants_update', { groups: [item] }, g.id, { url: urlOf(b) });
    ctx.body = { outcome: 'joined', group_id: g.id, wa_id: waId, webhook };
  });

  r.post('/join-requests', async (ctx) => {
    const b = await input(ctx);
    if (!b) return;
    const g = target(ctx, b, true);
    if (!g) return;
    const waId = user(ctx, b);
    if (!waId) return;
    if (g.participants.has(waId)) return bad(ctx, `${waId} is already a participant`, 409, { code: 131202 });
    await joinRequest(ctx, g, waId, urlOf(b));
  });

  r.post('/join-requests/revoke', async (ctx) => {
    const b = await input(ctx);
    if (!b) return;
    const g = target(ctx, b);
    if (!g) return;
    const waId = typeof b.from === 'string' ? digitsOf(b.from) : null;
    const jr = [...g.joinRequests.values()].find((x) => x.id === b.join_request_id || (waId !== null && x.waId === waId));
    if (!jr) return bad(ctx, 'no such pending join request', 404);
    g.joinRequests.delete(jr.id);
    const item = groupItem('group_join_request_revoked', g, { join_request_id: jr.id, wa_id: jr.waId });
    const webhook = await postWebhook(state, g.phoneNumberId, 'group_participants_update', { groups: [item] }, g.id, { url: urlOf(b) });
    ctx.body = { outcome: 'revoked', group_id: g.id, join_request_id: jr.id, wa_id: jr.waId, webhook };
  });

  r.post('/leave', async (ctx) => {
    const b = await input(ctx);
    if (!b) return;
    const g = target(ctx, b);
    if (!g) return;
    const waId = user(ctx, b);
    if (!waId) return;
    if (!g.participants.delete(waId)) return bad(ctx, `${waId} is not a participant`, 409, { code: 131212 });
    const item = groupItem('group_participants_remove', g, { initiated_by: 'participant', removed_participants: [{ wa_id: waId }] });
    const webhook = await postWebhook(state, g.phoneNumberId, 'group_participants_update', { groups: [item] }, g.id, { url: urlOf(b) });
    ctx.body = { outcome: 'left', group_id: g.id, wa_id: waId, webhook };
  });

  r.post('/inbound', async (ctx) => {
    const b = await input(ctx);
    if (!b) return;
    const g = target(ctx, b);
    if (!g) return;
    const waId = user(ctx, b);
    if (!waId) return;
    if (!g.participants.has(waId)) return bad(ctx, `${waId} is not a participant of the group`, 409, { code: 131212 });
    const type = typeof b.type === 'string' ? b.type : b.text !== undefined ? 'text' : null;
    if (!type) return bad(ctx, 'give `text`, or `type` plus the content object under that key');
    let content: unknown = b[type];
    if (type === 'text') content = typeof b.text === 'string' ? { body: b.text } : b.text;
    if (!isObj(content)) return bad(ctx, `${type} content is missing`);
    const message: Record<string, unknown> = {
      from: waId,
      group_id: g.id,
      id: wamid(waId),
      timestamp: unixSeconds(),
      type,
      [type]: content,
    };
    if (b.context !== undefined) message.context = b.context;
    g.messages.push({
      seq: state.nextSeq(),
      id: message.id as string,
      direction: 'inbound',
      from: waId,
      type,
      payload: message,
      status: 'received',
      headers: null,
      at: new Date().toISOString(),
    });
    const name = typeof b.name === 'string' ? b.name : 'Simulated User';
    const webhook = await postWebhook(
      state,
      g.phoneNumberId,
      'messages',
      { contacts: [{ profile: { name }, wa_id: waId }], messages: [message] },
      message.id as string,
      { url: urlOf(b), kind: 'whatsapp.inbound' },
    );
    ctx.body = { wamid: message.id, group_id: g.id, message, webhook };
  });

  r.post('/suspend', async (ctx) => {
    const b = await input(ctx);
    if (!b) return;
    const g = target(ctx, b);
    if (!g) return;
    if (typeof b.suspended !== 'boolean') return bad(ctx, 'suspended must be a boolean');
    g.suspended = b.suspended;
    const item = groupItem(b.suspended ? 'group_suspend' : 'group_suspend_cleared', g, {});
    const webhook = await postWebhook(state, g.phoneNumberId, 'group_status_update', { groups: [item] }, g.id, { url: urlOf(b) });
    ctx.body = { group_id: g.id, suspended: g.suspended, webhook };
  });

  r.get('/:groupId', (ctx) => {
    const g = s.groups.get(ctx.params.groupId ?? '');
    if (!g) return bad(ctx, `no group ${ctx.params.groupId}`, 404);
    ctx.body = groupView(g);
  });

  return r;
}
