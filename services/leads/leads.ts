import type { EntityManager } from '@mikro-orm/postgresql';
import {
  CLOSED_STAGES,
  IDENTITY_PRECEDENCE,
  conversationCustomer,
  leadVisibleTo,
  normalChatId,
  normalEmail,
  normalLabel,
  sameLabel,
  stageMoveRefusal,
  type Identity,
  type IdentityKind,
  type LeadStage,
} from '../../domain/leads/index.js';
import { hasPermission } from '../../domain/account/index.js';
import { DomainError, conflict, forbidden, notFound, type FieldErrors } from '../platform/errors.js';
import { actorLabel, type RequestContext } from '../platform/context.js';
import { iso } from '../platform/time.js';
import { numericId } from '../platform/ids.js';
import { pageAnswer, pageOf } from '../platform/pagination.js';
import { accountCountry, userIdsOf } from '../account/index.js';
import { emitEvent, type EventKind } from '../webhooks/index.js';
import { isInternational, leadPhone } from './phones.js';
import {
  activityPage,
  addActivities,
  claimIdentities,
  deleteLeadRow,
  dropIdentity,
  identitiesOf,
  inLockOrder,
  insertLead,
  leadPage,
  leadRow,
  leadsNamedBy,
  lockLeads,
  moveLeadRecords,
  saveSettings,
  settingsOf,
  writeLead,
  type ActivityInput,
  type ActivityRecord,
  type AiAccess,
  type LeadFilter,
  type LeadRecord,
  type LeadValues,
} from './store.js';
import type { UpdateBody, UpsertBody } from './schemas.js';

// Leads (Endpoints > Leads; docs/leads.md). Every path first asks the account's leads settings (the
// module switched off by the operator: 403; an AI assistant beyond what the account allows:
// ai_not_allowed), then who the caller is: without leads.data.all a key sees its issuer's leads, the
// unassigned pool and those its issuer added, and anything else reads as not found. Each change,
// its timeline rows and its events (lead.*) are one transaction.

const ALL = 'leads.data.all';
const ASSIGN = 'leads.assign';

/** A refusal with one of the contract's lead reasons (invalid, reason_required, nothing_to_identify, assignee_unknown). */
const invalid = (errors: FieldErrors, reason = 'invalid') =>
  new DomainError('invalid', Object.values(errors)[0]?.[0] ?? 'The given data was invalid.', { errors, reason });

// ---- Who asks ----------------------------------------------------------------------------------

interface Caller {
  /** The person behind the credential (its issuer); null for the service itself and the operator. */
  userId: number | null;
  permissions: readonly string[] | null;
  /** Sees every lead of the account. */
  all: boolean;
  /** Comes through an AI assistant's door (an MCP connection or an OAuth client). */
  ai: boolean;
  label: string;
}

function callerOf(rc: RequestContext): Caller {
  const a = rc.actor;
  const issuer = a.kind === 'api_key' || a.kind === 'mcp_credential' || a.kind === 'oauth_client' ? a.issuer : null;
  const trusted = a.kind === 'system' || a.kind === 'operator';
  const permissions = issuer ? issuer.permissions : null;
  return {
    userId: issuer ? Number(issuer.id) : null,
    permissions,
    all: trusted || (permissions !== null && hasPermission(permissions, ALL)),
    ai: a.kind === 'mcp_credential' || a.kind === 'oauth_client',
    label: actorLabel(a),
  };
}

const may = (c: Caller, permission: string) => c.permissions === null || hasPermission(c.permissions, permission);

/** The module's switch and the account's AI rule, asked first on every path. */
async function admit(rc: RequestContext, write: boolean): Promise<Caller> {
  const c = callerOf(rc);
  const s = await settingsOf(rc.em, rc.account.id);
  if (!s.enabled) throw forbidden('The leads module is switched off for this account.', 'module_disabled');
  if (c.ai && (s.ai_access === 'none' || (write && s.ai_access === 'read')))
    throw forbidden(
      s.ai_access === 'none'
        ? 'This account does not let AI assistants work with leads.'
        : 'This account lets AI assistants read leads, not change them.',
      'ai_not_allowed',
    );
  return c;
}

