import type { EntityManager } from '@mikro-orm/postgresql';
import { sql } from 'kysely';
import { tablesOf, type Row } from '../../entities/database.js';
import { IDENTITY_PRECEDENCE, type Identity, type IdentityKind, type LeadStage } from '../../domain/leads/index.js';

// The leads family's statements: the only code that names leads, lead_identities, lead_activities
// and lead_settings. A lead's writes run on its row locked for the transaction; the one statement
// that decides "one person, one lead" is the identities insert (ON CONFLICT DO NOTHING on the
// account's unique (kind, value)).

const db = (em: EntityManager) => tablesOf(em, 'leads');
const json = <T>(v: T) => sql<T>`${JSON.stringify(v)}`;

export type LeadRecord = Row<'leads', 'leads'>;
export type ActivityRecord = Row<'leads', 'lead_activities'>;
export type AiAccess = 'write' | 'read' | 'none';
export interface LeadSettingsRow {
  enabled: boolean;
  ai_access: AiAccess;
  updated_at: string | null;
}

// ---- Settings ----------------------------------------------------------------------------------

/** The account's leads settings; the defaults (on, AI may write) when it never changed them. */
export async function settingsOf(em: EntityManager, accountId: number): Promise<LeadSettingsRow> {
  const row = await db(em)
    .selectFrom('lead_settings')
    .select(['enabled', 'ai_access', 'updated_at'])
    .where('account_id', '=', accountId)
    .executeTakeFirst();
  return row ?? { enabled: true, ai_access: 'write', updated_at: null };
}

export async function saveSettings(em: EntityManager, accountId: number, set: { enabled?: boolean; ai_access?: AiAccess }) {
  const current = await settingsOf(em, accountId);
  const values = { enabled: set.enabled ?? current.enabled, ai_access: set.ai_access ?? current.ai_access };
  return db(em)
    .insertInto('lead_settings')
    .values({ account_id: accountId, ...values, created_at: sql`now()`, updated_at: sql`now()` })
    .onConflict((oc) => oc.column('account_id').doUpdateSet({ ...values, updated_at: sql`now()` }))
    .returning(['enabled', 'ai_access', 'updated_at'])
    .executeTakeFirstOrThrow();
}

// ---- Identities --------------------------------------------------------------------------------

/** The identities in the order every statement takes them (so two inserts never wait on each other crosswise). */
export const inLockOrder = (ids: readonly Identity[]) =>
  [...ids].sort((a, b) => IDENTITY_PRECEDENCE.indexOf(a.kind) - IDENTITY_PRECEDENCE.indexOf(b.kind) || a.value.localeCompare(b.value));

/** Which leads of the account the identities name now. */
export async function leadsNamedBy(em: EntityManager, accountId: number, ids: readonly Identity[]) {
  if (!ids.length) return [];
  const rows = await db(em)
    .selectFrom('lead_identities')
    .select(['kind', 'value', 'lead_id'])
    .where('account_id', '=', accountId)
    .where((eb) => eb.or(ids.map((i) => eb.and([eb('kind', '=', i.kind), eb('value', '=', i.value)]))))
    .execute();
  return rows.map((r) => ({ kind: r.kind as IdentityKind, value: r.value, lead_id: Number(r.lead_id) }));
}

/** Gives the lead the identities no lead of the account holds yet; answers those it got. */
export async function claimIdentities(em: EntityManager, accountId: number, leadId: number, ids: readonly Identity[]) {
  if (!ids.length) return [];
  const rows = await db(em)
    .insertInto('lead_identities')
    .values(inLockOrder(ids).map((i) => ({ account_id: accountId, kind: i.kind, value: i.value, lead_id: leadId, created_at: sql`now()` })))
    .onConflict((oc) => oc.columns(['account_id', 'kind', 'value']).doNothing())
    .returning(['kind', 'value'])
    .execute();
  return rows.map((r) => ({ kind: r.kind as IdentityKind, value: r.value }));
}

