import type { EntityManager } from '@mikro-orm/postgresql';
import { sql } from 'kysely';
import { tablesOf, type Row } from '../../entities/database.js';
import type { EndReason, FlowDefinition } from '../../domain/flows/index.js';

// The flows family's statements: the only code that names flows, flow_sessions and
// flow_session_steps. Every read and write is scoped by the account.

const db = (em: EntityManager) => tablesOf(em, 'flows');
const json = <T>(v: T) => sql<T>`${JSON.stringify(v)}`;

export type FlowRow = Row<'flows', 'flows'>;
export type SessionRow = Row<'flows', 'flow_sessions'>;
export type StepRow = Row<'flows', 'flow_session_steps'>;

/**
 * The operator's load: a new flow at revision 1, or a new draft revision of the account's flow of
 * that name (status draft until published again; what is published stays as it was).
 */
export async function loadFlowDefinition(
  em: EntityManager,
  accountId: number,
  name: string,
  definition: FlowDefinition,
  commitMessage: string | null,
): Promise<FlowRow> {
  return db(em)
    .insertInto('flows')
    .values({
      account_id: accountId,
      name,
      status: 'draft',
      revision: 1,
      definition: json(definition as unknown as Record<string, unknown>),
      commit_message: commitMessage,
      created_at: sql`now()`,
      updated_at: sql`now()`,
    })
    .onConflict((oc) =>
      oc.columns(['account_id', 'name']).doUpdateSet({
        revision: sql`flows.revision + 1`,
        status: 'draft',
        definition: json(definition as unknown as Record<string, unknown>),
        commit_message: commitMessage,
        updated_at: sql`now()`,
      }),
    )
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function flowOfAccount(em: EntityManager, accountId: number, id: number): Promise<FlowRow | null> {
  return (await db(em).selectFrom('flows').selectAll().where('account_id', '=', accountId).where('id', '=', id).executeTakeFirst()) ?? null;
}

/** A page of the account's flows, newest first; the definitions are left out (as Studio's list does). */
export async function flowsPage(em: EntityManager, accountId: number, f: { status?: string }, page: { limit: number; offset: number }) {
  let q = db(em).selectFrom('flows').where('account_id', '=', accountId);
  if (f.status === 'draft' || f.status === 'published') q = q.where('status', '=', f.status);
  const count = await q.select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow();
  const rows = await q
    .select([
      'id',
      'account_id',
      'name',
      'status',
      'revision',
      'commit_message',
      'published_revision',
      'published_at',
      'created_at',
      'updated_at',
    ])
    .orderBy('id', 'desc')
    .limit(page.limit)
    .offset(page.offset)
    .execute();
  return { total: Number(count.n), rows };
}

/** Copies the draft to the published side when its revision is still `revision`; null when the draft moved meanwhile. */
export async function publishDraft(em: EntityManager, accountId: number, id: number, revision: number): Promise<FlowRow | null> {
  return (
    (await db(em)
      .updateTable('flows')
      .set({
        status: 'published',
        published_revision: sql`revision`,
        published_definition: sql`definition`,
        published_at: sql`now()`,
        updated_at: sql`now()`,
      })
      .where('account_id', '=', accountId)
      .where('id', '=', id)
      .where('revision', '=', revision)
      .returningAll()
      .executeTakeFirst()) ?? null
  );
}

export interface NewSession {
  uid: string;
  accountId: number;
  flowId: number;
  revision: number;
  customer: string;
  currentState: string;
  parameters: Record<string, unknown>;
}

/**
 * The session's row, active. Null when it was not written: its uid exists already (a retried
 * activity) or the customer has a live session in the account (the unique live_key).
 */
export async function insertSession(em: EntityManager, s: NewSession): Promise<SessionRow | null> {
  return (
    (await db(em)
      .insertInto('flow_sessions')
      .values({
        uid: s.uid,
        account_id: s.accountId,
        flow_id: s.flowId,
        revision: s.revision,
        customer: s.customer,
        live_key: s.customer,
        status: 'active',
        current_state: s.currentState,
        parameters: json(s.parameters),
        created_at: sql`now()`,
        updated_at: sql`now()`,
      })
      .onConflict((oc) => oc.doNothing())
      .returningAll()
      .executeTakeFirst()) ?? null
  );
}

export async function sessionOfAccount(em: EntityManager, accountId: number, uid: string): Promise<SessionRow | null> {
  return (
    (await db(em).selectFrom('flow_sessions').selectAll().where('account_id', '=', accountId).where('uid', '=', uid).executeTakeFirst()) ??
    null
  );
}

/** The customer's live session in the account, if any (a reply goes to it). */
export async function liveSessionOf(em: EntityManager, accountId: number, customer: string): Promise<SessionRow | null> {
  return (
    (await db(em)
      .selectFrom('flow_sessions')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('live_key', '=', customer)
      .executeTakeFirst()) ?? null
  );
}

/** A page of a flow's sessions, newest first. */
export async function sessionsPage(
  em: EntityManager,
  accountId: number,
  flowId: number,
  f: { status?: string; customer?: string },
  page: { limit: number; offset: number },
) {
  let q = db(em).selectFrom('flow_sessions').where('account_id', '=', accountId).where('flow_id', '=', flowId);
  if (f.status === 'active' || f.status === 'ended') q = q.where('status', '=', f.status);
  if (f.customer) q = q.where('customer', '=', f.customer);
  const count = await q.select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow();
  const rows = await q.selectAll().orderBy('created_at', 'desc').orderBy('uid', 'desc').limit(page.limit).offset(page.offset).execute();
  return { total: Number(count.n), rows };
}

/** Where an active session is now. */
export async function moveSession(em: EntityManager, accountId: number, uid: string, state: string): Promise<void> {
  await db(em)
    .updateTable('flow_sessions')
    .set({ current_state: state, updated_at: sql`now()` })
    .where('account_id', '=', accountId)
    .where('uid', '=', uid)
    .where('status', '=', 'active')
    .execute();
}

/** Ends an active session (its live key freed); null when it had ended already, so its end is written once. */
export async function endSessionRow(
  em: EntityManager,
  accountId: number,
  uid: string,
  reason: EndReason,
  error: string | null,
): Promise<SessionRow | null> {
  return (
    (await db(em)
      .updateTable('flow_sessions')
      .set({ status: 'ended', end_reason: reason, error, live_key: null, ended_at: sql`now()`, updated_at: sql`now()` })
      .where('account_id', '=', accountId)
      .where('uid', '=', uid)
      .where('status', '=', 'active')
      .returningAll()
      .executeTakeFirst()) ?? null
  );
}

export interface NewStep {
  sessionUid: string;
  seq: number;
  accountId: number;
  state: string;
  type: string;
  event: string | null;
  next: string | null;
  detail: Record<string, unknown>;
}

/** Records a step once (a retried activity writes nothing more). */
export async function insertStep(em: EntityManager, s: NewStep): Promise<void> {
  await db(em)
    .insertInto('flow_session_steps')
    .values({
      session_uid: s.sessionUid,
      seq: s.seq,
      account_id: s.accountId,
      state: s.state,
      type: s.type,
      event: s.event,
      next: s.next,
      detail: json(s.detail),
      created_at: sql`now()`,
    })
    .onConflict((oc) => oc.columns(['session_uid', 'seq']).doNothing())
    .execute();
}

export async function stepsOf(em: EntityManager, accountId: number, uid: string): Promise<StepRow[]> {
  return db(em)
    .selectFrom('flow_session_steps')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('session_uid', '=', uid)
    .orderBy('seq')
    .execute();
}