const visible = (c: Caller, lead: Pick<LeadRecord, 'assignee_id' | 'added_by'>) =>
  c.all || (c.userId !== null && leadVisibleTo({ assignee_id: lead.assignee_id, added_by: lead.added_by }, c.userId));

/** A lead the caller can see, or 404 (another account's, one they cannot see, or none). */
async function seenLead(em: EntityManager, rc: RequestContext, c: Caller, ref: string | number, lock = false): Promise<LeadRecord> {
  const row = await leadRow(em, rc.account.id, numericId(ref, 'Lead'), lock);
  if (!row || !visible(c, row)) throw notFound('Lead');
  return row;
}

// ---- Presentation ------------------------------------------------------------------------------

function leadView(row: LeadRecord, identities: Identity[]) {
  return {
    id: Number(row.id),
    name: row.name,
    phone: row.phone,
    email: row.email,
    chat_id: row.chat_id,
    company: row.company,
    source: row.source,
    stage: row.stage,
    stage_reason: row.stage_reason,
    labels: row.labels,
    fields: row.fields,
    assignee_id: row.assignee_id === null ? null : Number(row.assignee_id),
    added_by: row.added_by === null ? null : Number(row.added_by),
    conversation_id: row.conversation_id,
    call_id: row.call_id,
    identities,
    merged_ids: row.merged_ids.map(Number),
    closed_at: iso(row.closed_at),
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
  };
}
export type LeadView = ReturnType<typeof leadView>;

/** A lead as writeLead answered it, its identities read by the same statement. */
const written = (saved: LeadRecord & { identities: Identity[] }) => leadView(saved, saved.identities);

async function present(em: EntityManager, accountId: number, row: LeadRecord): Promise<LeadView> {
  return leadView(row, (await identitiesOf(em, accountId, [Number(row.id)])).get(Number(row.id)) ?? []);
}

const activityView = (a: ActivityRecord) => ({
  id: Number(a.id),
  kind: a.kind,
  body: a.body,
  data: a.data,
  actor: a.actor,
  user_id: a.user_id === null ? null : Number(a.user_id),
  created_at: iso(a.created_at),
});

/** A lead event: the lead's fields flat, lead_id beside its id, and the kind's own fields after. */
const emitLead = (em: EntityManager, accountId: number, kind: EventKind, view: LeadView, extra: Record<string, unknown> = {}) =>
  emitEvent(em, accountId, kind, { lead_id: view.id, ...view, ...extra });

// ---- Input -------------------------------------------------------------------------------------

interface Named {
  ids: Identity[];
  phone: string | null;
  email: string | null;
  chatId: string | null;
}