export async function dropIdentity(em: EntityManager, accountId: number, leadId: number, id: Identity) {
  await db(em)
    .deleteFrom('lead_identities')
    .where('account_id', '=', accountId)
    .where('lead_id', '=', leadId)
    .where('kind', '=', id.kind)
    .where('value', '=', id.value)
    .execute();
}

/** Each lead's identities, oldest first. */
export async function identitiesOf(em: EntityManager, accountId: number, leadIds: readonly number[]) {
  if (!leadIds.length) return new Map<number, Identity[]>();
  const rows = await db(em)
    .selectFrom('lead_identities')
    .select(['lead_id', 'kind', 'value'])
    .where('account_id', '=', accountId)
    .where('lead_id', 'in', [...leadIds])
    .orderBy('created_at')
    .orderBy('kind')
    .orderBy('value')
    .execute();
  const out = new Map<number, Identity[]>();
  for (const r of rows) {
    const list = out.get(Number(r.lead_id)) ?? [];
    list.push({ kind: r.kind as IdentityKind, value: r.value });
    out.set(Number(r.lead_id), list);
  }
  return out;
}

// ---- Leads -------------------------------------------------------------------------------------

export async function leadRow(em: EntityManager, accountId: number, id: number, lock = false): Promise<LeadRecord | null> {
  let q = db(em).selectFrom('leads').selectAll().where('account_id', '=', accountId).where('id', '=', id);
  if (lock) q = q.forUpdate();
  return (await q.executeTakeFirst()) ?? null;
}

/** Several leads locked for the transaction, in id order (two merges of the same pair never wait on each other crosswise). */
export async function lockLeads(em: EntityManager, accountId: number, ids: readonly number[]): Promise<LeadRecord[]> {
  return db(em)
    .selectFrom('leads')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('id', 'in', [...ids])
    .orderBy('id')
    .forUpdate()
    .execute();
}

export interface LeadValues {
  name: string | null;
  phone: string | null;
  email: string | null;
  chat_id: string | null;
  company: string | null;
  source: string | null;
  stage: LeadStage;
  stage_reason: string | null;
  labels: string[];
  fields: Record<string, unknown>;
  assignee_id: number | null;
  conversation_id: string | null;
  call_id: string | null;
  closed_at: Date | null;
}