/** The identities a request names, normalised; a malformed one is 422 (reason invalid), naming none is nothing_to_identify. */
async function identitiesIn(
  rc: RequestContext,
  body: {
    phone?: string | null;
    email?: string | null;
    chat_id?: string | null;
    conversation_id?: string;
    call_id?: string;
    country?: string;
  },
  required: boolean,
): Promise<Named> {
  const errors: FieldErrors = {};
  const ids: Identity[] = [];
  let country: string | null | undefined;
  const region = async () => (country ??= body.country ?? (await accountCountry(rc.em, rc.account.id)));
  const out: Named = { ids, phone: null, email: null, chatId: null };
  if (typeof body.phone === 'string') {
    // The account's country is read only for a number that needs it (one round trip fewer otherwise).
    const p = leadPhone(body.phone, isInternational(body.phone) ? undefined : await region());
    if ('problem' in p) errors.phone = [p.problem];
    else ids.push({ kind: 'phone', value: (out.phone = p.e164) });
  }
  if (typeof body.email === 'string') {
    const e = normalEmail(body.email);
    if (e === null) errors.email = ['Not an e-mail address.'];
    else ids.push({ kind: 'email', value: (out.email = e) });
  }
  if (typeof body.chat_id === 'string') {
    const c = normalChatId(body.chat_id);
    if (c === null) errors.chat_id = ['A chat id cannot be empty.'];
    else ids.push({ kind: 'chat_id', value: (out.chatId = c) });
  }
  if (body.conversation_id !== undefined) {
    const conversation = body.conversation_id.trim();
    const customer = conversationCustomer(conversation);
    if (!customer) errors.conversation_id = ['A conversation id is <channel>:<sender>:<customer>.'];
    else {
      ids.push({ kind: 'conversation', value: conversation });
      // The conversation's customer is the person: a phone number (WhatsApp, SMS), else the channel's own id.
      const p = leadPhone(customer, await region());
      const named =
        'e164' in p ? ({ kind: 'phone', value: p.e164 } as const) : ({ kind: 'chat_id', value: normalChatId(customer)! } as const);
      if (!ids.some((i) => i.kind === named.kind && i.value === named.value)) ids.push(named);
      if (named.kind === 'phone') out.phone ??= named.value;
      else out.chatId ??= named.value;
    }
  }
  if (body.call_id !== undefined) {
    const call = body.call_id.trim();
    if (call === '') errors.call_id = ['A call id cannot be empty.'];
    else ids.push({ kind: 'call', value: call });
  }
  if (Object.keys(errors).length) throw invalid(errors);
  if (required && !ids.length)
    throw invalid(
      { phone: ['Name the person: a phone number, an e-mail, a chat id, a conversation_id or a call_id.'] },
      'nothing_to_identify',
    );
  return out;
}

/** An assignee must be a user of the account; leads.assign is needed to set one. */
async function checkAssignee(rc: RequestContext, c: Caller, assigneeId: number | null) {
  if (!may(c, ASSIGN)) throw forbidden(`Assigning a lead requires the ${ASSIGN} permission.`, 'permission_denied');
  if (assigneeId !== null && !(await userIdsOf(rc.em, rc.account.id)).includes(assigneeId))
    throw invalid({ assignee_id: ['No user of this account has this id.'] }, 'assignee_unknown');
}

/** Labels added to a set: normalised, each once whatever its case; answers the set and those that were new. */
function withLabels(current: readonly string[], add: readonly string[]): { labels: string[]; added: string[] } {
  const labels = [...current];
  const added: string[] = [];
  for (const raw of add) {
    const l = normalLabel(raw);
    if (l === '' || labels.some((x) => sameLabel(x, l))) continue;
    labels.push(l);
    added.push(l);
  }
  if (labels.length > 100) throw invalid({ labels: ['A lead has at most 100 labels.'] });
  return { labels, added };
}

/** Custom properties merged: a key sent as null is removed. */
function withFields(current: Record<string, unknown>, sent: Record<string, unknown> | null | undefined) {
  if (!sent) return current;
  const out = { ...current };
  for (const [k, v] of Object.entries(sent)) {
    if (v === null) delete out[k];
    else out[k] = v;
  }
  if (Object.keys(out).length > 100) throw invalid({ fields: ['A lead has at most 100 custom properties.'] });
  return out;
}

function stageMove(from: LeadStage, to: LeadStage, reason: string | undefined) {
  const refused = stageMoveRefusal(from, to, reason);
  if (!refused) return;
  if (refused.reason === 'won_locked') throw new DomainError('conflict', refused.message, { reason: 'won_locked' });
  throw invalid({ reason: [refused.message] }, 'reason_required');
}

const valuesOf = (r: LeadRecord): LeadValues => ({
  name: r.name,
  phone: r.phone,
  email: r.email,
  chat_id: r.chat_id,
  company: r.company,
  source: r.source,
  stage: r.stage,
  stage_reason: r.stage_reason,
  labels: r.labels,
  fields: r.fields,
  assignee_id: r.assignee_id === null ? null : Number(r.assignee_id),
  conversation_id: r.conversation_id,
  call_id: r.call_id,
  closed_at: r.closed_at === null ? null : new Date(r.closed_at),
});

const closedAtFor = (from: LeadStage | null, to: LeadStage, current: Date | null) =>
  CLOSED_STAGES.includes(to) ? (from !== null && CLOSED_STAGES.includes(from) && current ? current : new Date()) : null;

/** Plain fields whose value changed, for lead.updated's `changes`. */
const PLAIN = ['name', 'phone', 'email', 'chat_id', 'company', 'source', 'fields', 'conversation_id', 'call_id'] as const;
const changedFields = (before: LeadValues, after: LeadValues) =>
  PLAIN.filter((k) => JSON.stringify(before[k]) !== JSON.stringify(after[k]));

// ---- Upsert ------------------------------------------------------------------------------------

/** A concurrent request took one of the person's identities first: run the upsert again, which now finds it. */
class TakenMeanwhile extends Error {}

const sqlState = (err: unknown) => {
  for (let e = err as { code?: unknown; cause?: unknown } | undefined, i = 0; e && i < 6; e = e.cause as typeof e, i++)
    if (typeof e.code === 'string') return e.code;
  return undefined;
};

/**
 * POST /leads: the person is found by any identity the request names; the lead found is updated,
 * else one is created. Concurrent upserts of one person meet on lead_identities' unique key: the
 * one that inserts second finds nothing inserted, rolls back and runs again, now finding the lead.
 */
export async function upsertLead(rc: RequestContext, body: UpsertBody) {
  const c = await admit(rc, true);
  const named = await identitiesIn(rc, body, true);
  if (body.assignee_id !== undefined) await checkAssignee(rc, c, body.assignee_id);
  for (let attempt = 1; ; attempt++) {
    try {
      return await rc.em.transactional((em) => upsertOnce(em, rc, c, body, named));
    } catch (err) {
      const again = err instanceof TakenMeanwhile || ['23505', '40001', '40P01'].includes(sqlState(err) ?? '');
      if (!again) throw err;
      if (attempt >= 10) throw conflict('The lead was changed by other requests at the same time; send it again.');
    }
  }
}