export async function insertLead(em: EntityManager, accountId: number, addedBy: number | null, v: LeadValues): Promise<LeadRecord> {
  return db(em)
    .insertInto('leads')
    .values({
      account_id: accountId,
      ...v,
      labels: json(v.labels),
      fields: json(v.fields),
      added_by: addedBy,
      merged_ids: json([]),
      created_at: sql`now()`,
      updated_at: sql`now()`,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** A lead's identities as the statement that writes it reads them back (the order of identitiesOf). */
const identitiesJson = sql<Identity[]>`(select coalesce(jsonb_agg(jsonb_build_object('kind', i.kind, 'value', i.value)
  order by i.created_at, i.kind, i.value), '[]'::jsonb) from lead_identities i where i.lead_id = leads.id)`;

/**
 * Writes the lead's values (all of them, as read and changed by the service), moves updated_at, and
 * answers the lead with its identities (those this transaction added included): one round trip.
 */
export async function writeLead(
  em: EntityManager,
  accountId: number,
  id: number,
  v: LeadValues & { merged_ids?: number[] },
): Promise<LeadRecord & { identities: Identity[] }> {
  const { merged_ids, ...rest } = v;
  return db(em)
    .updateTable('leads')
    .set({
      ...rest,
      labels: json(v.labels),
      fields: json(v.fields),
      ...(merged_ids ? { merged_ids: json(merged_ids) } : {}),
      updated_at: sql`now()`,
    })
    .where('account_id', '=', accountId)
    .where('id', '=', id)
    .returningAll()
    .returning(identitiesJson.as('identities'))
    .executeTakeFirstOrThrow();
}

export async function deleteLeadRow(em: EntityManager, accountId: number, id: number) {
  await db(em).deleteFrom('leads').where('account_id', '=', accountId).where('id', '=', id).execute();
}

/** Moves a merged lead's identities and timeline to the lead it was merged into. */
export async function moveLeadRecords(em: EntityManager, accountId: number, from: number, to: number) {
  await db(em)
    .updateTable('lead_identities')
    .set({ lead_id: to })
    .where('account_id', '=', accountId)
    .where('lead_id', '=', from)
    .execute();
  await db(em)
    .updateTable('lead_activities')
    .set({ lead_id: to })
    .where('account_id', '=', accountId)
    .where('lead_id', '=', from)
    .execute();
}

export interface LeadFilter {
  stage?: LeadStage;
  /** A user id, or null for the unassigned pool. */
  assignee?: number | null;
  label?: string;
  q?: string;
  /** Without leads.data.all: the leads this user sees (theirs, the unassigned pool, those they added). */
  visibleTo?: number;
}

/** A LIKE pattern matching the text anywhere, its own % and _ taken literally. */
const containing = (text: string) => `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

function filtered(em: EntityManager, accountId: number, f: LeadFilter) {
  let q = db(em).selectFrom('leads').where('account_id', '=', accountId);
  if (f.stage !== undefined) q = q.where('stage', '=', f.stage);
  if (f.assignee !== undefined) q = f.assignee === null ? q.where('assignee_id', 'is', null) : q.where('assignee_id', '=', f.assignee);
  if (f.label !== undefined) {
    const label = f.label;
    q = q.where(sql<boolean>`exists (select 1 from jsonb_array_elements_text(labels) l where lower(l) = lower(${label}))`);
  }
  if (f.q !== undefined) {
    const like = containing(f.q);
    q = q.where((eb) =>
      eb.or([eb('name', 'ilike', like), eb('email', 'ilike', like), eb('phone', 'ilike', like), eb('company', 'ilike', like)]),
    );
  }
  if (f.visibleTo !== undefined) {
    const u = f.visibleTo;
    q = q.where((eb) => eb.or([eb('assignee_id', 'is', null), eb('assignee_id', '=', u), eb('added_by', '=', u)]));
  }
  return q;
}

/** How many leads the filter keeps, and one page of them, most recently changed first. */
export async function leadPage(em: EntityManager, accountId: number, f: LeadFilter, limit: number, offset: number) {
  const [{ n }, rows] = await Promise.all([
    filtered(em, accountId, f)
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .executeTakeFirstOrThrow(),
    filtered(em, accountId, f).selectAll().orderBy('updated_at', 'desc').orderBy('id', 'desc').limit(limit).offset(offset).execute(),
  ]);
  return { total: Number(n), rows };
}

// ---- Timeline ----------------------------------------------------------------------------------

export interface ActivityInput {
  kind: string;
  body?: string | null;
  data?: Record<string, unknown>;
  actor: string;
  userId: number | null;
}

export async function addActivities(em: EntityManager, accountId: number, leadId: number, list: readonly ActivityInput[]) {
  if (!list.length) return [];
  return db(em)
    .insertInto('lead_activities')
    .values(
      list.map((a) => ({
        account_id: accountId,
        lead_id: leadId,
        kind: a.kind,
        body: a.body ?? null,
        data: json(a.data ?? {}),
        actor: a.actor,
        user_id: a.userId,
        created_at: sql`now()`,
      })),
    )
    .returningAll()
    .execute();
}

/** One page of a lead's timeline, newest first (a kind given: only those, e.g. its notes). */
export async function activityPage(
  em: EntityManager,
  accountId: number,
  leadId: number,
  kind: string | undefined,
  limit: number,
  offset: number,
) {
  let q = db(em).selectFrom('lead_activities').where('account_id', '=', accountId).where('lead_id', '=', leadId);
  if (kind !== undefined) q = q.where('kind', '=', kind);
  const [{ n }, rows] = await Promise.all([
    q.select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow(),
    q.selectAll().orderBy('id', 'desc').limit(limit).offset(offset).execute(),
  ]);
  return { total: Number(n), rows };
}