async function upsertOnce(em: EntityManager, rc: RequestContext, c: Caller, body: UpsertBody, named: Named) {
  const accountId = rc.account.id;
  const matches = await leadsNamedBy(em, accountId, named.ids);
  const labels = body.labels ?? [];
  const activity = (a: Omit<ActivityInput, 'actor' | 'userId'>): ActivityInput => ({ ...a, actor: c.label, userId: c.userId });

  if (!matches.length) {
    const stage = body.stage ?? 'new';
    stageMove('new', stage, body.reason);
    const values: LeadValues = {
      name: body.name ?? null,
      phone: named.phone,
      email: named.email,
      chat_id: named.chatId,
      company: body.company ?? null,
      source: body.source ?? null,
      stage,
      stage_reason: body.reason ?? null,
      labels: withLabels([], labels).labels,
      fields: withFields({}, body.fields as Record<string, unknown> | undefined),
      assignee_id: body.assignee_id ?? null,
      conversation_id: body.conversation_id?.trim() ?? null,
      call_id: body.call_id?.trim() ?? null,
      closed_at: closedAtFor(null, stage, null),
    };
    const row = await insertLead(em, accountId, c.userId, values);
    const id = Number(row.id);
    const claimed = await claimIdentities(em, accountId, id, named.ids);
    if (claimed.length < named.ids.length) throw new TakenMeanwhile();
    const acts = [activity({ kind: 'created', data: { stage, matched_by: null } })];
    if (body.note) acts.push(activity({ kind: 'note', body: body.note }));
    const [, note] = await addActivities(em, accountId, id, acts);
    const view = leadView(row, inLockOrder(named.ids));
    await emitLead(em, accountId, 'lead.created', view);
    if (note) await emitLead(em, accountId, 'lead.note_added', view, { note_id: Number(note.id), note: note.body });
    return { ...view, created: true, matched_by: null, duplicate_ids: [] };
  }

  // The lead the strongest identity names (e-mail first, as HubSpot users expect); the others are duplicates to merge.
  const rank = (k: IdentityKind) => IDENTITY_PRECEDENCE.indexOf(k);
  const best = [...matches].sort((a, b) => rank(a.kind) - rank(b.kind))[0]!;
  const row = await leadRow(em, accountId, best.lead_id, true);
  if (!row) throw new TakenMeanwhile(); // merged or deleted since the lookup
  if (!visible(c, row)) throw conflict('A lead for this person exists and is assigned to someone else.');
  const id = Number(row.id);
  const before = valuesOf(row);
  const after: LeadValues = { ...before, labels: [...before.labels] };
  if (body.name !== undefined) after.name = body.name;
  if (body.company !== undefined) after.company = body.company;
  if (body.source !== undefined) after.source = body.source;
  after.fields = withFields(before.fields, body.fields as Record<string, unknown> | undefined);
  // A new identity fills the lead's own field when it has none; it is kept as an identity either way.
  after.phone ??= named.phone;
  after.email ??= named.email;
  after.chat_id ??= named.chatId;
  if (body.conversation_id !== undefined) after.conversation_id = body.conversation_id.trim();
  if (body.call_id !== undefined) after.call_id = body.call_id.trim();
  const { labels: nextLabels, added } = withLabels(before.labels, labels);
  after.labels = nextLabels;
  if (body.stage !== undefined && body.stage !== before.stage) {
    stageMove(before.stage, body.stage, body.reason);
    after.stage = body.stage;
    after.stage_reason = body.reason ?? null;
    after.closed_at = closedAtFor(before.stage, body.stage, before.closed_at);
  }
  if (body.assignee_id !== undefined) after.assignee_id = body.assignee_id;

  const held = new Set(matches.filter((m) => m.lead_id === id).map((m) => `${m.kind}:${m.value}`));
  const unheld = named.ids.filter(
    (i) => !held.has(`${i.kind}:${i.value}`) && !matches.some((m) => m.kind === i.kind && m.value === i.value),
  );
  const claimed = await claimIdentities(em, accountId, id, unheld);
  const saved = await writeLead(em, accountId, id, after);
  const view = leadView(saved, saved.identities);
  await recordChanges(em, rc, c, before, after, view, { added, claimed: claimed.length, note: body.note, reason: body.reason });
  const others = [...new Set(matches.map((m) => m.lead_id).filter((l) => l !== id))];
  const duplicates = others.length ? (await visibleAmong(em, rc, c, others)).map((r) => Number(r.id)) : [];
  return { ...view, created: false, matched_by: best.kind, duplicate_ids: duplicates };
}

/** The leads among `ids` the caller can see (read without a lock: only their ids are answered). */
async function visibleAmong(em: EntityManager, rc: RequestContext, c: Caller, ids: number[]) {
  const rows = await Promise.all(ids.map((i) => leadRow(em, rc.account.id, i)));
  return rows.filter((r): r is LeadRecord => r !== null && visible(c, r));
}

/** The timeline rows and events of a change: updated, stage_changed, assigned, label_added, note_added. */
async function recordChanges(
  em: EntityManager,
  rc: RequestContext,
  c: Caller,
  before: LeadValues,
  after: LeadValues,
  view: LeadView,
  o: { added?: string[]; removed?: string[]; claimed?: number; note?: string; reason?: string },
) {
  const accountId = rc.account.id;
  const acts: ActivityInput[] = [];
  const events: [EventKind, Record<string, unknown>][] = [];
  // The timeline row keeps what changed; the event carries the lead as it is now and what it was before.
  const push = (kind: string, event: EventKind, data: Record<string, unknown>, extra: Record<string, unknown> = data) => {
    acts.push({ kind, data, actor: c.label, userId: c.userId });
    events.push([event, extra]);
  };
  const changes = changedFields(before, after);
  if (changes.length || o.claimed) push('updated', 'lead.updated', { changes });
  if (before.stage !== after.stage)
    push('stage_changed', 'lead.stage_changed', { from_stage: before.stage, to_stage: after.stage, reason: o.reason ?? null });
  if (before.assignee_id !== after.assignee_id)
    push(
      'assigned',
      'lead.assigned',
      { previous_assignee_id: before.assignee_id, assignee_id: after.assignee_id },
      { previous_assignee_id: before.assignee_id },
    );
  for (const label of o.added ?? []) push('label_added', 'lead.label_added', { label });
  for (const label of o.removed ?? []) push('label_removed', 'lead.label_removed', { label });
  if (o.note) acts.push({ kind: 'note', body: o.note, data: {}, actor: c.label, userId: c.userId });
  const rows = await addActivities(em, accountId, view.id, acts);
  for (const [kind, extra] of events) await emitLead(em, accountId, kind, view, extra);
  const note = o.note ? rows[rows.length - 1] : undefined;
  if (note) await emitLead(em, accountId, 'lead.note_added', view, { note_id: Number(note.id), note: note.body });
}

// ---- Reads -------------------------------------------------------------------------------------

export async function listLeads(
  rc: RequestContext,
  q: { stage?: LeadStage; assignee?: string; label?: string; q?: string; page?: number; per_page?: number; limit?: number },
) {
  const c = await admit(rc, false);
  const page = pageOf(q);
  const f: LeadFilter = { stage: q.stage, label: q.label, q: q.q };
  if (q.assignee === 'none') f.assignee = null;
  else if (q.assignee === 'me') f.assignee = c.userId ?? -1;
  else if (q.assignee !== undefined) f.assignee = Number(q.assignee);
  if (!c.all) f.visibleTo = c.userId ?? -1;
  const { total, rows } = await leadPage(rc.em, rc.account.id, f, page.perPage, page.offset);
  const ids = await identitiesOf(
    rc.em,
    rc.account.id,
    rows.map((r) => Number(r.id)),
  );
  return pageAnswer(
    'leads',
    rows.map((r) => leadView(r, ids.get(Number(r.id)) ?? [])),
    page,
    total,
  );
}

export async function getLead(rc: RequestContext, ref: string) {
  const c = await admit(rc, false);
  return present(rc.em, rc.account.id, await seenLead(rc.em, rc, c, ref));
}

export async function listLeadActivities(
  rc: RequestContext,
  ref: string,
  q: { kind?: string; page?: number; per_page?: number; limit?: number },
) {
  const c = await admit(rc, false);
  const lead = await seenLead(rc.em, rc, c, ref);
  const page = pageOf(q);
  const { total, rows } = await activityPage(rc.em, rc.account.id, Number(lead.id), q.kind, page.perPage, page.offset);
  return pageAnswer('activities', rows.map(activityView), page, total);
}

// ---- Changes -----------------------------------------------------------------------------------

/** One change of one lead: the lead locked, seen by the caller, changed, its timeline and events written, in one transaction. */
async function changeLead<T>(
  rc: RequestContext,
  ref: string,
  fn: (em: EntityManager, c: Caller, row: LeadRecord) => Promise<T>,
  write = true,
): Promise<T> {
  const c = await admit(rc, write);
  const id = numericId(ref, 'Lead');
  return rc.em.transactional(async (em) => fn(em, c, await seenLead(em, rc, c, id, true)));
}

export async function updateLead(rc: RequestContext, ref: string, body: UpdateBody) {
  // Identities are read before the transaction: a malformed one is refused with nothing locked.
  const named = await identitiesIn(rc, body, false);
  return changeLead(rc, ref, async (em, c, row) => {
    const accountId = rc.account.id;
    const id = Number(row.id);
    const before = valuesOf(row);
    const after: LeadValues = { ...before };
    if (body.name !== undefined) after.name = body.name;
    if (body.company !== undefined) after.company = body.company;
    if (body.source !== undefined) after.source = body.source;
    after.fields = withFields(before.fields, body.fields as Record<string, unknown> | undefined);
    if (body.stage !== undefined && body.stage !== before.stage) {
      stageMove(before.stage, body.stage, body.reason);
      after.stage = body.stage;
      after.stage_reason = body.reason ?? null;
      after.closed_at = closedAtFor(before.stage, body.stage, before.closed_at);
    }
    // A new phone, e-mail or chat id replaces the lead's own: the old one no longer finds it.
    let claimed = 0;
    for (const [field, kind, value] of [
      ['phone', 'phone', named.phone],
      ['email', 'email', named.email],
      ['chat_id', 'chat_id', named.chatId],
    ] as const) {
      if (body[field] === undefined) continue;
      const old = before[field];
      if (old === value) continue;
      if (old !== null) await dropIdentity(em, accountId, id, { kind, value: old });
      if (value !== null) {
        const got = await claimIdentities(em, accountId, id, [{ kind, value }]);
        if (!got.length) {
          const holder = await leadsNamedBy(em, accountId, [{ kind, value }]);
          if (holder.some((h) => h.lead_id !== id))
            throw new DomainError('conflict', `Another lead has this ${field.replace('_', ' ')}; merge the two leads instead.`, {
              reason: 'invalid',
            });
        }
        claimed += got.length;
      }
      after[field] = value;
    }
    const saved = await writeLead(em, accountId, id, after);
    const view = leadView(saved, saved.identities);
    await recordChanges(em, rc, c, before, after, view, { claimed, reason: body.reason });
    return view;
  });
}

export async function changeLeadStage(rc: RequestContext, ref: string, body: { stage: LeadStage; reason?: string }) {
  return changeLead(rc, ref, async (em, c, row) => {
    const before = valuesOf(row);
    if (body.stage === before.stage) return present(em, rc.account.id, row);
    stageMove(before.stage, body.stage, body.reason);
    const after: LeadValues = {
      ...before,
      stage: body.stage,
      stage_reason: body.reason ?? null,
      closed_at: closedAtFor(before.stage, body.stage, before.closed_at),
    };
    const view = written(await writeLead(em, rc.account.id, Number(row.id), after));
    await recordChanges(em, rc, c, before, after, view, { reason: body.reason });
    return view;
  });
}

export async function assignLead(rc: RequestContext, ref: string, body: { assignee_id: number | null }) {
  return changeLead(rc, ref, async (em, c, row) => {
    await checkAssignee(rc, c, body.assignee_id);
    const before = valuesOf(row);
    if (before.assignee_id === body.assignee_id) return present(em, rc.account.id, row);
    const after = { ...before, assignee_id: body.assignee_id };
    const view = written(await writeLead(em, rc.account.id, Number(row.id), after));
    await recordChanges(em, rc, c, before, after, view, {});
    return view;
  });
}

export async function addLeadLabels(rc: RequestContext, ref: string, body: { labels: string[] }) {
  return changeLead(rc, ref, async (em, c, row) => {
    const before = valuesOf(row);
    const { labels, added } = withLabels(before.labels, body.labels);
    if (!added.length) return present(em, rc.account.id, row);
    const after = { ...before, labels };
    const view = written(await writeLead(em, rc.account.id, Number(row.id), after));
    await recordChanges(em, rc, c, before, after, view, { added });
    return view;
  });
}

export async function removeLeadLabel(rc: RequestContext, ref: string, label: string) {
  return changeLead(rc, ref, async (em, c, row) => {
    const before = valuesOf(row);
    const gone = before.labels.filter((l) => sameLabel(l, normalLabel(label)));
    if (!gone.length) throw notFound('Label');
    const after = { ...before, labels: before.labels.filter((l) => !gone.includes(l)) };
    const view = written(await writeLead(em, rc.account.id, Number(row.id), after));
    await recordChanges(em, rc, c, before, after, view, { removed: gone });
    return view;
  });
}

export async function addLeadNote(rc: RequestContext, ref: string, body: { body: string }) {
  return changeLead(rc, ref, async (em, c, row) => {
    const [note] = await addActivities(em, rc.account.id, Number(row.id), [
      { kind: 'note', body: body.body, data: {}, actor: c.label, userId: c.userId },
    ]);
    // A note is part of the lead's life: the lead counts as changed (it rises in the list).
    const saved = await writeLead(em, rc.account.id, Number(row.id), valuesOf(row));
    await emitLead(em, rc.account.id, 'lead.note_added', written(saved), {
      note_id: Number(note!.id),
      note: note!.body,
    });
    return activityView(note!);
  });
}

export async function deleteLead(rc: RequestContext, ref: string) {
  return changeLead(rc, ref, async (em, _c, row) => {
    const view = await present(em, rc.account.id, row);
    await deleteLeadRow(em, rc.account.id, view.id);
    await emitLead(em, rc.account.id, 'lead.deleted', view);
    return { id: view.id, deleted: true as const };
  });
}

/**
 * Merges another lead into this one (HubSpot's merge: the primary keeps its values and timeline):
 * the other's identities, timeline and labels move here, its values fill what this one lacks, and
 * it is deleted (its id then answers 404; merged_ids remembers it).
 */
export async function mergeLeads(rc: RequestContext, ref: string, body: { lead_id: number }) {
  const c = await admit(rc, true);
  const primaryId = numericId(ref, 'Lead');
  const otherId = body.lead_id;
  return rc.em.transactional(async (em) => {
    const accountId = rc.account.id;
    const rows = await lockLeads(em, accountId, [primaryId, otherId]);
    const primary = rows.find((r) => Number(r.id) === primaryId);
    const other = rows.find((r) => Number(r.id) === otherId);
    if (!primary || !visible(c, primary)) throw notFound('Lead');
    if (otherId === primaryId) throw invalid({ lead_id: ['A lead cannot be merged into itself.'] });
    if (!other || !visible(c, other)) throw invalid({ lead_id: ['No lead of this account you can see has this id.'] });
    const before = valuesOf(primary);
    const o = valuesOf(other);
    const after: LeadValues = {
      ...before,
      name: before.name ?? o.name,
      phone: before.phone ?? o.phone,
      email: before.email ?? o.email,
      chat_id: before.chat_id ?? o.chat_id,
      company: before.company ?? o.company,
      source: before.source ?? o.source,
      conversation_id: before.conversation_id ?? o.conversation_id,
      call_id: before.call_id ?? o.call_id,
      assignee_id: before.assignee_id ?? o.assignee_id,
      fields: { ...o.fields, ...before.fields },
      labels: withLabels(before.labels, o.labels).labels,
    };
    await moveLeadRecords(em, accountId, otherId, primaryId);
    await deleteLeadRow(em, accountId, otherId);
    const merged = [...primary.merged_ids.map(Number), otherId, ...other.merged_ids.map(Number)];
    const saved = await writeLead(em, accountId, primaryId, { ...after, merged_ids: merged });
    await addActivities(em, accountId, primaryId, [
      { kind: 'merged', data: { merged_lead_id: otherId }, actor: c.label, userId: c.userId },
    ]);
    const view = written(saved);
    await emitLead(em, accountId, 'lead.merged', view, { merged_lead_id: otherId });
    return view;
  });
}

// ---- Settings ----------------------------------------------------------------------------------

const settingsView = (s: { enabled: boolean; ai_access: AiAccess; updated_at: string | null }) => ({
  enabled: s.enabled,
  ai_access: s.ai_access,
  updated_at: iso(s.updated_at),
});

export async function getLeadSettings(rc: RequestContext) {
  await admit(rc, false);
  return settingsView(await settingsOf(rc.em, rc.account.id));
}

export async function updateLeadSettings(rc: RequestContext, body: { ai_access?: AiAccess }) {
  await admit(rc, true);
  return settingsView(await saveSettings(rc.em, rc.account.id, body));
}

/** The operator's switch of the module (and the AI rule): the account's own keys cannot turn it back on. */
export async function setLeadModule(rc: RequestContext, body: { enabled?: boolean; ai_access?: AiAccess }) {
  return settingsView(await saveSettings(rc.em, rc.account.id, body));
}

export async function readLeadModule(rc: RequestContext) {
  return settingsView(await settingsOf(rc.em, rc.account.id));
}
